"""`rewardlab advantages`: end to end after `rewardlab score`, on real data, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rewardlab.cli.main import main
from rewardlab.credit import grpo, rloo

SPEC = """
[reward]
name = "exact"
[[reward.components]]
name = "correct"
use = "text.exact"
"""
REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "qwen25-math-cot-100.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_score_then_advantages_end_to_end(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    rows = [
        {"group": "p1", "response": "4", "reference": "4"},
        {"group": "p1", "response": "5", "reference": "4"},
        {"group": "p2", "response": "x", "reference": "x"},
        {"group": "p1", "response": "4", "reference": "4"},
        {"group": "p2", "response": "x", "reference": "x"},
    ]
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + '\n{"group": "p2", "response": \n')
    scored = tmp_path / "scored.jsonl"
    assert main(["score", str(spec), str(data), "-o", str(scored), "-w", "0", "--no-progress"]) == 0
    out = tmp_path / "adv.jsonl"
    assert main(["advantages", str(scored), "-o", str(out)]) == 0
    result = read_jsonl(out)
    assert len(result) == 6  # every input row comes back, the broken one included
    assert result[5]["reward_status"] == "error" and result[5]["advantage"] is None
    expected_p1 = grpo(np.array([[1.0, 0.0, 1.0]]))[0]
    np.testing.assert_allclose([result[i]["advantage"] for i in (0, 1, 3)], expected_p1)
    assert result[2]["advantage"] == 0.0 and result[4]["advantage"] == 0.0  # p2: all correct
    printed = capsys.readouterr().out
    assert "1 zero-variance groups (50%)" in printed and "1 rows had no score" in printed


def test_advantages_on_real_math_scores_counts_wasted_groups(tmp_path, capsys):
    if not REAL.exists():
        pytest.skip(f"real data not found at {REAL}; see /work/shared/data/SOURCES.md")
    rows = [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    scored = tmp_path / "math.scored.jsonl"
    with scored.open("w") as f:
        for row in rows:
            for k, ok in enumerate(row["score"]):
                f.write(json.dumps({"group": row["idx"], "sample": k, "reward": float(ok), "reward_status": "ok"}) + "\n")
    assert main(["advantages", str(scored), "--estimator", "rloo"]) == 0
    printed = capsys.readouterr().out
    assert "800 rows in 100 groups (rloo): 90 zero-variance groups (90%)" in printed
    out = read_jsonl(tmp_path / "math.scored.advantages.jsonl")
    first_mixed = next(i for i, row in enumerate(rows) if len(set(row["score"])) > 1)
    got = [r["advantage"] for r in out if r["group"] == rows[first_mixed]["idx"]]
    np.testing.assert_allclose(got, rloo(np.array([rows[first_mixed]["score"]], dtype=float))[0])


def test_missing_group_column_names_file_and_line(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text('{"group": "a", "reward": 1.0}\n{"reward": 0.0}\n')
    assert main(["advantages", str(path)]) == 1
    err = capsys.readouterr().err
    assert "s.jsonl:2" in err and "--group-by" in err


def test_non_numeric_score_on_an_ok_row_is_an_input_error(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text('{"group": "a", "reward": "high"}\n')
    assert main(["advantages", str(path)]) == 1
    assert "not a number" in capsys.readouterr().err


def test_a_score_beyond_float_range_is_an_input_error_not_a_crash(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text('{"group": "a", "reward": 0.5}\n{"group": "a", "reward": 1%s}\n' % ("0" * 400))
    assert main(["advantages", str(path)]) == 1
    err = capsys.readouterr().err
    assert "s.jsonl:2" in err and "is inf on an ok row" in err and "Traceback" not in err


def test_unknown_estimator_is_a_usage_error(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"group": "a", "reward": 1.0}\n')
    assert main(["advantages", str(path), "--estimator", "ppo"]) == 2
