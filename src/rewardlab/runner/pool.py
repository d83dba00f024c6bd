"""A pool of worker processes with per-item timeouts that kill, replace and carry on.

Why not `concurrent.futures.ProcessPoolExecutor`: it cannot kill one worker stuck in C code
(a sympy simplification, a regex, a tokenizer) and breaks the whole pool when one dies. Here
every worker reports which item it is on and since when (a shared array, no messages), so the
parent can kill exactly the stuck worker, give that item an `error/timeout`, start a new worker
and re-queue the rest of its chunk. A worker that dies (segfault, `os._exit`, OOM kill) gives
its current item `error/crash` the same way; one that dies before starting its chunk has its
chunk sent again, once, before the chunk's first item is blamed. Timeouts never use `signal.alarm`: it works only in the main thread and cannot interrupt C code.

Items travel in chunks so cheap rewards are not dominated by inter-process messages; the chunk
size adapts to aim at ~50 ms of work per chunk. Results come back in input order.

Workers are forked (Linux), so any reward object works without pickling; items and results
are pickled. They are forked by the pool's fork server (`_pool_forker`), a process forked once
when the pool starts: a replacement worker forked hours later shares the same clean pages as
the first ones and holds none of the sockets a server has opened since. An item that cannot be
pickled (nested too deep, a lock, a lambda) never reaches a worker: it gets
`error/invalid_input` and the rest of its chunk is sent. A result that cannot be is
that item's `error/crash`. A worker is given a chunk only once the chunk was sent, and a pass
that ends early (an exception, a caller that stops reading) kills the workers still on its
work, so no worker is left waiting on, or answering into, a pass that is over. A worker that
does not start a chunk within the timeout (at least 3 s) is replaced and the chunk sent again.

The worker side (what runs in a forked worker) is `_pool_worker`; one pass over the items on
this side (chunks sent, answers, timeouts and deaths) is `_pool_dispatch`.
"""

from __future__ import annotations

import contextlib
import itertools
import mmap
import multiprocessing as mp
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

from rewardlab.core import ErrorKind, Reward, RewardResult, Sample, group_keys
from rewardlab.errors import ConfigError, RunnerError
from rewardlab.runner import _pool_forker
from rewardlab.runner._pool_dispatch import _MAX_CHUNK, _Dispatch, _Worker

# re-exported (`as` keeps it explicit) for the pool's tests, which hand workers tasks directly
from rewardlab.runner._pool_dispatch import _Task as _Task
from rewardlab.runner._pool_worker import _IDLE, _worker_main
from rewardlab.runner.groups import scatter, units_of

Item = TypeVar("Item")
Out = TypeVar("Out")
Ret = TypeVar("Ret")

_TARGET_CHUNK_SECONDS = 0.05
_FORK_LOCK = threading.Lock()  # see `ProcessPool._fork`


def _new_fork_lock() -> None:
    """A process forked while another thread held the fork lock (the program's own fork, say)
    starts with a free one: that thread does not exist in it, and would never release it."""
    global _FORK_LOCK
    _FORK_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_new_fork_lock)


