"""`rewardlab front`: a scored file's reward vectors as a front report, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from rewardlab.cli.main import main

SPEC = """
[reward]
name = "two"

[[reward.components]]
name = "f1"
use = "text.f1"

[[reward.components]]
name = "short"
use = "length.tokens"
params = { budget = 2, overflow = 8 }

[[reward.objectives]]
name = "accuracy"
expr = "f1"

[[reward.objectives]]
name = "brevity"
expr = "short"
"""


def _scored(tmp_path: Path) -> Path:
    rows = [{"prompt": "Capital?", "response": r, "reference": "Paris"} for r in ["Paris", "It is Paris, I think", "Rome"]]
    data, spec, out = tmp_path / "in.jsonl", tmp_path / "spec.toml", tmp_path / "scored.jsonl"
    data.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    spec.write_text(SPEC)
    assert main(["score", str(spec), str(data), "-o", str(out), "-w", "0", "--no-progress"]) == 0
    return out


def test_front_command_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scored = _scored(tmp_path)
    assert main(["front", str(scored), "--out", str(tmp_path / "r"), "--ref", "0,0"]) == 0
    payload = json.loads((tmp_path / "r" / "front.json").read_text())
    assert payload["front"] == [[1.0, 1.0]] and payload["reference"] == [0.0, 0.0]
    assert payload["hypervolume"] == pytest.approx(1.0)
    assert "hypervolume" in capsys.readouterr().out


def test_front_command_refuses_a_bad_reference_and_a_file_without_objectives(tmp_path: Path) -> None:
    scored = _scored(tmp_path)
    assert main(["front", str(scored), "--ref", "zero,0"]) == 2
    assert main(["front", str(scored), "--ref", "0,0,0", "--out", str(tmp_path / "r")]) == 1
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"reward": 1.0}\n')
    assert main(["front", str(plain), "--out", str(tmp_path / "r2")]) == 1


def test_score_summary_aggregates_each_objective(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"prompt": "Capital?", "response": r, "reference": "Paris"} for r in ["Paris", "It is Paris, I think", "Rome"]]
    data, spec, out, summary = tmp_path / "in.jsonl", tmp_path / "spec.toml", tmp_path / "scored.jsonl", tmp_path / "s.json"
    data.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    spec.write_text(SPEC)
    for workers in ("0", "2"):  # in process, and rows scored by worker processes
        assert main(["score", str(spec), str(data), "-o", str(out), "-w", workers, "--no-progress", "--summary-json", str(summary)]) == 0
        scored = [orjson.loads(line) for line in out.read_bytes().splitlines()]
        got = json.loads(summary.read_text())["objectives"]
        assert list(got) == ["accuracy", "brevity"]
        for name, stats in got.items():
            values = [row[f"objective/{name}"] for row in scored]
            assert stats["ok"] == 3 and stats["skipped"] == 0
            assert stats["mean"] == pytest.approx(sum(values) / 3)
            assert (stats["min"], stats["max"]) == (min(values), max(values))
    table = capsys.readouterr().out
    assert "objective accuracy" in table and "objective brevity" in table
