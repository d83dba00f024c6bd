"""Batching across clients: many small requests become few large backend batches.

Each hosted reward has one `Batcher`. A request first takes what it can from the result cache,
then puts its remaining samples on the reward's queue and waits (one future per request). A
dispatcher task cuts the queue into batches of at most `max_batch` samples (waiting up to
`max_wait` seconds for a batch to fill) and runs at most `concurrency` of them at a time on the
executor, in a thread so the event loop keeps accepting requests. Identical samples that are
in flight at the same time are computed once and shared. Results are encoded to JSON once, in
that thread, and written to the cache behind the replies, when the reward is idle
(`rewardlab.serve.writer.CacheWriter`).

A group reward (`rewardlab.core.group_keys`) scores each sample against the rest of its group,
so its results cannot be cached or shared per sample, and its groups are the groups *of one
request*: a batch never mixes requests (two trainers' group "0" are different groups) and is
cut only between groups (a group larger than `max_batch` is one batch).

Backpressure: the queue is bounded (`max_queue` samples). A request that would overflow it is
refused with `Overloaded` (HTTP 429 + Retry-After) *before* anything is queued, so the server's
memory stays bounded and the client knows to slow down.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from rewardlab.compose.observer import ComponentTimes
from rewardlab.core import Reward, RewardResult, Sample, Status, group_keys, sample_digest, stamp
from rewardlab.core.jsontext import loads
from rewardlab.errors import BackendError, Overloaded
from rewardlab.runner.executors import Executor, InlineExecutor
from rewardlab.runner.groups import units_of
from rewardlab.runner.reward_log import BatchStats, RewardLogger
from rewardlab.serve.metrics import ServerMetrics
from rewardlab.serve.writer import CacheWriter
from rewardlab.store.cache import ResultStore, encode_row

__all__ = ["Batcher", "ScoreOutcome"]

# An inline batch that took less than this runs on the event loop (see `Batcher._inline_ok`).
_INLINE_LOOP_SECONDS = 0.02


@dataclass
class ScoreOutcome:
    """Results of one request, in request order, and how many were cached.

    Results stay encoded from the batch (or the cache) to the socket: a reply is the stored
    bytes joined, not 10,000 dicts decoded and encoded again. The one exception: a request for
    `scores` only, whose samples are neither cached nor shared, gets its `RewardResult`s as
    they are (encoding them would be wasted), so `encoded` holds bytes for every request that
    wants full results (``reply="results"``) and bytes or results otherwise.
    """

    encoded: list[bytes | RewardResult]
    cached: int

    @property
    def results(self) -> list[RewardResult]:
        """The results decoded (for callers that need the values, like `/get_reward`)."""
        return [x if isinstance(x, RewardResult) else RewardResult.from_dict(loads(x)) for x in self.encoded]


@dataclass(eq=False, slots=True)
class _Request:
    """One waiting request: its results fill in as batches finish; one future per request
    (not per sample: 10,000 asyncio futures cost more than a cheap reward)."""

    encoded: list[bytes | RewardResult]
    remaining: int
    future: asyncio.Future[None] = field(repr=False)


@dataclass(eq=False, slots=True)
class _Item:
    """One sample to compute, and every (request, position) waiting for it."""

    sample: Sample
    key: bytes  # `sample_digest`; b"" for a sample that is not looked up or shared
    waiters: list[tuple[_Request, int]] = field(default_factory=list, repr=False)
    store: bool = False  # a waiting request asked for the cache (`use_cache`): write the result
    encode: bool = True  # False only for an unshared sample of a `scores` request without cache
    unit_size: int = 0  # a group reward: the size of the group this item opens (0: not the first)


def _digest(sample: Sample) -> bytes:
    """The sample's cache key, or b"" for a sample nested too deep to serialise for hashing:
    it is computed (the reward decides what it makes of it), never cached or shared."""
    try:
        return sample_digest(sample)
    except RecursionError:
        return b""


class Batcher:
    """Queue, batch and compute the samples of one reward (see the module doc).

    Args:
        name: the reward's served name (metric label).
        reward: the reward (only its spec hash is used here; the executor computes).
        executor: where batches run.
        spec_hash: cache key part; results are stamped with it.
        cache: the result store, or ``None`` for no caching.
        metrics: the server's metrics.
        max_batch: samples per backend batch.
        max_wait: seconds to wait for a batch to fill before sending it part-full.
        max_queue: bound on queued samples (backpressure).
        concurrency: backend batches computed at the same time.
        cache_write_delay: idle seconds before results are written to the cache.
        component_times: the observer of `reward`'s parts (`core.observed`),
            drained into the component histograms after every batch.
        reward_logger: gets each computed batch's statistics under ``<name>/reward``
            (TensorBoard, W&B: `rewardlab.runner.reward_log`); cache hits are not computed
            batches and are not logged again.
    """

    def __init__(
        self,
        name: str,
        reward: Reward,
        executor: Executor,
        *,
        spec_hash: str,
        cache: ResultStore | None,
        metrics: ServerMetrics,
        max_batch: int = 256,
        max_wait: float = 0.002,
        max_queue: int = 16384,
        concurrency: int = 2,
        cache_write_delay: float = 0.05,
        component_times: ComponentTimes | None = None,
        reward_logger: RewardLogger | None = None,
    ):
        self.name = name
        self.reward_logger = reward_logger
        self.component_times = component_times
        self.reward = reward
        self.group_keys = group_keys(reward)
        self.executor = executor
        self.spec_hash = spec_hash
        self.stamp_columns = stamp(spec_hash).to_dict()  # what each computed row is stamped with
        self.cache = cache
        self.metrics = metrics
        self.max_batch = max_batch
        self.max_wait = max_wait
        self.max_queue = max_queue
        self.concurrency = concurrency
        self._queue: collections.deque[_Item] = collections.deque()
        self._inflight: dict[bytes, _Item] = {}
        self._wakeup: asyncio.Event | None = None
        self._slots: asyncio.Semaphore | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._batch_tasks: set[asyncio.Task[None]] = set()
        self._batch_seconds = 0.1  # running estimate, for Retry-After
        self._last_seconds = math.inf  # the first batch runs on a thread (see `_inline_ok`)
        self._running = 0  # batches computing now
        self._started: dict[int, float] = {}  # running batch -> when it started (monotonic)
        self._batch_ids = itertools.count()
        # Cache rows are written behind the replies, when the reward is idle (see `CacheWriter`);
        # lookups see the rows still waiting.
        failures = metrics.cache_write_failures.labels(name)
        self._writes = (
            CacheWriter(cache, spec_hash, name, idle_after=cache_write_delay, on_failure=failures.inc) if cache is not None else None
        )

    # -- the request side ------------------------------------------------------------------
    async def score(self, samples: Sequence[Sample], *, use_cache: bool = True, reply: str = "results") -> ScoreOutcome:
        """Results for `samples` in order, from the cache or computed in shared batches.

        With ``reply="scores"`` (only totals wanted) and nothing to cache, the results are not
        encoded to JSON (see `ScoreOutcome`).

        Raises:
            Overloaded: the queue cannot take the missing samples now.
            BackendError: the executor failed for a batch this request needed.
        """
        self._ensure_started()
        request = _Request([b""] * len(samples), 0, asyncio.get_running_loop().create_future())
        if self.group_keys:  # a result depends on the whole group: no cache, no sharing
            plan, hits = self._plan_groups(samples, reply), 0
            fresh = [item for _, item in plan]
        elif self.cache is not None and use_cache:
            plan, fresh, hits = await self._plan_with_keys(samples, request)
        else:  # nothing to look up: no keys, no thread hop (hashing costs as much as a cheap reward)
            fresh = [_Item(sample, b"", encode=reply != "scores") for sample in samples]
            plan, hits = list(enumerate(fresh)), 0
        if fresh and len(self._queue) + len(fresh) > self.max_queue:  # refuse before touching shared state
            self.metrics.rejected.labels(self.name, "queue_full").inc()
            retry = max(1.0, self._batch_seconds * len(self._queue) / max(1, self.max_batch))
            raise Overloaded(self.name, len(self._queue), self.max_queue, retry)
        for i, item in plan:
            item.waiters.append((request, i))
            item.store = item.store or (use_cache and not self.group_keys)
        request.remaining = len(plan)
        for item in fresh:
            if item.key:  # keyed items can be shared by identical samples of later requests
                self._inflight[item.key] = item
            self._queue.append(item)
        self.metrics.queue_depth.labels(self.name).set(len(self._queue))
        if fresh:
            assert self._wakeup is not None
            self._wakeup.set()
            if self._writes is not None:
                self._writes.set_busy(True)
        self.metrics.cache_hits.labels(self.name).inc(hits)
        if plan:
            await request.future  # raises the BackendError of a failed batch
        return ScoreOutcome(request.encoded, hits)

    async def _plan_with_keys(
        self, samples: Sequence[Sample], request: _Request
    ) -> tuple[list[tuple[int, _Item]], list[_Item], int]:
        """Fill cached positions of `request`; plan the rest, sharing identical samples
        (within the request and with batches in flight). Returns (plan, fresh items, hits)."""
        assert self.cache is not None
        if self.cache.lookups_wait_for_writes:
            keys, hits = await asyncio.to_thread(self._lookup, samples)
        else:  # WAL reader of its own: never waits for the writer thread, so no thread hop
            keys, hits = self._lookup(samples)
        plan: list[tuple[int, _Item]] = []
        fresh: list[_Item] = []
        mine: dict[bytes, _Item] = {}
        for i, (sample, key) in enumerate(zip(samples, keys, strict=True)):
            if key in hits:
                request.encoded[i] = hits[key]
                continue
            # identical samples are computed once; an unkeyed one (see `_lookup`) is never shared
            item = (mine.get(key) or self._inflight.get(key)) if key else None
            if item is None:
                item = _Item(sample, key)
                fresh.append(item)
            mine[key] = item
            plan.append((i, item))
        return plan, fresh, len(samples) - len(plan)

    def _plan_groups(self, samples: Sequence[Sample], reply: str) -> list[tuple[int, _Item]]:
        """A group reward's plan: every sample computed, queued group by group (see the module doc)."""
        plan: list[tuple[int, _Item]] = []
        for unit in units_of(samples, self.group_keys):
            for j, i in enumerate(unit):
                plan.append((i, _Item(samples[i], b"", encode=reply != "scores", unit_size=len(unit) if j == 0 else 0)))
        return plan

    def _lookup(self, samples: Sequence[Sample]) -> tuple[list[bytes], dict[bytes, bytes]]:
        assert self.cache is not None
        keys = [_digest(s) for s in samples]
        assert self._writes is not None
        hits = self._writes.lookup([k for k in keys if k])
        missing = [k for k in keys if k and k not in hits]
        if missing:
            hits.update(self.cache.get_encoded(self.spec_hash, missing))
        return keys, hits

    # -- the dispatcher --------------------------------------------------------------------
    def _ensure_started(self) -> None:
        loop = asyncio.get_running_loop()
        if self._task is not None and self._loop is loop and not self._task.done():
            return
        # First request, or a new event loop (each in-process test runs its own loop).
        self._loop = loop
        self._wakeup = asyncio.Event()
        self._slots = asyncio.Semaphore(self.concurrency)
        self._task = loop.create_task(self._dispatch(), name=f"batcher:{self.name}")

    async def _dispatch(self) -> None:
        assert self._wakeup is not None and self._slots is not None
        while True:
            await self._wakeup.wait()
            if len(self._queue) < self.max_batch and self.max_wait > 0:
                await asyncio.sleep(self.max_wait)  # let concurrent requests join this batch
            await self._slots.acquire()
            batch = self._take_batch()
            if not self._queue:
                self._wakeup.clear()
            self.metrics.queue_depth.labels(self.name).set(len(self._queue))
            if not batch:
                self._slots.release()
                continue
            self._running += 1
            task = asyncio.get_running_loop().create_task(self._run_batch(batch))
            self._batch_tasks.add(task)
            task.add_done_callback(self._batch_tasks.discard)

    def _take_batch(self) -> list[_Item]:
        """The next batch: up to `max_batch` queued items; for a group reward, whole groups of
        one request (a group larger than `max_batch` alone)."""
        if not self.group_keys:
            return [self._queue.popleft() for _ in range(min(self.max_batch, len(self._queue)))]
        batch: list[_Item] = []
        while self._queue:
            item = self._queue[0]
            if batch and item.waiters[0][0] is not batch[0].waiters[0][0]:
                break  # a group is the members of one request: never mix requests
            if batch and item.unit_size and len(batch) + item.unit_size > self.max_batch:
                break
            batch.append(self._queue.popleft())
        return batch

    async def _run_batch(self, batch: list[_Item]) -> None:
        assert self._slots is not None
        self.metrics.in_flight.labels(self.name).inc()
        batch_id = next(self._batch_ids)
        self._started[batch_id] = time.monotonic()
        try:
            if self._inline_ok():  # under 20 ms: on the loop, no thread hop
                results = self._compute(batch)
            else:
                results = await asyncio.to_thread(self._compute, batch)
        except Exception as exc:  # the executor itself failed: every waiting request learns why
            error = BackendError(f"backend failed for reward {self.name!r}: {type(exc).__name__}: {exc}")
            for item in batch:
                for request, _ in item.waiters:
                    if not request.future.done():
                        request.future.set_exception(error)
        else:
            for item, text in zip(batch, results, strict=True):
                for request, i in item.waiters:
                    request.encoded[i] = text
                    request.remaining -= 1
                    if request.remaining == 0 and not request.future.done():
                        request.future.set_result(None)
        finally:
            del self._started[batch_id]
            for item in batch:
                if self._inflight.get(item.key) is item:
                    del self._inflight[item.key]
            self.metrics.in_flight.labels(self.name).dec()
            self._slots.release()
            self._running -= 1
            if self._writes is not None and not self._queue and not self._running:
                self._writes.set_busy(False)  # idle: the cache writer may write now

    def _inline_ok(self) -> bool:
        """Compute on the event loop itself? Only an inline backend whose last batch took under
        `_INLINE_LOOP_SECONDS`: handing a cheap batch to a thread costs more than the batch (the
        two threads then take turns on the GIL), but a slow one must not stall other requests."""
        return isinstance(self.executor, InlineExecutor) and self._last_seconds < _INLINE_LOOP_SECONDS

    def _compute(self, batch: list[_Item]) -> list[bytes | RewardResult]:
        start = time.perf_counter()
        results = self.executor.map([item.sample for item in batch])
        if len(results) != len(batch):
            raise BackendError(f"executor returned {len(results)} results for {len(batch)} samples")
        encoded = [self._encode(r) if item.encode else r for item, r in zip(batch, results, strict=True)]
        seconds = time.perf_counter() - start
        self._batch_seconds = 0.8 * self._batch_seconds + 0.2 * seconds
        self._last_seconds = seconds
        self.metrics.batch_latency.labels(self.name).observe(seconds)
        self.metrics.batch_size.labels(self.name).observe(len(batch))
        self.metrics.cache_misses.labels(self.name).inc(len(batch))
        self.metrics.observe_results(self.name, results)
        if self.reward_logger is not None:
            self.reward_logger.log(BatchStats.of(results, prefix=f"{self.name}/reward"))
        if self.component_times is not None:
            self.metrics.observe_component_times(self.name, self.component_times.drain())
        if self.cache is not None:
            keep = [
                (item.key, text)
                for item, r, text in zip(batch, results, encoded, strict=True)
                # An error may pass on a retry: never cache it. `use_cache=false` neither reads
                # nor writes (the request's schema says so), unless another request waits too.
                # (`store` is only set on keyed items, which are always encoded)
                if r.status is not Status.ERROR and item.store and item.key and isinstance(text, bytes)
            ]
            self._write_later(keep)
        return encoded

    def _write_later(self, rows: list[tuple[bytes, bytes]]) -> None:
        if rows:  # e.g. `use_cache=false`: nothing to write
            assert self._writes is not None
            self._writes.add(rows)

    def _encode(self, result: RewardResult) -> bytes:
        # Stamped in the row, not with `RewardResult.stamped` (a dataclass copy per result).
        row = result.to_dict(copy=False)
        if result.stamp is None:
            row.update(self.stamp_columns)
        # A copy of the exact length: orjson returns bytes that keep its whole output buffer
        # (4 KiB for a 200-byte row, 64 KiB for a 5 KB one), and encoded rows live on, in the
        # replies waiting for a batch and in the cache's write-behind queue (up to 65,536 rows).
        return bytes(memoryview(encode_row(row)))

    @property
    def queued(self) -> int:
        """Samples waiting for a batch."""
        return len(self._queue)

    @property
    def running(self) -> int:
        """Batches computing now."""
        return self._running

    def stuck(self, after: float) -> int:
        """Running batches that started more than `after` seconds ago (every request waiting on
        them has timed out: the reward is hung, or far slower than the server is set up for)."""
        now = time.monotonic()
        return sum(1 for started in list(self._started.values()) if now - started > after)

    async def aclose(self, timeout: float | None = None) -> None:
        """Stop the dispatcher, wait up to `timeout` seconds (None: for ever) for running batches
        and waiting cache rows, then close the executor (the pool kills its workers). A batch
        still running then is left to fail: its thread cannot be stopped, the process can."""
        deadline = None if timeout is None else time.monotonic() + timeout

        def left() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        if self._loop is asyncio.get_running_loop():  # tasks of a finished loop are gone already
            if self._task is not None:
                self._task.cancel()
                await asyncio.gather(self._task, return_exceptions=True)
            if self._batch_tasks:
                await asyncio.wait(set(self._batch_tasks), timeout=left())
        if self._writes is not None:  # waiting cache rows land
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.to_thread(self._writes.close), left())
        await asyncio.to_thread(self.executor.close)
