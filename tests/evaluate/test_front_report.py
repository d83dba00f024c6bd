"""Front reports from results and from a scored file (the runner's objective/<name> columns)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import orjson
import pytest

from rewardlab import RewardResult
from rewardlab.errors import ArrayError, InputError
from rewardlab.evaluate.front import FrontVectors, front_report, read_scored_vectors, write_front
from rewardlab.runner import score_file
from rewardlab.runner.options import ScoreFileOptions

SPEC = """
[reward]
name = "two"
combine = "objectives"

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


def _vector(a: float | None, b: float | None) -> RewardResult:
    return RewardResult.ok(0.0, objectives={"a": a, "b": b})


def test_report_numbers_from_results() -> None:
    results = [_vector(3, 1), _vector(1, 3), _vector(2, 2), _vector(1, 1), _vector(None, 5), RewardResult.failure("crash", "x")]
    report = front_report(results, ref=[0.0, 0.0], plot=False)
    numbers = report.numbers
    assert (numbers["rows"], numbers["scored"], numbers["unscored"]) == (6, 4, 2)
    assert numbers["front"] == [[1.0, 3.0], [2.0, 2.0], [3.0, 1.0]] and numbers["rows_on_front"] == 3
    assert numbers["hypervolume"] == pytest.approx(6.0)  # 3 + 2 + 1: see tests/multiobj/test_pareto.py
    assert numbers["per_objective"]["a"] == {"mean": 1.75, "min": 1.0, "max": 3.0}


def test_report_of_a_scored_file_with_plot(tmp_path: Path) -> None:
    rows = [{"prompt": "Capital of France?", "response": r, "reference": "Paris"}
            for r in ["Paris", "It is Paris", "Paris is the capital of France", "Rome", "no idea at all here"]]  # fmt: skip
    data = tmp_path / "in.jsonl"
    data.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    score_file(SPEC, data, tmp_path / "out.jsonl", ScoreFileOptions(workers=0, timeout=None))
    vectors = read_scored_vectors(tmp_path / "out.jsonl")
    assert vectors.names == ("accuracy", "brevity") and vectors.mask.all() and vectors.spec_hash
    report = front_report(vectors)
    html, js = write_front(report, tmp_path / "report")
    payload = json.loads(js.read_text())
    assert payload["front"] == [[1.0, 1.0]]  # "Paris" is right and short: it dominates every other row
    assert payload["stamps"]["spec_hash"] == vectors.spec_hash
    assert "data:image/png;base64," in html.read_text()


def test_a_file_without_objective_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text('{"reward": 1.0}\n')
    with pytest.raises(InputError, match="objective"):
        read_scored_vectors(path)
    path.write_text('{"objective/a": "high"}\n')
    with pytest.raises(InputError, match=r"plain.jsonl:1: objective/a must be a number"):
        read_scored_vectors(path)


def test_no_scored_row_is_an_error_not_an_empty_front() -> None:
    with pytest.raises(ArrayError, match="no row"):
        front_report(FrontVectors(("a",), np.full((2, 1), np.nan), np.zeros(2, dtype=bool)), plot=False)


def test_front_names_are_lazy_exports_of_evaluate() -> None:
    import rewardlab.evaluate as evaluate
    from rewardlab.evaluate import front

    for name in front.__all__:
        assert name in evaluate.__all__ and getattr(evaluate, name) is getattr(front, name)
