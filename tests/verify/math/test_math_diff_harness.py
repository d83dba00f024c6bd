"""The differential harness (bench/bench_math_diff.py) on a fixed sample, and the classes of
disagreement it found, each adjudicated with its reason.

The harness compares rewardlab's `math.answer` and Math-Verify with default calls over public
labelled model answers; here it runs on a small fixed slice of every source present, so CI checks
the harness itself and keeps the no-wrong-accept bar on real output.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from rewardlab.core import Sample
from rewardlab.verify.math import MathAnswer, extract_answer

ROOT = Path(__file__).resolve().parents[3]


def _harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_math_diff", ROOT / "bench" / "bench_math_diff.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["bench_math_diff"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _accepts(gold: str, response: str) -> bool:
    return MathAnswer().score(Sample(prompt="", response=response, reference=gold)).score == 1.0


# A number right after a single `#` names a thing ("horse #12", "room #4", "item #3"); it is not a
# quantity, so the last-number fallback passes over it. `#### 16` (GSM8K's answer mark) is not a
# name. Found in ToRA's GSM8K outputs (microsoft/ToRA, MIT): the program printed 16 and the
# closing sentence "16 people think that horse #12 will win" was read as 12.
NUMBER_SIGN_NAMES = [
    ("16 people think that horse #12 will win the big race.", "16"),
    ("So 30 guests fit in room #4.", "30"),
    ("Item #3 costs 45 dollars in total.", "45"),
    ("The total is\n#### 72", "72"),
]


@pytest.mark.parametrize(("response", "answer"), NUMBER_SIGN_NAMES)
def test_a_number_after_a_number_sign_is_a_name_not_the_answer(response: str, answer: str) -> None:
    assert extract_answer(response).answer == answer


def test_a_named_number_is_not_accepted_for_the_quantity() -> None:
    assert _accepts(
        "16", "```output\n16.0\n```\n16 people think that horse #12 will win the big race."
    )
    assert not _accepts(
        "12", "```output\n16.0\n```\n16 people think that horse #12 will win the big race."
    )


@pytest.fixture(scope="module")
def sample() -> tuple[ModuleType, list[object]]:
    harness = _harness()
    cases, _missing = harness.all_cases(harness.SHARED, harness.MIRROR, limit=12)
    return harness, cases


def test_harness_tables_on_a_fixed_sample(sample: tuple[ModuleType, list[object]]) -> None:
    pytest.importorskip("math_verify")
    harness, cases = sample
    sources = {case.source for case in cases}  # type: ignore[attr-defined]
    assert {"suite:math-verify", "suite:graders"} <= sources  # committed in the repository
    ours = harness.rewardlab_verdicts(cases)
    theirs = harness.math_verify_verdicts(cases)
    rows = {row["source"]: row for row in harness.table(cases, ours, theirs)}
    assert set(rows) == sources | {"all"}
    total = rows["all"]
    assert total["n"] == len(cases)
    assert total["rewardlab wrong accepts"] == 0
    assert total["rewardlab agree"] >= total["math-verify agree"]
    for row in rows.values():
        n = row["n"]
        assert (
            row["rewardlab agree"] + row["rewardlab wrong accepts"] + row["rewardlab wrong rejects"]
            == n
        )
    listed = harness.disagreements(cases, ours, theirs)
    assert (
        len([d for d in listed if d["rewardlab"]["accepted"] != d["math-verify"]["accepted"]])
        == total["disagree"]
    )
