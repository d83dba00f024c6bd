"""Observing a composite's components (`Composite.observed`): the observer is told each
computed component's time, and what the reward computes does not change."""

import time

import pytest

from rewardlab.compose import (
    Component,
    ComponentObserver,
    ComponentTimes,
    FormulaCombine,
    Weighted,
    build,
)
from rewardlab.core import Sample, Status, reward
from rewardlab.errors import ScoringError


@reward("t_time.fmt", range=(0, 1))
def fmt(sample):
    return sample.response.startswith("<ok>")


@reward("t_time.slow", range=(0, 1))
def slow(sample):
    time.sleep(0.01)
    if sample.response.endswith("!err"):
        raise ScoringError("parse", "cannot parse the answer")
    return 0.5


SAMPLES = [Sample(response="<ok> a"), Sample(response="b"), Sample(response="<ok> !err")]
SPEC = {  # a built spec, as a dict
    "reward": {
        "name": "t",
        "components": [
            {"name": "format", "use": "format.tags", "weight": 0.2},
            {"name": "exact", "use": "text.exact", "params": {"extract": "<answer>(.*?)</answer>"}},
        ],
    }
}


def composite(*, on_error="fail"):
    parts = [Component("format", fmt, 0.1), Component("slow", slow, 1.0, requires=("format",), on_error=on_error)]
    return Weighted(parts, name="t")


def test_component_times_is_a_component_observer():
    assert isinstance(ComponentTimes(), ComponentObserver)


@pytest.mark.parametrize("on_error", ["fail", "zero", "skip"])
def test_an_observed_composite_computes_exactly_the_same_results(on_error):
    plain = composite(on_error=on_error)
    observed = plain.observed(ComponentTimes())
    assert plain.observer is None  # the original is not changed
    expected = plain.score_batch(SAMPLES)
    assert observed.score_batch(SAMPLES) == expected == [plain.score(s) for s in SAMPLES]
    assert [observed.score(s) for s in SAMPLES] == expected
    assert all("component_seconds" not in r.info for r in expected)
    # observing is not part of what the reward is: same description, same spec hash
    assert observed.describe() == plain.describe() and observed.spec_hash == plain.spec_hash


def test_a_batch_call_is_observed_once_per_computed_component():
    times = ComponentTimes()
    _, _, failed = composite().observed(times).score_batch(SAMPLES)
    seen = times.drain()
    assert [(name, n) for name, _, n in seen] == [("format", 3), ("slow", 2)]  # "b" is gated off
    by_name = {name: seconds for name, seconds, _ in seen}
    assert by_name["slow"] >= 2 * 0.009 > by_name["format"] >= 0  # 10 ms per sample it scored
    assert failed.status is Status.ERROR and failed.info == {"failed_component": "slow"}
    assert times.drain() == []  # drained


def test_a_single_sample_is_observed_per_component():
    times = ComponentTimes()
    composite().observed(times).score(SAMPLES[0])
    assert [(name, n) for name, _, n in times.drain()] == [("format", 1), ("slow", 1)]
    composite().observed(times).score(SAMPLES[1])
    assert [name for name, _, _ in times.drain()] == ["format"]  # gated off: never computed, never observed


def test_a_built_spec_and_a_formula_can_be_observed():
    samples = [Sample(response="<think>x</think><answer>paris</answer>", reference="Paris"), Sample(response="no tags")]
    times = ComponentTimes()
    built = build(SPEC)
    assert built.observed(times).score_batch(samples) == built.score_batch(samples)
    assert {name for name, _, _ in times.drain()} == {"format", "exact"}
    formula = FormulaCombine([Component("format", fmt), Component("slow", slow)], "format + slow")
    assert formula.observed(times).score(SAMPLES[0]).score == pytest.approx(1.5)
    assert {name for name, _, _ in times.drain()} == {"format", "slow"}


def test_observations_made_in_worker_processes_reach_the_callers_observer():
    from rewardlab.runner.executors import PoolExecutor

    times = ComponentTimes()
    executor = PoolExecutor(composite().observed(times), workers=2, timeout=30)
    try:
        results = executor.map(SAMPLES)
    finally:
        executor.close()
    assert results == composite().score_batch(SAMPLES)
    assert sorted(name for name, _, _ in times.drain()) == ["format", "format", "format", "slow", "slow"]
