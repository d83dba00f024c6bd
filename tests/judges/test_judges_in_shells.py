"""Judge, rubric and label-free rewards through the shells: the HTTP server (a real socket) and TRL."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import pytest

from rewardlab import Status
from rewardlab.compose import build

pytestmark = pytest.mark.network


@contextlib.contextmanager
def _uvicorn(app: object) -> Iterator[str]:
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    live = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))  # type: ignore[arg-type]
    thread = threading.Thread(target=live.run, daemon=True)
    thread.start()
    started = threading.Event()
    while not live.started and thread.is_alive():
        started.wait(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        live.should_exit = True
        thread.join(20)


def _spec(server_url: str) -> dict:
    judge = {"base_url": server_url, "model": "m", "backoff": 0.01}
    rubric = {"criteria": [{"name": "tagged", "kind": "gate", "use": "format.tags", "params": {"tags": ["answer"], "strict": False}},
                           {"name": "clear", "judge": "Is it clear?", "grade": "score_1_10"}], "judge": judge}  # fmt: skip
    return {"reward": {"name": "judged", "components": [
        {"name": "rubric", "use": "judge.rubric", "params": rubric},
        {"name": "vs", "use": "judge.pairwise", "params": judge, "on_error": "skip"},
    ]}}  # fmt: skip


def test_rubric_and_pairwise_through_the_http_server(server):
    from rewardlab.serve.app import create_app
    from rewardlab.serve.client import Client
    from rewardlab.serve.settings import ServeSettings

    app = create_app({"judged": build(_spec(server.base_url))}, None, ServeSettings(workers=0))
    with _uvicorn(app) as url:
        rows = [{"prompt": "q", "response": "<answer>GOOD</answer>", "meta": {"baseline": "BAD"}}, {"prompt": "q", "response": "untagged GOOD"}]
        results = Client(url).score("judged", rows)
    # the judge rates GOOD [[9]] (8/9 on [0, 1]) and prefers it to BAD in both orders
    assert results[0].components["rubric"].score == pytest.approx(8 / 9) and results[0].components["vs"].score == 1.0
    assert results[0].components["rubric"].components["clear"].score == pytest.approx(8 / 9)
    assert results[1].components["rubric"].score == 0.0 and results[1].components["vs"].status is Status.ERROR


def test_majority_vote_and_rubric_as_a_trl_reward(server):
    from rewardlab.integrations.trl import as_trl_reward

    spec = {"reward": {"name": "ttrl", "components": [
        {"name": "vote", "use": "labelfree.majority_vote", "params": {"group_by": "prompt", "min_group": 3}}]}}  # fmt: skip
    f = as_trl_reward(spec)
    completions = ["\\boxed{4}", "\\boxed{4}", "\\boxed{5}", "\\boxed{1}", "\\boxed{1}", "\\boxed{1}"]
    assert f(prompts=["2+2?"] * 3 + ["1*1?"] * 3, completions=completions) == [1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    rubric = as_trl_reward(_spec(server.base_url))
    scores = rubric(prompts=["q"], completions=["<answer>GOOD</answer>"], baseline=["BAD"])
    assert scores == [pytest.approx(8 / 9 + 1.0)]  # the spec sums its components (weights 1)


def test_rubric_and_pairwise_through_score_file_in_worker_processes(server, tmp_path):
    import json

    from rewardlab.runner.score import ScoreFileOptions, score_file

    rows = [{"prompt": "q", "response": "<answer>GOOD</answer>", "meta": {"baseline": "BAD"}}, {"prompt": "q", "response": "untagged"}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = score_file(_spec(server.base_url), source, tmp_path / "out.jsonl", ScoreFileOptions(workers=2, timeout=60))
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert summary.rows == 2 and len(out) == 2
    assert out[0]["reward/rubric"] == pytest.approx(8 / 9) and out[0]["reward/vs"] == 1.0
    assert out[0]["reward_info"]["vs"]["verdicts"] == ["A", "B"] and out[0]["reward_info"]["rubric"]["passed"] == ["tagged", "clear"]
    assert out[1]["reward/rubric"] == 0.0 and out[1]["reward_info"]["vs"]["status"] == "error"  # no baseline: skipped by on_error
