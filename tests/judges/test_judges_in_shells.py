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


# -- the "done when", end to end: group rewards with a judge, and a dead endpoint -----

DEAD = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "retries": 0, "timeout": 2}


def _group_spec(server_url: str) -> dict:
    """An adaptive judge rubric (a group reward: weights from the spread within the group) and
    a majority vote, in one spec."""
    judge = {"base_url": server_url, "model": "m", "backoff": 0.01}
    rubric = {"adaptive": True, "judge": judge, "criteria": [
        {"name": "tagged", "use": "format.tags", "params": {"tags": ["answer"], "strict": False}},
        {"name": "clear", "judge": "Is it clear?", "grade": "score_1_10"}]}  # fmt: skip
    return {"reward": {"name": "grouped", "components": [
        {"name": "rubric", "use": "judge.rubric", "params": rubric},
        {"name": "vote", "use": "labelfree.majority_vote", "params": {"min_group": 3, "answer_key": "ans"}},
    ]}}  # fmt: skip


def _group_rows(interleave: bool) -> list[dict]:
    texts = ["<answer>GOOD</answer>", "GOOD", "<answer>BAD</answer>", "BAD"]
    answers = [["1", "1", "2", "1"], ["3", "4", "4", "4"]]
    rows = [[{"prompt": f"q{g}", "response": t, "group": f"g{g}", "meta": {"ans": a}} for t, a in zip(texts, answers[g], strict=True)] for g in range(2)]
    return [rows[g][k] for k in range(4) for g in range(2)] if interleave else rows[0] + rows[1]


def _expected(spec: dict, rows: list[dict]) -> list[float | None]:
    from rewardlab import Sample

    return [r.score for r in build(spec).score_batch([Sample.from_dict(x) for x in rows])]


def test_group_judge_rewards_give_the_one_batch_result_through_runner_server_and_trl(server, tmp_path):
    import json

    from rewardlab.integrations.trl import as_trl_reward
    from rewardlab.runner.score import ScoreFileOptions, score_file
    from rewardlab.serve.app import create_app
    from rewardlab.serve.remote import RemoteExecutor
    from rewardlab.serve.settings import ServeSettings

    spec = _group_spec(server.base_url)
    rows = _group_rows(interleave=True)
    expected = _expected(spec, rows)
    assert len(set(expected)) > 2  # the rubric's adaptive weights and the vote both vary
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))

    summary = score_file(spec, source, tmp_path / "pool.jsonl", ScoreFileOptions(workers=2, chunk_size=1, timeout=60))
    pool = [json.loads(line)["reward"] for line in (tmp_path / "pool.jsonl").read_text().splitlines()]
    assert summary.rows == 8 and pool == pytest.approx(expected)

    app = create_app({"grouped": build(spec)}, None, ServeSettings(workers=2, max_batch=2))
    with _uvicorn(app) as url:
        executor = RemoteExecutor(url, "grouped", batch_size=3)
        try:
            opts = ScoreFileOptions(record_every=3, run_store=tmp_path / "runs.sqlite")
            score_file("grouped", source, tmp_path / "served.jsonl", opts, executor=executor, spec_hash=executor.spec_hash())
        finally:
            executor.close()
    served = [json.loads(line)["reward"] for line in (tmp_path / "served.jsonl").read_text().splitlines()]
    assert served == pytest.approx(expected)

    contiguous = _group_rows(interleave=False)  # TRL's layout: a prompt's completions in a row
    trl = as_trl_reward(spec, num_generations=4)
    scores = trl(prompts=[r["prompt"] for r in contiguous], completions=[r["response"] for r in contiguous], ans=[r["meta"]["ans"] for r in contiguous])
    assert scores == pytest.approx(_expected(spec, contiguous))


def test_dead_judge_endpoint_gives_error_rows_counted_by_the_runner_the_server_and_trl(tmp_path):
    import json

    from rewardlab.integrations.trl import as_trl_reward
    from rewardlab.runner.score import ScoreFileOptions, score_file
    from rewardlab.serve.app import create_app
    from rewardlab.serve.client import Client
    from rewardlab.serve.settings import ServeSettings

    spec = {"reward": {"name": "dead", "components": [
        {"name": "judge", "use": "judge.llm", "params": DEAD},
        {"name": "rubric", "use": "judge.rubric", "params": {"judge": DEAD, "criteria": [{"name": "clear", "judge": "Is it clear?"}]}, "on_error": "skip"},
    ]}}  # fmt: skip
    rows = [{"prompt": "q", "response": f"GOOD {i}"} for i in range(3)]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))

    summary = score_file(spec, source, tmp_path / "out.jsonl", ScoreFileOptions(workers=2, timeout=60)).to_dict()
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(o["reward"], o["reward_status"], o["reward_error_kind"]) for o in out] == [(None, "error", "component")] * 3
    assert summary["total"]["errors"] == {"component": 3} and summary["components"]["judge"]["errors"] == {"remote": 3}
    assert summary["components"]["rubric"]["errors"] == {"component": 3}

    app = create_app({"dead": build(spec)}, None, ServeSettings(workers=2))
    with _uvicorn(app) as url, Client(url) as client:
        results = client.score("dead", rows)
        metrics = client.request("GET", "/metrics").text
    assert all(r.status is Status.ERROR and r.score is None and r.components["judge"].error.kind == "remote" for r in results)
    assert 'rewardlab_errors_total{component="judge",kind="remote",reward="dead"} 3.0' in metrics

    logged: dict[str, float] = {}
    trl = as_trl_reward(spec)
    assert trl(prompts=["q"] * 3, completions=[r["response"] for r in rows], log_metric=logged.__setitem__) == [None] * 3
    assert logged["rewardlab/error_rate"] == 1.0 and logged["rewardlab/judge/error_rate"] == 1.0
