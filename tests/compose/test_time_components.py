"""Opt-in per-component timing of composites (`time_components`): off changes nothing."""

import time

import pytest

from rewardlab.compose import Component, FormulaCombine, Weighted, build
from rewardlab.core import RewardResult, Sample, Status, reward
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
SPEC = """
[reward]
name = "t"
[[reward.components]]
name = "format"
use = "format.tags"
weight = 0.2
[[reward.components]]
name = "exact"
use = "text.exact"
params = { extract = "<answer>(.*?)</answer>" }
"""


def composite(*, on_error="fail", **kw):
    parts = [Component("format", fmt, 0.1), Component("slow", slow, 1.0, requires=("format",), on_error=on_error)]
    return Weighted(parts, name="t", **kw)


def without_timing(result: RewardResult) -> RewardResult:
    info = {k: v for k, v in result.info.items() if k != "component_seconds"}
    return RewardResult(result.score, result.status, result.components, result.steps, info, result.error, result.stamp)


@pytest.mark.parametrize("on_error", ["fail", "zero", "skip"])
def test_off_by_default_and_results_unchanged(on_error):
    default, off, on = composite(on_error=on_error), composite(on_error=on_error, time_components=False), composite(
        on_error=on_error, time_components=True
    )
    assert default.time_components is False
    for batch in (default.score_batch(SAMPLES), [default.score(s) for s in SAMPLES]):
        assert batch == off.score_batch(SAMPLES) == [off.score(s) for s in SAMPLES]
        assert all("component_seconds" not in r.info for r in batch)
        assert [without_timing(r) for r in on.score_batch(SAMPLES)] == batch
        assert [without_timing(r) for r in (on.score(s) for s in SAMPLES)] == batch
    # timing is not part of what the reward is: same description, same spec hash
    assert on.describe() == default.describe() and on.spec_hash == default.spec_hash


def test_built_spec_results_identical_with_timing_off():
    samples = [Sample(response="<think>x</think><answer>paris</answer>", reference="Paris"), Sample(response="no tags")]
    built = build(SPEC)
    assert built.time_components is False
    expected = built.score_batch(samples)
    assert "component_seconds" not in expected[0].info
    built.time_components = True  # the attribute is what the reward server sets
    timed = built.score_batch(samples)
    assert set(timed[0].info["component_seconds"]) == {"format", "exact"}
    assert [without_timing(r) for r in timed] == expected


def test_seconds_recorded_per_computed_component():
    on = composite(time_components=True)
    ok, gated, failed = on.score_batch(SAMPLES)
    assert set(ok.info["component_seconds"]) == {"format", "slow"}
    # the slow component sleeps 10 ms per sample; batch time is shared among the 2 samples it scored
    assert ok.info["component_seconds"]["slow"] >= 0.009
    assert 0 <= ok.info["component_seconds"]["format"] < ok.info["component_seconds"]["slow"]
    assert set(gated.info["component_seconds"]) == {"format"}  # gated off: never computed, never timed
    assert failed.status is Status.ERROR and failed.info["failed_component"] == "slow"
    assert set(failed.info["component_seconds"]) == {"format", "slow"}
    single = on.score(SAMPLES[0])
    assert single.info["component_seconds"]["slow"] >= 0.009


def test_formula_combine_takes_the_flag():
    parts = [Component("format", fmt), Component("slow", slow)]
    f = FormulaCombine(parts, "format + slow", time_components=True)
    r = f.score(SAMPLES[0])
    assert r.score == pytest.approx(1.5)
    assert set(r.info["component_seconds"]) == {"format", "slow"}
    assert "component_seconds" not in FormulaCombine(parts, "format + slow").score(SAMPLES[0]).info
