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


GOOD = [{"group": "a", "reward": 1.0}, {"group": "a", "reward": 0.0}, {"group": "a", "reward": 0.5}, {"group": "b", "reward": 1.0}, {"group": "b", "reward": 0.0}]


def _kept_going(tmp_path, capsys, bad_line: str) -> tuple[list[dict], str]:
    """GOOD with `bad_line` in the middle: returns the output rows and what was printed."""
    lines = [json.dumps(r) for r in GOOD]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([*lines[:2], bad_line, *lines[2:]]) + "\n")
    out = tmp_path / "adv.jsonl"
    assert main(["advantages", str(path), "-o", str(out)]) == 0
    result = read_jsonl(out)
    assert [{k: r[k] for k in ("group", "reward")} for r in result] == GOOD  # the bad row is left out
    np.testing.assert_allclose([r["advantage"] for r in result[:3]], grpo(np.array([[1.0, 0.0, 0.5]]))[0])
    np.testing.assert_allclose([r["advantage"] for r in result[3:]], grpo(np.array([[1.0, 0.0]]))[0])
    printed = capsys.readouterr()
    text = printed.out + printed.err
    assert "1 rows could not be read" in text and "s.jsonl:3" in text and "Traceback" not in text
    return result, text


def test_missing_group_column_is_reported_and_the_rest_kept(tmp_path, capsys):
    _, text = _kept_going(tmp_path, capsys, '{"reward": 0.0}')
    assert "--group-by" in text


def test_non_numeric_score_is_reported_and_the_rest_kept(tmp_path, capsys):
    _, text = _kept_going(tmp_path, capsys, '{"group": "a", "reward": "high"}')
    assert "not a number" in text


def test_a_score_beyond_float_range_is_reported_and_the_rest_kept(tmp_path, capsys):
    _, text = _kept_going(tmp_path, capsys, '{"group": "a", "reward": 1%s}' % ("0" * 400))
    assert "is inf on an ok row" in text


def test_malformed_json_in_the_middle_is_reported_and_the_rest_kept(tmp_path, capsys):
    _kept_going(tmp_path, capsys, '{"group": "a", "reward": ')


def test_nan_score_is_reported_and_the_rest_kept(tmp_path, capsys):
    _kept_going(tmp_path, capsys, '{"group": "a", "reward": NaN}')


def test_a_5000_digit_integer_score_is_reported_and_the_rest_kept(tmp_path, capsys):
    _kept_going(tmp_path, capsys, '{"group": "b", "reward": 1%s}' % ("0" * 5000))


def test_every_row_bad_is_an_input_error(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text('{"reward": 0.0}\n{"group": "a", "reward": "x"}\n')
    assert main(["advantages", str(path)]) == 1
    assert "2 could not be read" in capsys.readouterr().err


def test_empty_file_is_an_input_error(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text("")
    assert main(["advantages", str(path)]) == 1
    assert "no rows" in capsys.readouterr().err


def test_unknown_estimator_is_a_usage_error(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"group": "a", "reward": 1.0}\n')
    assert main(["advantages", str(path), "--estimator", "ppo"]) == 2


def test_a_group_left_with_one_row_gets_the_single_row_rule(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text('{"group": "a", "reward": 1.0}\n{"group": "a", "reward": "x"}\n{"group": "b", "reward": 1.0}\n{"group": "b", "reward": 0.0}\n')
    out = tmp_path / "adv.jsonl"
    assert main(["advantages", str(path), "-o", str(out)]) == 0
    result = read_jsonl(out)
    assert result[0]["advantage"] == grpo(np.array([[1.0]]))[0][0] == 0.0  # as a one-row group always is
    np.testing.assert_allclose([r["advantage"] for r in result[1:]], grpo(np.array([[1.0, 0.0]]))[0])
    assert "s.jsonl:2" in capsys.readouterr().out
