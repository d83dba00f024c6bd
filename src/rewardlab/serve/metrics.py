"""Prometheus metrics of one server, in a registry of its own.

A per-app `CollectorRegistry` (not prometheus-client's global one) lets several apps live in one
process — tests, a notebook — without "duplicated timeseries" errors, and ``/metrics`` shows
only this server's numbers.
"""

from __future__ import annotations

import bisect
import collections
import math
import operator
import threading
from collections.abc import Iterable, Iterator, Sequence

try:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
    from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.compose.observer import Observation
from rewardlab.core import RewardResult, Status
from rewardlab.runner.pool import PoolStats

__all__ = ["ServerMetrics"]

# Buckets from 1 ms to 2 min: cheap text rewards sit at the low end, code execution at the top.
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
_STATUS = {s: s.value for s in Status}
_status_of = operator.attrgetter("status")


class BatchHistogram:
    """A Prometheus histogram that takes a batch of observations in one call.

    prometheus-client's `Histogram` takes one value per call, with a lock, three counter updates
    and a label lookup: for per-component times that is two calls per sample per component,
    more than a cheap reward costs. This keeps plain bucket counts per label set and is
    exported like any histogram (``_bucket``/``_sum``/``_count``) through the collector API.
    """

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], buckets: Sequence[float]):
        self.name, self.documentation, self.labelnames = name, documentation, list(labelnames)
        self._bounds = [*sorted(buckets), math.inf]
        self._lock = threading.Lock()
        self._series: dict[tuple[str, ...], tuple[list[int], list[float]]] = {}  # counts per bucket, [sum]

    def observe_many(self, labels: tuple[str, ...], values: Sequence[float]) -> None:
        """Add every value of `values` to the series `labels` (in `labelnames` order)."""
        self.observe_weighted(labels, list(collections.Counter(values).items()))

    def observe_weighted(self, labels: tuple[str, ...], weighted: Sequence[tuple[float, int]]) -> None:
        """Add each value `n` times, for every ``(value, n)`` of `weighted`."""
        bounds = self._bounds
        counts: collections.Counter[int] = collections.Counter()
        total = 0.0
        for value, n in weighted:
            counts[bisect.bisect_left(bounds, value)] += n  # le: value <= bound
            total += value * n
        with self._lock:
            series = self._series.get(labels)
            if series is None:
                series = self._series[labels] = ([0] * len(bounds), [0.0])
            for index, n in counts.items():
                series[0][index] += n
            series[1][0] += total

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        with self._lock:
            snapshot = [(labels, list(c), s[0]) for labels, (c, s) in self._series.items()]
        for labels, counts, total in snapshot:
            cumulative, buckets = 0, []
            for bound, n in zip(self._bounds, counts, strict=True):
                cumulative += n
                buckets.append(("+Inf" if bound == math.inf else repr(float(bound)), float(cumulative)))
            family.add_metric(list(labels), buckets, total)
        yield family

    def describe(self) -> Iterator[Metric]:
        yield HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)


class _PoolCounters:
    """``rewardlab_worker_restarts{reward, reason}``: worker processes replaced, read from each
    worker pool's own counts (`rewardlab.runner.pool.PoolStats`) when scraped, so the numbers are
    the pool's, not a copy that could drift. Reasons: ``timeout`` (killed at the per-sample
    timeout) and ``crash`` (the worker died: a segfault, ``os._exit``, the OOM killer, kill -9)."""

    name = "rewardlab_worker_restarts"
    documentation = "worker processes replaced, by reward and reason (timeout: killed at the per-sample timeout; crash: died)"

    def __init__(self) -> None:
        self._pools: dict[str, PoolStats] = {}

    def watch(self, reward: str, stats: PoolStats) -> None:
        """Export `stats` (a pool's live counts) under `reward`."""
        self._pools[reward] = stats

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=["reward", "reason"])
        for reward, stats in list(self._pools.items()):
            family.add_metric([reward, "timeout"], float(stats.timeouts))
            family.add_metric([reward, "crash"], float(stats.crashes))
        yield family

    def describe(self) -> Iterator[Metric]:
        yield CounterMetricFamily(self.name, self.documentation, labels=["reward", "reason"])


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
        self.component_seconds = BatchHistogram(
            "rewardlab_component_seconds",
            "per-sample time of a component, as the composite's observer saw it (a batch call's "
            "time shared by its samples)",
            ["reward", "component"], _BUCKETS,
        )
        r.register(self.component_seconds)
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
        self.cache_write_failures = Counter(
            "rewardlab_cache_write_failures", "results that could not be written to the cache (a full disk, a locked "
            "file): answered, but computed again when asked for", ["reward"], registry=r,
        )
        self.worker_restarts = _PoolCounters()
        r.register(self.worker_restarts)
        self.rejected = Counter(
            "rewardlab_rejected", "requests refused for backpressure or limits", ["reward", "reason"], registry=r
        )

    def observe_results(self, reward: str, results: Sequence[RewardResult]) -> None:
        """Count statuses and error kinds of the totals and of every component.

        Counted with `collections.Counter` over the batch first (its counting loop is C): one
        `labels().inc()` per label set, not per sample (prometheus-client takes a lock per call).
        """
        statuses = collections.Counter(map(_status_of, results))
        parts = collections.Counter(
            (component, sub.status) for result in results for component, sub in result.components.items()
        )
        if statuses[Status.ERROR] or any(status is Status.ERROR for _, status in parts):
            self._count_errors(reward, results)
        for status, n in statuses.items():
            self.samples.labels(reward, _STATUS[status]).inc(n)
        for (component, status), n in parts.items():
            self.component_results.labels(reward, component, _STATUS[status]).inc(n)

    def observe_component_times(self, reward: str, observations: Iterable[Observation]) -> None:
        """Feed the component histograms from an observed reward's observer (`core.observed`).

        A call that scored `n` samples in `s` seconds counts as `n` samples of `s / n` each (a
        batched reward cannot be timed per sample).
        """
        by_component: collections.defaultdict[str, list[tuple[float, int]]] = collections.defaultdict(list)
        for component, seconds, samples in observations:
            if samples > 0:
                by_component[component].append((seconds / samples, samples))
        for component, weighted in by_component.items():
            self.component_seconds.observe_weighted((reward, component), weighted)

    def _count_errors(self, reward: str, results: Sequence[RewardResult]) -> None:
        errors: collections.Counter[tuple[str, str]] = collections.Counter()
        for result in results:
            if result.error is not None:
                errors["", result.error.kind.value] += 1
            for component, sub in result.components.items():
                if sub.error is not None:
                    errors[component, sub.error.kind.value] += 1
        for (component, kind), n in errors.items():
            self.errors.labels(reward, component, kind).inc(n)

    def render(self) -> bytes:
        """The Prometheus text exposition of this registry."""
        return generate_latest(self.registry)
