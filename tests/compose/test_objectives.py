"""Objectives: a spec's reward vector beside the total, and weight-conditioned totals."""

from __future__ import annotations

import pytest

from rewardlab import Reward, RewardResult, Sample
from rewardlab.compose import build as build_in
from rewardlab.compose import check as check_in
from rewardlab.core import reward
from rewardlab.core.registry import Registry
from rewardlab.errors import SpecError, SpecProblem


@reward("mo_test.meta")
def _meta_value(sample: Sample, *, key: str = "x") -> float | RewardResult | None:
    value = sample.meta.get(key)
    if value == "boom":
        return RewardResult.failure("crash", "asked to fail")
    return None if value is None else float(value)  # type: ignore[arg-type]


# A registry of this module's own, so the test reward never joins the global one.
REGISTRY = Registry(use_entry_points=False)
REGISTRY.register("mo_test.meta", _meta_value)


def build(spec: dict[str, object]) -> Reward:
    return build_in(spec, registry_=REGISTRY)  # type: ignore[arg-type]


def check(spec: dict[str, object]) -> list[SpecProblem]:
    return check_in(spec, registry_=REGISTRY)  # type: ignore[arg-type]


def _spec(combine: str = "weighted", **extra: object) -> dict[str, object]:
    return {
        "reward": {
            "name": "mo",
            "combine": combine,
            "components": [
                {"name": "fmt", "use": "mo_test.meta", "params": {"key": "fmt"}, "weight": 0.1, "threshold": 1.0},
                {"name": "acc", "use": "mo_test.meta", "params": {"key": "acc"}, "requires": ["fmt"], "on_error": "skip"},
                {"name": "cost", "use": "mo_test.meta", "params": {"key": "cost"}, "weight": -1.0},
            ],
            "objectives": [
                {"name": "accuracy", "expr": "acc", "weight": 2.0},
                {"name": "cheapness", "expr": "1 - cost", "weight": 0.5},
            ],
            **extra,
        }
    }


def _sample(**meta: object) -> Sample:
    return Sample(prompt="p", response="r", meta=meta)  # type: ignore[arg-type]


def test_vector_rides_beside_the_weighted_total() -> None:
    result = build(_spec()).score(_sample(fmt=1, acc=0.5, cost=0.25))
    assert result.score == pytest.approx(0.1 + 0.5 - 0.25)
    assert result.objectives == {"accuracy": 0.5, "cheapness": 0.75}


def test_gated_component_is_zero_in_an_objective() -> None:
    result = build(_spec()).score(_sample(fmt=0, acc=1.0, cost=0.0))
    assert result.objectives == {"accuracy": 0.0, "cheapness": 1.0}


def test_skipped_component_leaves_its_objective_uncomputed_with_a_reason() -> None:
    result = build(_spec()).score(_sample(fmt=1, acc="boom", cost=0.5))
    assert result.is_ok  # acc's error is skipped by its policy, so the total counts the others
    assert result.objectives == {"accuracy": None, "cheapness": 0.5}
    assert "acc" in str(result.info["objectives_missing"]["accuracy"])  # type: ignore[index]


def test_combine_objectives_uses_declared_weights_without_sample_weights() -> None:
    result = build(_spec("objectives")).score(_sample(fmt=1, acc=1.0, cost=0.5))
    assert result.score == pytest.approx(2.0 * 1.0 + 0.5 * 0.5)
    assert result.info["objective_weights"] == {"accuracy": 2.0, "cheapness": 0.5}


