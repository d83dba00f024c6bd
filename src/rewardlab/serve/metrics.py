"""Prometheus metrics of one server, in a registry of its own.

A per-app `CollectorRegistry` (not prometheus-client's global one) lets several apps live in one
process — tests, a notebook — without "duplicated timeseries" errors, and ``/metrics`` shows
only this server's numbers.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from rewardlab.core import RewardResult

__all__ = ["ServerMetrics"]

# Buckets from 1 ms to 2 min: cheap text rewards sit at the low end, code execution at the top.
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


class ServerMetrics:
    """The server's counters, gauges and histograms (names start with ``rewardlab_``)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "rewardlab_requests", "HTTP requests by route and status code", ["route", "code"], registry=r
        )
        self.request_latency = Histogram(
            "rewardlab_request_seconds", "request latency by reward", ["reward"], buckets=_BUCKETS, registry=r
        )
        self.samples = Counter(
            "rewardlab_samples", "scored samples by reward and status", ["reward", "status"], registry=r
        )
        self.batch_latency = Histogram(
            "rewardlab_batch_seconds", "time to compute one batch on the backend", ["reward"], buckets=_BUCKETS, registry=r
        )
        self.batch_size = Histogram(
            "rewardlab_batch_size", "samples per backend batch (batched across clients)", ["reward"],
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), registry=r,
        )
        self.component_results = Counter(
            "rewardlab_component_results", "component results by reward, component and status",
            ["reward", "component", "status"], registry=r,
        )
        self.component_seconds = Histogram(
            "rewardlab_component_seconds",
            "per-sample time of a component (from the composite's info.component_seconds, else the "
            "component's info.seconds)",
            ["reward", "component"], buckets=_BUCKETS, registry=r,
        )
        self.errors = Counter(
            "rewardlab_errors", "error results by reward, component ('' for the total) and kind",
            ["reward", "component", "kind"], registry=r,
        )
        self.queue_depth = Gauge(
            "rewardlab_queue_depth", "samples waiting for a backend batch", ["reward"], registry=r
        )
        self.in_flight = Gauge(
            "rewardlab_batches_in_flight", "backend batches being computed", ["reward"], registry=r
        )
        self.cache_hits = Counter("rewardlab_cache_hits", "results served from the cache", ["reward"], registry=r)
        self.cache_misses = Counter("rewardlab_cache_misses", "results computed (not in the cache)", ["reward"], registry=r)
        self.rejected = Counter(
            "rewardlab_rejected", "requests refused for backpressure or limits", ["reward", "reason"], registry=r
        )

    def observe_results(self, reward: str, results: Sequence[RewardResult]) -> None:
        """Count statuses and error kinds of the totals and of every component, and time components.

        Component times come from the total's ``info["component_seconds"]`` (a composite with
        ``time_components``, which the server turns on) or a component's ``info["seconds"]``.

        Counted in plain dicts first: one `labels().inc()` per label set, not per sample
        (prometheus-client takes a lock per call).
        """
        counts: collections.Counter[tuple[str, ...]] = collections.Counter()
        seconds: collections.defaultdict[str, list[float]] = collections.defaultdict(list)
        for result in results:
            counts["s", result.status.value] += 1
            if result.error is not None:
                counts["e", "", result.error.kind.value] += 1
            timed = result.info.get("component_seconds") if result.info else None
            if not isinstance(timed, dict):
                timed = {}
            for component, sub in result.components.items():
                counts["c", component, sub.status.value] += 1
                if sub.error is not None:
                    counts["e", component, sub.error.kind.value] += 1
                took = timed.get(component, sub.info.get("seconds") if sub.info else None)
                if isinstance(took, int | float):
                    seconds[component].append(float(took))
        for component, values in seconds.items():
            histogram = self.component_seconds.labels(reward, component)  # one label lookup per batch
            for value in values:
                histogram.observe(value)
        for key, n in counts.items():
            if key[0] == "s":
                self.samples.labels(reward, key[1]).inc(n)
            elif key[0] == "e":
                self.errors.labels(reward, key[1], key[2]).inc(n)
            else:
                self.component_results.labels(reward, key[1], key[2]).inc(n)

    def render(self) -> bytes:
        """The Prometheus text exposition of this registry."""
        return generate_latest(self.registry)
