"""Progress bars of `rewardlab select` (pick and curves scoring with --reward, search over a real
HTTP server), forced on with `--progress`, and none with `--no-progress`."""

from __future__ import annotations

import json
import re

import pytest
from completions_server import CompletionsServer

from rewardlab.cli.main import main

DIGIT_SPEC = '[reward]\nname = "digit"\n[[reward.components]]\nname = "digit"\nuse = "text.regex"\nparams = { pattern = "[2]" }\n'
PRM_SPEC = '[reward]\nname = "works"\n[[reward.components]]\nname = "work"\nuse = "text.regex"\nparams = { pattern = "part|answer" }\n'
BAR = re.compile(r"(\d+)/(\d+)\s")


def _last_bar(err: str) -> tuple[int, int]:
    found = BAR.findall(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", err))
    assert found, f"no progress bar on stderr: {err!r}"
    return int(found[-1][0]), int(found[-1][1])


def _candidates(tmp_path):
    rows = [{"question": f"{i}?", "gt": "2", "code": ["so \\boxed{3}", "so \\boxed{2}", "no"], "pred": ["3", "2", "x"],
             "score": [False, True, False]} for i in range(4)]  # fmt: skip
    data = tmp_path / "c.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = tmp_path / "digit.toml"
    spec.write_text(DIGIT_SPEC)
    return data, spec


@pytest.mark.parametrize("command", ["pick", "curves"])
def test_scoring_with_a_reward_shows_a_bar_over_every_candidate(tmp_path, capsys, command):
    data, spec = _candidates(tmp_path)
    out = tmp_path / ("picks.jsonl" if command == "pick" else "curves")
    argv = ["select", command, str(data), "-o", str(out), "--reward", str(spec), "--scores", "", "--equivalence", "exact"]
    argv += ["--method", "best_of_n"] if command == "pick" else ["--methods", "best_of_n"]
    assert main([*argv, "--progress"]) == 0
    err = capsys.readouterr().err
    assert "scoring candidates with digit" in err and _last_bar(err.split("curves of")[0]) == (12, 12)
    assert main([*argv, "--no-progress"]) == 0
    assert not BAR.search(capsys.readouterr().err)


def test_search_shows_a_bar_over_the_problems(tmp_path, capsys):
    data = tmp_path / "problems.jsonl"
    data.write_text("".join(json.dumps({"question": f"What is {i} + 2?", "gt": "4"}) + "\n" for i in range(3)))
    spec = tmp_path / "prm.toml"
    spec.write_text(PRM_SPEC)
    with CompletionsServer() as server:
        argv = ["select", "search", str(data), "--base-url", server.base_url, "--model", "fake-model", "-o", str(tmp_path / "o.jsonl"),
                "--reward", str(spec), "--width", "2", "--expand", "2", "--retries", "0"]  # fmt: skip
        assert main([*argv, "--progress"]) == 0
        assert _last_bar(capsys.readouterr().err) == (3, 3)
        assert main([*argv, "--no-progress"]) == 0
        assert not BAR.search(capsys.readouterr().err)