@pytest.mark.parametrize("weights", [{"accuracy": 0.25, "cheapness": 0.75}, [0.25, 0.75]])
def test_combine_objectives_uses_each_samples_own_weights(weights: object) -> None:
    reward_ = build(_spec("objectives"))
    samples = [_sample(fmt=1, acc=1.0, cost=0.5, objective_weights=weights), _sample(fmt=1, acc=1.0, cost=0.5)]
    batch = reward_.score_batch(samples)
    one = reward_.score(samples[0])
    assert batch[0].score == one.score == pytest.approx(0.25 + 0.75 * 0.5)
    assert batch[1].score == pytest.approx(2.25)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"accuracy": 1.0}, "missing: cheapness"),
        ({"accuracy": 1.0, "cheapness": 1.0, "speed": 1.0}, "unknown: speed"),
        ([1.0], "1 weights for 2 objectives"),
        ({"accuracy": "high", "cheapness": 1.0}, "finite number"),
        ({"accuracy": True, "cheapness": 1.0}, "finite number"),
        ("equal", "must be an object"),
    ],
)
def test_bad_sample_weights_are_an_invalid_input_error_not_a_default(weights: object, message: str) -> None:
    result = build(_spec("objectives")).score(_sample(fmt=1, acc=1.0, cost=0.5, objective_weights=weights))
    assert result.status.value == "error" and result.error is not None
    assert result.error.kind.value == "invalid_input" and message in result.error.message
    assert result.objectives == {"accuracy": 1.0, "cheapness": 0.5}  # the vector is still reported


def test_uncomputed_objective_with_weight_skips_the_total_but_zero_weight_does_not() -> None:
    reward_ = build(_spec("objectives"))
    skipped = reward_.score(_sample(fmt=1, acc="boom", cost=0.5))
    assert skipped.status.value == "skipped"
    counted = reward_.score(_sample(fmt=1, acc="boom", cost=0.5, objective_weights=[0.0, 1.0]))
    assert counted.score == pytest.approx(0.5)


def test_vector_round_trips_through_to_dict() -> None:
    result = build(_spec()).score(_sample(fmt=1, acc="boom", cost=0.25)).stamped("h")
    again = RewardResult.from_dict(result.to_dict())
    assert again.objectives == result.objectives == {"accuracy": None, "cheapness": 0.75}


def test_from_dict_refuses_a_non_finite_objective() -> None:
    with pytest.raises(ValueError, match="objective 'a'"):
        RewardResult.from_dict({"score": 1.0, "status": "ok", "objectives": {"a": float("nan")}})


def test_spec_without_objectives_keeps_its_hash_and_has_no_vector() -> None:
    spec = _spec()
    del spec["reward"]["objectives"]  # type: ignore[attr-defined]
    reward_ = build(spec)
    assert "objectives" not in reward_.describe()
    assert reward_.score(_sample(fmt=1, acc=1, cost=0)).objectives is None
    assert build(_spec()).spec_hash != reward_.spec_hash  # type: ignore[attr-defined]


def test_check_lists_every_objective_problem() -> None:
    spec = _spec("objectives")
    spec["reward"]["objectives"] = [  # type: ignore[index]
        {"name": "a", "expr": "acc + nope"},
        {"name": "a", "expr": "acc"},
    ]
    messages = [f"{p.location}: {p.message}" for p in check(spec)]
    assert any("objectives[0].expr" in m and "nope" in m for m in messages)
    assert any("duplicate objective name 'a'" in m for m in messages)


def test_combine_objectives_without_objectives_is_a_spec_error() -> None:
    spec = _spec("objectives")
    spec["reward"]["objectives"] = []  # type: ignore[index]
    with pytest.raises(SpecError, match="needs at least one"):
        build(spec)


def test_formula_total_and_objectives_together() -> None:
    result = build(_spec("formula", formula="acc * (1 - cost)")).score(_sample(fmt=1, acc=1.0, cost=0.5))
    assert result.score == 0.5 and result.objectives == {"accuracy": 1.0, "cheapness": 0.5}


def test_clip_keeps_the_vector() -> None:
    from rewardlab.compose import Clip

    result = Clip(build(_spec()), 0.0, 0.1).score(_sample(fmt=1, acc=1.0, cost=0.0))
    assert result.score == 0.1 and result.objectives == {"accuracy": 1.0, "cheapness": 1.0}


def test_the_tree_shows_the_objectives() -> None:
    assert repr(build(_spec())).splitlines()[-1] == "objectives: accuracy = acc (×2); cheapness = 1 - cost (×0.5)"
