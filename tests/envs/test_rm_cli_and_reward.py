"""`rm.trace` registry reward and the `rewardlab rm` CLI group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardlab.core import Sample, Status, registry
from rewardlab.envs.officeworld import OFFICE_TASKS

pytest.importorskip("typer")


@pytest.fixture
def coffee_txt(tmp_path: Path) -> Path:
    path = tmp_path / "t1.txt"
    path.write_text(OFFICE_TASKS["coffee"])
    return path


def test_rm_trace_reward_scores_traces(coffee_txt: Path) -> None:
    reward = registry.create("rm.trace", {"machine": str(coffee_txt)})
    ok = reward.score(Sample(prompt="", response=json.dumps([[], ["f"], [], ["g"]])))
    assert ok.status is Status.OK and ok.score == 1.0 and ok.info["accepted"] and ok.steps == (0.0, 0.0, 0.0, 1.0)
    failed = reward.score(Sample(prompt="", response=json.dumps([["f"], ["n"]])))
    assert failed.score == 0.0 and failed.info["rejected"]
    legacy = registry.create("rm.trace", {"machine": str(coffee_txt), "legacy_fall_off_reward": True})
    assert legacy.score(Sample(prompt="", response=json.dumps([["f"], ["n"]]))).score == 1.0


@pytest.mark.parametrize(("response", "kind"), [("not json", "parse"), ('{"a": 1}', "invalid_input"), ("[[1, 2]]", "invalid_input")])
def test_rm_trace_bad_traces_are_errors_not_zero(coffee_txt: Path, response: str, kind: str) -> None:
    result = registry.create("rm.trace", {"machine": str(coffee_txt)}).score(Sample(prompt="", response=response))
    assert result.status is Status.ERROR and result.error is not None and result.error.kind.value == kind


def test_rm_trace_reads_meta_and_reports_missing_key(coffee_txt: Path) -> None:
    reward = registry.create("rm.trace", {"machine": str(coffee_txt), "trace_key": "labels"})
    assert reward.score(Sample(prompt="", response="", meta={"labels": [["f"], ["g"]]})).score == 1.0
    missing = reward.score(Sample(prompt="", response=""))
    assert missing.status is Status.ERROR and "labels" in missing.error.message  # type: ignore[union-attr]


def test_cli_rm_check_convert_run(coffee_txt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rewardlab.cli.main import main

    assert main(["rm", "check", str(coffee_txt)]) == 0
    assert "3 states, 4 edges" in capsys.readouterr().out
    out = tmp_path / "t1.toml"
    assert main(["rm", "convert", str(coffee_txt), "-o", str(out)]) == 0
    assert main(["rm", "run", str(out), '[[], ["f"], ["g"]]']) == 0
    text = capsys.readouterr().out
    assert "ACCEPT" in text and "total reward 1" in text
    bad = tmp_path / "bad.txt"
    bad.write_text("0\n[1]\n(0,1,'a',os.system('x'))\n")
    assert main(["rm", "check", str(bad)]) == 1
    assert "bad.txt:3" in capsys.readouterr().err
