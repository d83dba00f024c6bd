"""Per-component latency histograms: the server times composites' components, and the timing
never leaks into served or cached results."""

from __future__ import annotations

import pytest

from rewardlab.compose import Component, Weighted
from rewardlab.core import RewardResult, Sample
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore

from ._live import asgi_client, run
from ._rewards import Length, Slow

DELAY = 0.004


def _combo() -> Weighted:
    # "slow" requires "gate" (len/100 >= 0.05, i.e. responses of 5+ characters) to pass.
    parts = [
        Component("gate", Length(), 0.0, threshold=0.05),
        Component("fast", Length(), 1.0),
        Component("slow", Slow(delay=DELAY), 0.5, requires=("gate",)),
    ]
    return Weighted(parts, name="combo")


ROWS = [{"prompt": "q", "response": f"a{i}" if i % 4 == 0 else f"long-{i}"} for i in range(24)]
RAN_SLOW = sum(1 for r in ROWS if len(r["response"]) >= 5)


def _metric(text: str, name: str, component: str) -> float:
    prefix = f'{name}{{component="{component}",reward="combo"}} '
    return next(float(line.split()[-1]) for line in text.splitlines() if line.startswith(prefix))


def _score_twice(app):
    async def go():
        async with asgi_client(app) as c:
            first = await c.post("/v1/rewards/combo:score", json={"samples": ROWS})
            again = await c.post("/v1/rewards/combo:score", json={"samples": ROWS})
            return first.json(), again.json(), (await c.get("/metrics")).text

    return run(go())


def _local_rows(reward: Weighted, spec_hash: str) -> list[dict]:
    return [r.stamped(spec_hash).to_dict() for r in reward.score_batch([Sample.from_dict(r) for r in ROWS])]


@pytest.mark.parametrize("settings", [ServeSettings(workers=0), ServeSettings(workers=1, sample_timeout=30)], ids=["inline", "pool"])
def test_component_histograms_get_a_sample_per_computed_component(make_app, tmp_path, settings):
    reward = _combo()
    app = make_app({"combo": reward}, ResultStore(tmp_path / "c.sqlite"), settings)
    first, again, metrics = _score_twice(app)
    n = len(ROWS)
    assert _metric(metrics, "rewardlab_component_seconds_count", "gate") == n
    assert _metric(metrics, "rewardlab_component_seconds_count", "fast") == n
    # gated off where the response is short: not computed, so not timed
    assert _metric(metrics, "rewardlab_component_seconds_count", "slow") == RAN_SLOW < n
    assert _metric(metrics, "rewardlab_component_seconds_sum", "slow") >= 0.9 * DELAY * RAN_SLOW
    assert _metric(metrics, "rewardlab_component_seconds_sum", "fast") < _metric(
        metrics, "rewardlab_component_seconds_sum", "slow"
    )
    # the second request came from the cache: nothing computed, nothing more observed
    assert again["cached"] == n
    # served (fresh and cached) results are exactly the local ones: no timing in info
    local = _local_rows(reward, first["spec_hash"])
    assert first["results"] == again["results"] == local
    assert all("component_seconds" not in (r.get("info") or {}) for r in first["results"])
    assert reward.observer is None  # the caller's object is not changed


def test_rewards_that_are_not_composites_are_served_unchanged(make_app):
    app = make_app({"len": Length()}, None, ServeSettings(workers=0))

    async def go():
        async with asgi_client(app) as c:
            return (await c.post("/v1/rewards/len:score", json={"samples": ROWS[:3]})).json()

    body = run(go())
    assert [RewardResult.from_dict(r).score for r in body["results"]] == [len(r["response"]) / 100 for r in ROWS[:3]]


def test_batch_histogram_exports_what_prometheus_histogram_does():
    from prometheus_client import CollectorRegistry, Histogram, generate_latest

    from rewardlab.serve.metrics import BatchHistogram

    values = [0.0005, 0.001, 0.001, 0.003, 0.2, 7.0, 500.0]  # on, between and past the bounds
    buckets = (0.001, 0.01, 1.0, 10.0)
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    histogram = BatchHistogram("t_seconds", "doc", ["reward", "component"], buckets)
    ours.register(histogram)
    histogram.observe_many(("r", "a"), values[:3])
    histogram.observe_many(("r", "a"), values[3:])
    histogram.observe_many(("r", "b"), [0.5])
    reference = Histogram("t_seconds", "doc", ["reward", "component"], buckets=buckets, registry=theirs)
    for v in values:
        reference.labels("r", "a").observe(v)
    reference.labels("r", "b").observe(0.5)

    def lines(registry):
        text = generate_latest(registry).decode()
        return sorted(line for line in text.splitlines() if line.startswith("t_seconds") and "_created" not in line)

    assert lines(ours) == lines(theirs)
    assert 't_seconds_count{component="a",reward="r"} 7.0' in lines(ours)
