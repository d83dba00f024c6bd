"""`rewardlab math check` / `rewardlab math extract`, run in-process through `main(argv)`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardlab.cli.main import main


def _last_json(out: str) -> dict[str, object]:
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_check_equivalent_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "check", "\\frac{1}{2}", "0.5"]) == 0
    verdict = _last_json(capsys.readouterr().out)
    assert verdict["outcome"] == "equivalent" and verdict["method"] == "number"


def test_check_not_equivalent_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "check", "0.0000001", "0.0000002"]) == 1
    assert _last_json(capsys.readouterr().out)["outcome"] == "not_equivalent"


def test_check_undecided_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "check", "5", "9^9^9^9"]) == 3
    verdict = _last_json(capsys.readouterr().out)
    assert verdict["error_kind"] == "unsupported" and "power tower" in str(verdict["reason"])


def test_extract_from_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    response = tmp_path / "r.txt"
    response.write_text("so the answer is $\\boxed{\\frac{3}{4}}$.")
    assert main(["math", "extract", str(response)]) == 0
    assert _last_json(capsys.readouterr().out) == {"answer": "\\frac{3}{4}", "source": "boxed"}
    response.write_text("the final answer is 7")
    assert main(["math", "extract", str(response), "--strict"]) == 1


def test_extract_shows_the_candidates_of_a_hedge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    response = tmp_path / "r.txt"
    response.write_text("the answer is \\boxed{8} or \\boxed{9}")
    assert main(["math", "extract", str(response)]) == 0
    assert _last_json(capsys.readouterr().out) == {"answer": "9", "source": "boxed", "candidates": ["8", "9"]}
