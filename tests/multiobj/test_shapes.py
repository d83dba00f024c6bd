"""Shape functions as components: each curve's formula, sources, errors passed through."""

from __future__ import annotations

import math

import pytest

from rewardlab import Sample
from rewardlab.compose import build
from rewardlab.errors import ConfigError, SpecError
from rewardlab.multiobj.shapes import Curve, curve_value

SHAPE = {"low": 0.0, "high": 4.0, "center": 2.0, "scale": 0.5, "exponent": 2.0}


@pytest.mark.parametrize(
    ("curve", "x", "expected"),
    [
        ("linear", -1.0, 0.0),
        ("linear", 1.0, 0.25),
        ("linear", 9.0, 1.0),
        ("power", 2.0, 0.25),
        ("sigmoid", 2.0, 0.5),
        ("sigmoid", 2.5, 1 / (1 + math.exp(-1))),
        ("sigmoid", -1e6, 0.0),  # no overflow far below the centre
        ("gaussian", 2.0, 1.0),
        ("gaussian", 2.5, math.exp(-0.5)),
        ("exponential", 1.0, 1.0),
        ("exponential", 3.0, math.exp(-2.0)),
        ("step", 1.999, 0.0),
        ("step", 2.0, 1.0),
    ],
)
def test_curve_values(curve: str, x: float, expected: float) -> None:
    assert curve_value(x, curve, **SHAPE) == pytest.approx(expected)


def test_curve_of_a_meta_column_and_inverted() -> None:
    reward_ = Curve(meta="latency", curve="exponential", center=1.0, scale=2.0, invert=True)
    result = reward_.score(Sample(prompt="", response="x", meta={"latency": 3.0}))
    assert result.score == pytest.approx(1 - math.exp(-1.0)) and result.info["raw"] == 3.0


@pytest.mark.parametrize("meta", [{}, {"latency": "slow"}, {"latency": float("nan")}, {"latency": True}])
def test_missing_or_non_numeric_meta_is_an_invalid_input_error(meta: dict[str, object]) -> None:
    result = Curve(meta="latency").score(Sample(prompt="", response="x", meta=meta))  # type: ignore[arg-type]
    assert result.error is not None and result.error.kind.value == "invalid_input" and "latency" in result.error.message


def test_curve_of_another_reward_keeps_the_raw_result_and_passes_errors_through() -> None:
    reward_ = Curve(of="text.exact", curve="linear", invert=True)
    hit = reward_.score(Sample(prompt="", response="Paris", reference="Paris"))
    assert hit.score == 0.0 and hit.components["raw"].score == 1.0
    missing = reward_.score(Sample(prompt="", response="Paris"))  # text.exact without a reference
    raw = Curve(of="text.exact").score(Sample(prompt="", response="Paris"))
    assert missing.status.value == "error" and missing.error == raw.error


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one source"),
        ({"of": "text.exact", "meta": "x"}, "exactly one source"),
        ({"meta": "x", "of_params": {"a": 1}}, "of_params needs"),
        ({"meta": "x", "curve": "cubic"}, "curve must be one of"),
        ({"meta": "x", "low": 1.0, "high": 1.0}, "low must be below high"),
        ({"meta": "x", "scale": 0.0}, "scale and exponent"),
        ({"meta": "x", "center": float("inf")}, "finite"),
    ],
)
def test_bad_curve_parameters_fail_at_construction(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Curve(**kwargs)  # type: ignore[arg-type]


def test_curve_is_a_registered_component_and_a_typo_fails_at_check() -> None:
    spec = {"reward": {"name": "s", "components": [
        {"name": "brevity", "use": "multiobj.curve", "params": {"of": "length.tokens", "of_params": {"budget": 2}}},
    ]}}  # fmt: skip
    assert build(spec).score(Sample(prompt="", response="one two three")).score == pytest.approx(0.5)
    spec["reward"]["components"][0]["params"]["centre"] = 1.0  # type: ignore[index]
    with pytest.raises(SpecError, match="centre"):
        build(spec)
