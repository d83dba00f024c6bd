"""One pass of `rewardlab.runner.pool.ProcessPool` over an item stream, on the parent's side:
chunks sent to workers, answers collected, timeouts and deaths turned into error outputs, and
the outputs yielded in input order. The design is described in `rewardlab.runner.pool`.
"""

from __future__ import annotations

import itertools
import pickle
import signal
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from rewardlab.core import ErrorKind
from rewardlab.errors import RunnerError
from rewardlab.runner._pool_worker import _IDLE, _why

if TYPE_CHECKING:
    from rewardlab.runner.pool import ProcessPool

Item = TypeVar("Item")
Out = TypeVar("Out")

_MAX_CHUNK = 1024
_POLL_SECONDS = 0.02
_NOT_STARTED = -1.0  # progress[0] of a worker sent a chunk it has not started yet
# A worker sent a chunk may take this long to start it even when the timeout is shorter: a
# worker just forked on a loaded machine may wait that long for a core.
_START_SECONDS = 3.0


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