def default_workers() -> int:
    """All cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def pool_size(workers: int | None, timeout: float | None) -> int:
    """Worker processes for `workers` and `timeout`: ``None`` is all cores; ``0`` is none (this
    process) unless a timeout is set, which only a killable process can enforce: then one.

    This is the pool's half of the one rule of where rewards run
    (`rewardlab.runner.executors.execution_plan`)."""
    if workers is None:
        return default_workers()
    return 1 if workers == 0 and timeout is not None else workers


@dataclass
class PoolStats:
    """What happened to the pool: how many workers were killed or died and why."""

    timeouts: int = 0
    crashes: int = 0
    restarts: int = 0
    chunks: int = 0
    items: int = 0
    per_kind: dict[str, int] = field(default_factory=dict)


class ProcessPool(Generic[Item, Out]):
    """Runs `job(item) -> out` over items in worker processes, in order, with timeouts.

    Args:
        job: the function run in the workers, once per item.
        on_error: builds the output for an item whose worker timed out or died:
            `on_error(item, ErrorKind.TIMEOUT | ErrorKind.CRASH, message) -> out`.
        workers: number of processes (default: all cores). 0 runs in this process (useful for
            debugging and for tiny batches), unless `timeout` is set: a timeout is always
            enforced, so then one worker process runs the items (`pool_size`).
        timeout: seconds one item may take (wall clock) before its worker is killed.
        chunk_size: items per message; default adapts to ~50 ms of work per chunk.
        max_tasks_per_worker: recycle a worker after this many chunks (bounds slow leaks).
        item_weight: how many timeouts one item may take (default 1): a whole group of samples
            is one item and gets `timeout` per sample.
    """

    def __init__(
        self,
        job: Callable[[Item], Out],
        on_error: Callable[[Item, ErrorKind, str], Out],
        *,
        workers: int | None = None,
        timeout: float | None = None,
        chunk_size: int | None = None,
        max_tasks_per_worker: int | None = None,
        item_weight: Callable[[Item], float] | None = None,
    ):
        if timeout is not None and timeout <= 0:
            raise ConfigError(f"timeout must be positive, got {timeout}")
        if workers is not None and workers < 0:
            raise ConfigError(f"workers must be >= 0, got {workers}")
        self.job, self.on_error = job, on_error
        self.n_workers = pool_size(workers, timeout)
        self.timeout = timeout
        self.fixed_chunk = chunk_size
        self.max_tasks_per_worker = max_tasks_per_worker
        self.item_weight = item_weight
        self.stats = PoolStats()
        self._workers: list[_Worker] = []
        self._ctx = mp.get_context("fork")
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._seconds_per_item: float | None = None
        self._closed = False
        self._spawner: ThreadPoolExecutor | None = None
        self._forker: _pool_forker.ForkServer | None = None
        self._forker_finalizer: Callable[[], Any] = lambda: None
        # One progress slot [index, started, weight] per worker, in memory shared with every
        # process forked from here on (the fork server and its workers): a replacement takes
        # over its predecessor's slot once that one has exited.
        self._progress_map = mmap.mmap(-1, 3 * 8 * max(1, self.n_workers))
        shared = memoryview(self._progress_map).cast("d")
        self._slots = [shared[3 * k : 3 * k + 3] for k in range(max(1, self.n_workers))]

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> ProcessPool[Item, Out]:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the workers now (otherwise the first `imap` does)."""
        if self._closed:
            raise RunnerError("this pool is closed")
        while len(self._workers) < self.n_workers:
            self._workers.append(self._spawn(len(self._workers)))

    def start_fork_server(self) -> None:
        """Start the process the workers will be forked from now, before this process opens
        sockets or grows (a server calls it before it listens); the first `start` or `imap`
        does otherwise. No-op without workers or where there are no pidfds (not Linux)."""
        if self._closed:
            raise RunnerError("this pool is closed")
        if self.n_workers and self._forker is None and _pool_forker.supported():
            self._in_pool_thread(self._ensure_forker)

    def close(self) -> None:
        """Stop every worker; safe to call twice."""
        self._closed = True
        for w in self._workers:
            with contextlib.suppress(OSError, BrokenPipeError):
                w.conn.send(None)
        deadline = time.monotonic() + 1.0
        for w in self._workers:
            w.process.join(max(0.0, deadline - time.monotonic()))
            if w.process.is_alive():
                w.process.kill()
                w.process.join()
            _release(w)
        self._workers.clear()
        if self._forker is not None:
            self._forker_finalizer()
            self._forker = None
        if self._spawner is not None:
            self._spawner.shutdown(wait=False)
            self._spawner = None

    def _spawn(self, slot: int) -> _Worker:
        return self._in_pool_thread(lambda: self._fork(slot))

    def _in_pool_thread(self, call: Callable[[], Ret]) -> Ret:
        # Forks happen in the pool's own thread, which lives as long as the pool: a process is
        # SIGKILLed when the thread that forked it ends (`_exit_with_parent`), and the thread
        # calling `map` may be short-lived (a trainer's rollout thread, `asyncio.to_thread`).
        if self._spawner is None:
            self._spawner = ThreadPoolExecutor(1, thread_name_prefix="rewardlab-pool")
        return self._spawner.submit(call).result()

    def _fork(self, slot: int) -> _Worker:
        progress = self._slots[slot]
        progress[0], progress[1], progress[2] = 0.0, _IDLE, 1.0  # its predecessor's values are stale
        if not _pool_forker.supported():
            return self._fork_here(progress)
        try:
            process, conn = self._ensure_forker().spawn(slot)
        except RunnerError:  # the fork server died or hung (killed by hand, the OOM killer):
            if self._forker is not None:  # a new one, forked from this process as it is now
                self._forker_finalizer()
                self._forker = None
            process, conn = self._ensure_forker().spawn(slot)
        return _Worker(process, conn, progress)

    def _ensure_forker(self) -> _pool_forker.ForkServer:
        if self._forker is None or not self._forker.alive():
            if self._forker is not None:
                self._forker_finalizer()
            with _FORK_LOCK:
                self._forker = _pool_forker.ForkServer(self._run_worker, self._slots)
            # a pool dropped unclosed still stops and reaps its fork server (which holds no
            # reference to the pool here)
            self._forker_finalizer = weakref.finalize(self, self._forker.close)
        return self._forker

    def _run_worker(self, conn: Connection, progress: Any) -> None:
        _worker_main(conn, self.job, self.on_error, progress, self.item_weight)

    def _fork_here(self, progress: Any) -> _Worker:
        # Without pidfds, workers are forked from this process. One fork at a time over every
        # pool: a worker forked by another pool while this one's pipe end and sentinel are
        # still open here would hold copies of them, so this worker's death would close
        # neither (no EOF, no sentinel) while that one lives.
        with _FORK_LOCK:
            parent, child = self._ctx.Pipe()
            process = self._ctx.Process(
                target=_worker_main, args=(child, self.job, self.on_error, progress, self.item_weight), daemon=True
            )
            process.start()
            child.close()
        return _Worker(process, parent, progress)

    # -- running -----------------------------------------------------------------------------
    def map(self, items: Iterable[Item]) -> list[Out]:
        """All outputs, in input order."""
        return list(self.imap(items))

    def imap(self, items: Iterable[Item]) -> Iterator[Out]:
        """Outputs in input order as they become available; reads `items` lazily."""
        if self.n_workers == 0:
            yield from self._run_inline(items)
            return
        with self._lock:
            self.start()
            yield from _Dispatch(self, iter(items)).run()

    def _run_inline(self, items: Iterable[Item]) -> Iterator[Out]:
        for item in items:
            try:
                yield self.job(item)
            except Exception as exc:
                yield self.on_error(item, ErrorKind.CRASH, f"{type(exc).__name__}: {exc}")

    def chunk_size(self, remaining_hint: int | None) -> int:
        if self.fixed_chunk:
            return self.fixed_chunk
        if self._seconds_per_item is None:
            return 4  # first chunks are small: learn the speed before committing
        size = int(_TARGET_CHUNK_SECONDS / max(self._seconds_per_item, 1e-7))
        if remaining_hint is not None:  # keep every worker busy at the end of a batch
            size = min(size, max(1, remaining_hint // self.n_workers))
        return max(1, min(_MAX_CHUNK, size))

    def observe(self, seconds: float, n: int) -> None:
        per_item = seconds / max(n, 1)
        old = self._seconds_per_item
        self._seconds_per_item = per_item if old is None else 0.7 * old + 0.3 * per_item

    def replace(self, worker: _Worker) -> _Worker:
        """Kill `worker` and start a new one in its place.

        Raises:
            RunnerError: the pool was closed (its workers killed) while a pass was running.
        """
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join()
        _release(worker)
        if self._closed:
            raise RunnerError("the worker pool was closed while a batch was running (the server is shutting down)")
        slot = self._workers.index(worker)
        fresh = self._spawn(slot)
        self._workers[slot] = fresh
        self.stats.restarts += 1
        return fresh


# Held while a worker's descriptors are closed: a pool closing under a running batch releases a
# dying worker from two threads (the closing one, and the batch's, replacing it), and a second
# close of a descriptor number fails, or closes whatever the process has opened under it since.
_RELEASING = threading.Lock()


def _release(worker: _Worker) -> None:
    """Close this process's ends of an exited worker: its pipe and its pidfd (or sentinel)."""
    with _RELEASING:
        if not worker.conn.closed:
            _pool_forker._POOL_FDS.discard(worker.conn.fileno())
            worker.conn.close()
        with contextlib.suppress(ValueError):  # a `multiprocessing.Process` still running
            worker.process.close()


def _failure_result(item: object, kind: ErrorKind, message: str) -> RewardResult:
    return RewardResult.failure(kind, message)


class GroupScore:
    """The workers' job for a group reward: one whole unit of samples -> its results."""

    def __init__(self, reward: Reward):
        self.reward = reward

    def __call__(self, unit: list[Sample]) -> list[RewardResult]:
        return self.reward.score_batch(unit)

    @staticmethod
    def on_error(unit: list[Sample], kind: ErrorKind, message: str) -> list[RewardResult]:
        """Every member of a unit whose worker timed out or died gets the error."""
        return [RewardResult.failure(kind, message)] * len(unit)


class WorkerPool:
    """A long-lived pool that scores `Sample`s with one Reward in worker processes.

        with WorkerPool(reward, workers=4, timeout=10) as pool:
            results = pool.map(samples)   # one RewardResult per sample, in order

    A sample whose worker hangs past `timeout` gets `error/timeout`; one whose worker dies
    gets `error/crash`; the worker is replaced and the rest of the batch is scored.
    `map` may be called from several threads; calls are served one at a time.
    """

    def __init__(self, reward: Reward, *, workers: int | None = None, timeout: float | None = None, chunk_size: int | None = None):
        self.reward = reward
        self.group_keys = group_keys(reward)
        self._pool: ProcessPool[Any, Any]
        if self.group_keys:  # a group reward: whole groups travel as one item (`runner.groups`)
            job = GroupScore(reward)
            self._pool = ProcessPool(job, job.on_error, workers=workers, timeout=timeout, chunk_size=chunk_size, item_weight=len)
        else:
            self._pool = ProcessPool(reward.score, _failure_result, workers=workers, timeout=timeout, chunk_size=chunk_size)

    @property
    def stats(self) -> PoolStats:
        return self._pool.stats

    def __enter__(self) -> WorkerPool:
        self._pool.start()
        return self

    def start_fork_server(self) -> None:
        """Start the process the workers are forked from now (`ProcessPool.start_fork_server`)."""
        self._pool.start_fork_server()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def map(self, samples: Iterable[Sample], *, progress: Callable[[int], None] | None = None) -> list[RewardResult]:
        """One result per sample, in order; a group reward's groups are scored whole.
        `progress(n)` is called as `n` more samples are scored (a whole group at a time)."""
        if not self.group_keys:
            if progress is None:
                return self._pool.map(samples)
            results = []
            for result in self._pool.imap(samples):
                results.append(result)
                progress(1)
            return results
        samples = list(samples)
        units = units_of(samples, self.group_keys)
        outs = []
        for unit, out in zip(units, self._pool.imap([[samples[i] for i in unit] for unit in units]), strict=True):
            outs.append(out)
            if progress is not None:
                progress(len(unit))
        return scatter(units, outs, len(samples))

    def imap(self, samples: Iterable[Sample]) -> Iterator[RewardResult]:
        """Results in order, as they are ready (a group reward's: after the whole batch)."""
        if self.group_keys:
            return iter(self.map(samples))
        return self._pool.imap(samples)

    def close(self) -> None:
        self._pool.close()
