"""`json_float`: numbers from JSON files and user code, without OverflowError."""

from __future__ import annotations

import math

import pytest

from rewardlab.core.numbers import json_float
from rewardlab.core.reward import coerce_output


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3.0), (-2.5, -2.5), (10**400, math.inf), (-(10**400), -math.inf), (2**1023, float(2**1023)), (float("inf"), math.inf)],
)
def test_numbers_become_floats_and_huge_integers_saturate(value, expected):
    assert json_float(value) == expected


@pytest.mark.parametrize("value", [True, False, None, "1.5", [1.0], {"x": 1}])
def test_anything_but_an_int_or_float_is_none(value):
    assert json_float(value) is None


def test_nan_stays_nan():
    assert math.isnan(json_float(float("nan")))  # type: ignore[arg-type]


@pytest.mark.parametrize("output", [10**400, -(10**400), float("nan"), float("inf")])
def test_a_reward_returning_a_number_no_float_holds_is_invalid_output(output):
    result = coerce_output(output, "huge")
    assert result.error is not None and result.error.kind == "invalid_output"
    assert "expected a finite number" in result.error.message and len(result.error.message) < 120


def test_booleans_still_score_as_zero_and_one():
    assert (coerce_output(True, "b").score, coerce_output(False, "b").score) == (1.0, 0.0)
