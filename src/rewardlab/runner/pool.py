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
are pickled. An item that cannot be (nested too deep, a lock, a lambda) never reaches a worker:
it gets `error/invalid_input` and the rest of its chunk is sent. A result that cannot be is
that item's `error/crash`. A worker is given a chunk only once the chunk was sent, and a pass
that ends early (an exception, a caller that stops reading) kills the workers still on its
work, so no worker is left waiting on, or answering into, a pass that is over. A worker that
does not start a chunk within the timeout (at least 3 s) is replaced and the chunk sent again.
"""

from __future__ import annotations

import contextlib
import faulthandler
import itertools
import multiprocessing as mp
import os
import pickle
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler
from typing import Any, Generic, TypeVar

from rewardlab.core import ErrorKind, Reward, RewardResult, Sample, group_keys
from rewardlab.errors import ConfigError, RunnerError
from rewardlab.runner.groups import scatter, units_of

Item = TypeVar("Item")
Out = TypeVar("Out")

_TARGET_CHUNK_SECONDS = 0.05
_MAX_CHUNK = 1024
_POLL_SECONDS = 0.02
_IDLE = 0.0
_NOT_STARTED = -1.0  # progress[0] of a worker sent a chunk it has not started yet
_FORK_LOCK = threading.Lock()  # see `ProcessPool._fork`


def _new_fork_lock() -> None:
    """A process forked while another thread held the fork lock (the program's own fork, say)
    starts with a free one: that thread does not exist in it, and would never release it."""
    global _FORK_LOCK
    _FORK_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_new_fork_lock)
# A worker sent a chunk may take this long to start it even when the timeout is shorter: a
# worker just forked on a loaded machine may wait that long for a core.
_START_SECONDS = 3.0


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


def _exit_with_parent() -> None:
    """Ask Linux to SIGKILL this worker when the thread that forked it dies (PR_SET_PDEATHSIG).

    A forked worker inherits every descriptor of its parent, its own pipe's parent end and a
    server's listening socket included: if the parent is SIGKILLed, the worker would wait on
    that pipe forever and keep the port bound, so a restarted server could not listen.
    No-op where prctl is unavailable (not Linux).
    """
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _worker_main(
    conn: Connection, job: Callable[[Any], Any], on_error: Callable[[Any, ErrorKind, str], Any], progress: Any,
    weight: Callable[[Any], float] | None = None,
) -> None:
    """Runs in the child: score chunks until told to stop. `progress` = [index, started, weight]."""
    # A crash is reported to the parent as error/crash; a C traceback dump from the inherited
    # faulthandler would only add noise to the parent's stderr.
    faulthandler.disable()
    _exit_with_parent()
    while True:
        try:
            message = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if message is None:
            return
        task_id, items = message
        outs = []
        for k, item in enumerate(items):
            progress[0] = k
            if weight is not None:  # idle while the budget changes, so the parent never pairs
                progress[1] = _IDLE  # the last item's start with this item's (smaller) budget
                progress[2] = weight(item)
            progress[1] = time.monotonic()
            try:
                outs.append(job(item))
            except Exception as exc:  # the job should not raise; never lose the row if it does
                outs.append(on_error(item, ErrorKind.CRASH, f"{type(exc).__name__}: {exc}"))
        progress[1] = _IDLE
        conn.send_bytes(_reply_bytes(task_id, items, outs, on_error))


def _reply_bytes(task_id: int, items: list[Any], outs: list[Any], on_error: Callable[[Any, ErrorKind, str], Any]) -> memoryview:
    """The pickled reply to a chunk; an output that cannot be pickled (a reward returned an
    unpicklable object, or one nested too deep) becomes that item's `error/crash`, so the
    other items' outputs still come back and the worker lives on."""
    try:
        return ForkingPickler.dumps((task_id, outs))
    except Exception:  # any pickling failure (TypeError, RecursionError...): found per item below
        pass
    sendable = []
    for item, out in zip(items, outs, strict=True):
        try:
            ForkingPickler.dumps(out)
        except Exception as exc:
            out = on_error(item, ErrorKind.CRASH, f"the result cannot be sent back from the worker process: {_why(exc)}")
        sendable.append(out)
    return ForkingPickler.dumps((task_id, sendable))


def _why(exc: BaseException) -> str:
    """Why a value could not be pickled, in words a user can act on."""
    if isinstance(exc, RecursionError):
        return f"it is nested too deep to pickle ({type(exc).__name__}: {exc})"
    return f"it cannot be pickled ({type(exc).__name__}: {exc})"


@dataclass
class _Worker:
    process: Any
    conn: Connection
    progress: Any
    task: _Task[Any] | None = None
    sent_at: float = 0.0
    tasks_done: int = 0


@dataclass
class _Task(Generic[Item]):
    id: int
    entries: list[tuple[int, Item]]  # (position in the stream, item)


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
            self._workers.append(self._spawn())

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
            w.conn.close()
        self._workers.clear()
        if self._spawner is not None:
            self._spawner.shutdown(wait=False)
            self._spawner = None

    def _spawn(self) -> _Worker:
        # Forked from the pool's own thread, which lives as long as the pool: a worker is
        # SIGKILLed when the thread that forked it ends (`_exit_with_parent`), and the thread
        # calling `map` may be short-lived (a trainer's rollout thread, `asyncio.to_thread`).
        if self._spawner is None:
            self._spawner = ThreadPoolExecutor(1, thread_name_prefix="rewardlab-pool")
        return self._spawner.submit(self._fork).result()

    def _fork(self) -> _Worker:
        # One fork at a time in this process, over every pool: a worker forked by another pool
        # while this one's pipe end and sentinel are still open here would hold copies of them,
        # so this worker's death would close neither (no EOF, no sentinel) while that one lives.
        with _FORK_LOCK:
            parent, child = self._ctx.Pipe()
            progress = self._ctx.Array("d", [0.0, _IDLE, 1.0], lock=False)
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
        worker.conn.close()
        if self._closed:
            raise RunnerError("the worker pool was closed while a batch was running (the server is shutting down)")
        fresh = self._spawn()
        self._workers[self._workers.index(worker)] = fresh
        self.stats.restarts += 1
        return fresh


class _Dispatch(Generic[Item, Out]):
    """One pass over an item stream: feeds workers, watches them, yields in order."""

    def __init__(self, pool: ProcessPool[Item, Out], items: Iterator[Item]):
        self.pool = pool
        self.items = items
        self.exhausted = False
        self.position = 0  # next stream position to read
        self.emitted = 0  # next stream position to yield
        self.queue: deque[list[tuple[int, Item]]] = deque()  # re-queued work first
        self.done: dict[int, Out] = {}
        self.resent: set[int] = set()  # first positions of chunks sent again (see `_resend`)
        self.limit = pool.n_workers * _MAX_CHUNK * 2  # read-ahead bound (memory)
        length = getattr(items, "__length_hint__", None)
        self.total_hint = length() if length else None

    def run(self) -> Iterator[Out]:
        try:
            while True:
                self._feed()
                while self.emitted in self.done:
                    yield self.done.pop(self.emitted)
                    self.emitted += 1
                busy = [w for w in self.pool._workers if w.task is not None]
                if not busy and self.exhausted and not self.queue:
                    return
                self._collect(busy)
        except OSError as exc:  # a pipe `close` closed under this pass: say why, as `replace` does
            if not self.pool._closed:
                raise
            raise RunnerError("the worker pool was closed while a batch was running (the server is shutting down)") from exc
        finally:
            self._abandon()

    def _abandon(self) -> None:
        """A pass that ends early (the caller stopped reading, or an error) leaves no worker
        on its work: a late answer would land in the next pass's positions, and a worker
        waiting for a pass that is over would never be given work again."""
        for w in list(self.pool._workers):
            if w.task is not None:
                w.task = None
                if not self.pool._closed:
                    self.pool.replace(w)

    def _next_chunk(self) -> list[tuple[int, Item]] | None:
        if self.queue:
            return self.queue.popleft()
        if self.exhausted or self.position - self.emitted > self.limit:
            return None
        remaining = self.total_hint - self.position if self.total_hint is not None else None
        size = self.pool.chunk_size(remaining)
        chunk = list(zip(range(self.position, self.position + size), itertools.islice(self.items, size), strict=False))
        self.position += len(chunk)
        if len(chunk) < size:
            self.exhausted = True
        return chunk or None

    def _feed(self) -> None:
        """Give every idle worker a chunk. A worker holds a task only once its chunk was sent:
        a chunk that cannot be pickled, or a pipe that breaks, leaves no worker waiting for an
        answer that will never come."""
        for w in list(self.pool._workers):
            if w.task is not None:
                continue
            sent = self._send_next(w)
            if sent is None:
                return

    def _send_next(self, w: _Worker) -> bool | None:
        """Send `w` its next chunk: True once sent, False if the worker had died (replaced,
        chunk re-queued), None when there is no work to send."""
        while True:
            chunk = self._next_chunk()
            if chunk is None:
                return None
            task_id = next(self.pool._ids)
            encoded = self._encode(task_id, chunk)
            if encoded is not None:
                break
        payload, chunk = encoded
        if not w.process.is_alive():  # died while idle (OOM killer, kill -9): no item is to blame
            self.pool.stats.crashes += 1
            w = self.pool.replace(w)
        w.progress[0] = _NOT_STARTED  # the worker sets the index of each item as it starts it
        try:
            w.conn.send_bytes(payload)
        except OSError:  # the worker died between chunks: no item of this chunk ran
            self.queue.appendleft(chunk)
            self.pool.stats.crashes += 1
            self.pool.replace(w)
            return False
        w.task, w.sent_at = _Task(task_id, chunk), time.monotonic()
        return True

    def _encode(self, task_id: int, chunk: list[tuple[int, Item]]) -> tuple[memoryview, list[tuple[int, Item]]] | None:
        """The chunk pickled for a worker, and the entries it holds. An item that cannot be
        pickled (nested too deep, an open file, a lambda) cannot reach a worker: it gets
        `error/invalid_input` here and the rest of the chunk is sent. None: nothing left to send."""
        try:
            return ForkingPickler.dumps((task_id, [item for _, item in chunk])), chunk
        except Exception:  # any pickling failure (TypeError, RecursionError...): found below
            pass
        sendable = self._sendable(task_id, chunk)
        if not sendable:
            return None
        try:
            return ForkingPickler.dumps((task_id, [item for _, item in sendable])), sendable
        except Exception:  # each part travels but not all together: send one item
            if len(sendable) > 1:
                self.queue.appendleft(sendable[1:])
            return ForkingPickler.dumps((task_id, [sendable[0][1]])), sendable[:1]

    def _sendable(self, task_id: int, entries: list[tuple[int, Item]]) -> list[tuple[int, Item]]:
        """The entries that can be pickled; the others are refused (`_refuse`). Found by halving:
        a part that pickles whole is kept without looking at its items one by one, so a chunk of
        n items with one bad item costs about two pickles of the chunk, not n single-item ones."""
        if len(entries) > 1:
            half = len(entries) // 2
            parts = [entries[:half], entries[half:]]
        else:
            parts = [entries]
        sendable: list[tuple[int, Item]] = []
        for part in parts:
            try:
                ForkingPickler.dumps((task_id, [item for _, item in part]))  # in the shape it travels in
            except Exception as exc:
                if len(part) == 1:
                    self._refuse(*part[0], exc)
                else:
                    sendable += self._sendable(task_id, part)
            else:
                sendable += part
        return sendable

    def _refuse(self, pos: int, item: Item, exc: BaseException) -> None:
        message = f"the input cannot be sent to a worker process: {_why(exc)}"
        self.done[pos] = self.pool.on_error(item, ErrorKind.INVALID_INPUT, message)
        kind = ErrorKind.INVALID_INPUT.value
        self.pool.stats.per_kind[kind] = self.pool.stats.per_kind.get(kind, 0) + 1

    def _collect(self, busy: list[_Worker]) -> None:
        by_conn = {w.conn: w for w in busy}
        by_sentinel = {w.process.sentinel: w for w in busy}
        ready = wait([*by_conn, *by_sentinel], timeout=_POLL_SECONDS)
        arrived: list[tuple[_Task[Item], bytes]] = []
        for obj in ready:
            w = by_conn.get(obj)  # type: ignore[call-overload]
            if w is not None and w.task is not None and w.conn.poll():
                self._receive(w, arrived)
        if arrived:
            # Give the idle workers their next chunk *before* unpickling what came back, so
            # they compute while this process decodes (the turnaround was ~15% of a chunk).
            self._feed()
            for task, payload in arrived:
                self._store(task, payload)
        for obj in ready:
            w = by_sentinel.get(obj)
            if w is not None and w.task is not None and not w.process.is_alive():
                self._fail(w, ErrorKind.CRASH, f"worker process died (exit code {w.process.exitcode})")
        for w in busy:  # dead, yet neither its sentinel nor its pipe said so: another process
            # holds copies of their ends (a process the reward started, which outlives it)
            if w.task is not None and not w.process.is_alive() and not w.conn.poll():
                self._fail(w, ErrorKind.CRASH, f"worker process died (exit code {w.process.exitcode})")
        if self.pool.timeout is not None:
            now = time.monotonic()
            for w in busy:
                started, weight = w.progress[1], w.progress[2]
                if w.task is not None and started != _IDLE and now - started > self.pool.timeout * weight:
                    self._fail(w, *self._timed_out(w, weight))
                elif w.task is not None and w.progress[0] == _NOT_STARTED and now - w.sent_at > max(self.pool.timeout, _START_SECONDS):
                    # Alive but not on its chunk: stopped, or hung before its first item (a lock
                    # held at fork time). The item timeout never starts; this bounds the wait. The
                    # chunk is sent again, blaming no item (`_fail`, as for a death before it).
                    limit = max(self.pool.timeout, _START_SECONDS)
                    self._fail(w, ErrorKind.CRASH, f"worker process did not start its chunk within {limit:g}s; killed")

    def _timed_out(self, w: _Worker, weight: float) -> tuple[ErrorKind, str]:
        """Kill `w`, past its item's timeout, and say why it stopped. A worker that had exited on
        its own meanwhile (its exit code is not the kill's) died under its item: a crash. Its
        death was not seen yet because an exit takes time (a big forked process is torn down
        page by page), which on a loaded machine can outlast the timeout."""
        if w.process.is_alive():
            w.process.kill()
        w.process.join()
        code = w.process.exitcode
        if code is not None and code != -signal.SIGKILL:
            return ErrorKind.CRASH, f"worker process died (exit code {code})"
        return ErrorKind.TIMEOUT, _timeout_message(self.pool.timeout or 0.0, weight)

    def _receive(self, w: _Worker, arrived: list[tuple[_Task[Item], bytes]]) -> None:
        """Take a finished chunk's bytes off the pipe and free the worker (decoding is later)."""
        try:
            payload = w.conn.recv_bytes()
        except (EOFError, OSError):
            w.process.join(1.0)  # its end of the pipe closed: it is exiting; collect the exit code
            self._fail(w, ErrorKind.CRASH, f"worker process died (exit code {w.process.exitcode})")
            return
        task = w.task
        if task is None:
            raise RunnerError("worker answered without a task (internal error)")
        arrived.append((task, payload))
        self.pool.observe(time.monotonic() - w.sent_at, len(task.entries))
        self.pool.stats.chunks += 1
        self.pool.stats.items += len(task.entries)
        w.task = None
        w.tasks_done += 1
        limit = self.pool.max_tasks_per_worker
        if limit is not None and w.tasks_done >= limit:
            self.pool.replace(w)

    def _store(self, task: _Task[Item], payload: bytes) -> None:
        task_id, outs = pickle.loads(payload)
        if task_id != task.id:
            raise RunnerError("worker answered a task it was not given (internal error)")
        for (pos, _), out in zip(task.entries, outs, strict=True):
            self.done[pos] = out

    def _resend(self, w: _Worker, task: _Task[Item]) -> bool:
        """A worker that died before starting its chunk's first item: send the whole chunk
        again, once (True), blaming no item. Most such deaths are not the chunk's doing: a
        worker killed while idle (the OOM killer, kill -9) may still look alive when the chunk
        is sent, since a signal lands asynchronously. A chunk whose worker dies before starting
        it a second time is blamed (False): its first item may be what kills it."""
        first = task.entries[0][0]
        if first in self.resent:
            return False
        self.resent.add(first)
        self.queue.appendleft(task.entries)
        self.pool.stats.crashes += 1
        w.task = None
        self.pool.replace(w)
        return True

    def _fail(self, w: _Worker, kind: ErrorKind, message: str) -> None:
        """The worker's current item gets `kind`; the rest of its chunk is re-queued."""
        task = w.task
        if task is None:
            return
        index = max(0, min(int(w.progress[0]), len(task.entries) - 1))
        if w.progress[1] == _IDLE and kind is ErrorKind.CRASH and w.progress[0] <= 0:
            if self._resend(w, task):
                return
            index = 0  # died before starting, twice: blame the first item, re-run the others
        pos, item = task.entries[index]
        self.done[pos] = self.pool.on_error(item, kind, message)
        rest = task.entries[:index] + task.entries[index + 1 :]
        if rest:
            self.queue.appendleft(rest)
        if kind is ErrorKind.TIMEOUT:
            self.pool.stats.timeouts += 1
        else:
            self.pool.stats.crashes += 1
        self.pool.stats.per_kind[kind.value] = self.pool.stats.per_kind.get(kind.value, 0) + 1
        w.task = None
        self.pool.replace(w)


def _timeout_message(timeout: float, weight: float) -> str:
    if weight == 1.0:
        return f"exceeded the per-sample timeout of {timeout:g}s; worker killed"
    return f"exceeded the timeout of {timeout * weight:g}s ({timeout:g}s per sample x {weight:g} samples of the group); worker killed"


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
