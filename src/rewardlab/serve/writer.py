"""Write-behind for the result cache: results reach SQLite after their replies, when it is quiet.

Inserting a row costs about as much CPU as a cheap reward (4 us into an empty store, 11-15 us
at 200k-1M rows; ``bench/bench_cache.py``), and on a busy server that CPU is taken from scoring
and HTTP. A trainer's calls come in bursts (one per step, then the trainer trains), so the
writer waits for the reward to be idle: it writes once no batch has been queued or running for
`idle_after` seconds, or at once when `high_water` rows wait (sustained load). Until written,
rows are answered from memory (`lookup`), so a re-score never misses them. At most `limit` rows
wait; past that, `add` writes in the caller's thread (backpressure, bounded memory). `close`
writes everything.

A row still in memory when the process is killed is not in the cache: the next request for it
computes it again. Nothing half-written appears: each write is one SQLite transaction.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable

from rewardlab.store import ResultStore

__all__ = ["CacheWriter"]

logger = logging.getLogger(__name__)

# Rows per transaction: big enough to write each B-tree page once for many rows, small enough
# (~20 ms) that a request arriving meanwhile does not wait long for the CPU.
_CHUNK = 4096


class CacheWriter:
    """The write-behind queue and thread of one reward's cache rows (see the module doc).

    Args:
        store: the result store.
        spec_hash: the reward's spec hash (the rows' cache key part).
        name: the reward's served name (thread name, log messages).
        idle_after: seconds without work before the writer writes.
        high_water: rows waiting that start a write even while busy.
        limit: rows waiting beyond which `add` writes in the caller's thread.
        on_failure: called with the number of rows a failed write left uncached (a full disk,
            a file another process holds locked), e.g. to count them in the server's metrics.
    """

    def __init__(
        self,
        store: ResultStore,
        spec_hash: str,
        name: str,
        *,
        idle_after: float = 0.05,
        high_water: int = 16384,
        limit: int = 65536,
        on_failure: Callable[[int], object] | None = None,
    ):
        self.store, self.spec_hash, self.name = store, spec_hash, name
        self.on_failure = on_failure
        #: Rows that could not be written (they stay uncached: computed again when asked for).
        self.failed = 0
        self.idle_after, self.high_water, self.limit = idle_after, high_water, limit
        self._cond = threading.Condition()
        # The waiting rows, oldest first (a dict keeps insertion order): the queue and the
        # lookup table in one, so a waiting row costs one dict entry, not also a tuple.
        self._unwritten: dict[bytes, bytes] = {}
        self._busy = False
        self._idle_since = time.monotonic()
        self._closing = False
        self._thread: threading.Thread | None = None

    # -- called by the batcher -------------------------------------------------------------
    def set_busy(self, busy: bool) -> None:
        """The reward has batches queued or running (or has just run out of them).

        Does not wake the writer: it checks back every `idle_after` while rows wait. Waking it
        at every idle moment (a busy server has one between most requests) would hand it the
        GIL, to find it must wait anyway."""
        if busy == self._busy:
            return
        with self._cond:
            self._busy = busy
            if not busy:
                self._idle_since = time.monotonic()

    def add(self, rows: list[tuple[bytes, bytes]]) -> None:
        """Queue encoded rows ``(sample digest, json)`` for writing (errors already left out)."""
        if not rows:
            return
        with self._cond:
            behind = len(self._unwritten) >= self.limit
            if not behind:
                asleep = not self._unwritten  # waiting without a timeout: wake it
                self._unwritten.update(rows)
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name=f"cache-writer:{self.name}", daemon=True)
                    self._thread.start()
                if asleep or len(self._unwritten) >= self.high_water:
                    self._cond.notify()
        if behind:  # the writer cannot keep up: the caller pays, so memory stays bounded
            self._put(rows)

    def lookup(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """The rows among `keys` that wait to be written."""
        with self._cond:
            unwritten = self._unwritten
            return {k: unwritten[k] for k in keys if k in unwritten}

    @property
    def waiting(self) -> int:
        """Rows not written yet."""
        return len(self._unwritten)

    def close(self) -> None:
        """Write every waiting row, then stop the thread (blocking)."""
        with self._cond:
            self._closing = True
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join()

    # -- the writer thread -----------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._due():
                    if self._closing and not self._unwritten:
                        return
                    self._cond.wait(self._wait_seconds())
                # The oldest rows; they stay visible to lookups until written (removed in `_write`).
                rows = list(itertools.islice(self._unwritten.items(), _CHUNK))
            self._write(rows)

    def _due(self) -> bool:
        """Write now? (called with the lock held)"""
        if not self._unwritten:
            return False
        if self._closing or len(self._unwritten) >= self.high_water or self.idle_after <= 0:
            return True
        return not self._busy and time.monotonic() - self._idle_since >= self.idle_after

    def _wait_seconds(self) -> float | None:
        if not self._unwritten:
            return None  # until `add` or `close` notifies
        if self._busy:
            return self.idle_after  # check back; `set_busy` does not wake the writer
        return max(0.001, self._idle_since + self.idle_after - time.monotonic())

    def _put(self, rows: list[tuple[bytes, bytes]]) -> None:
        """Write `rows`; a failure is logged and counted, never raised: the results were
        answered already, and a cache that cannot be written must not fail the request that
        wrote it (the caller's thread writes when the writer is behind)."""
        try:
            self.store.put_encoded(self.spec_hash, rows)
        except Exception as exc:  # a full disk, a locked file: these rows stay uncached, the server goes on
            self.failed += len(rows)
            logger.error(
                "reward %r: %d results could not be written to the cache (%s: %s); they are served uncached "
                "(computed again when asked for) until the cache can be written",
                self.name, len(rows), type(exc).__name__, exc,
            )  # fmt: skip
            if self.on_failure is not None:
                self.on_failure(len(rows))

    def _write(self, rows: list[tuple[bytes, bytes]]) -> None:
        try:
            self._put(rows)
        finally:
            with self._cond:
                unwritten = self._unwritten
                for key, text in rows:
                    if unwritten.get(key) is text:
                        del unwritten[key]
