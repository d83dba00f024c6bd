"""The result cache: finished `RewardResult`s keyed by reward spec and sample content.

Tables ``specs`` / ``result_cache`` of the store file (`rewardlab.store.sqlite`): a retry or a
re-score of the same sample under the same reward is a lookup, not a computation. ``spec`` is
a small integer standing for the spec hash (``specs`` maps one to the other); ``key`` is the
16-byte hash of the sample's *content* (`core.sample_digest`), never a caller-given id, so two
different samples that share an id cannot collide. Only `ok` and `skipped` results are stored:
an `error` (a timeout, a crash) may well succeed on a retry and must not be frozen. The table
is bounded (`max_rows`); when it grows past the bound the least recently *used* rows are
evicted in one statement. Thread-safe: a `ResultStore` can be used from a server's threads.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from rewardlab.core import RewardResult, Sample, Status, sample_digest
from rewardlab.core.jsontext import loads
from rewardlab.errors import ConfigError, InputError
from rewardlab.store.runs import RunStore
from rewardlab.store.sqlite import Database, OnDatabase, _key_bytes, rollback

__all__ = [
    "DEFAULT_MAX_ROWS",
    "CacheStats",
    "ResultStore",
    "encode_result",
    "encode_row",
    "sample_key",
]

def sample_key(sample: Sample) -> str:
    """`sample_digest` as 32 hex characters (`Sample.content_key`; for people and logs, the
    cache stores the bytes)."""
    return sample.content_key


def encode_row(row: dict[str, Any]) -> bytes:
    """JSON bytes of a result row; values orjson refuses are written with `str` (as before)."""
    try:
        return orjson.dumps(row)
    except TypeError:  # non-string keys or an object orjson does not know in `info`
        try:
            return orjson.dumps(row, default=str, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:  # a lone surrogate in a string: written as its JSON escape
            return json.dumps(row, default=str, ensure_ascii=True).encode()


def encode_result(result: RewardResult) -> bytes:
    """JSON bytes of `result.to_dict()` (what the cache stores and the server sends)."""
    return encode_row(result.to_dict(copy=False))


#: results a store keeps unless told otherwise (the least recently used beyond it are evicted)
DEFAULT_MAX_ROWS = 1_000_000


@dataclass(frozen=True)

class CacheStats:
    """What ``rewardlab cache stats`` prints."""

    path: str
    rows: int
    max_rows: int
    specs: int
    runs: int
    run_rows: int
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class ResultStore(OnDatabase):
    """The result cache (thread-safe; see the module doc).

    Args:
        path: the store file (created with its parent directories), ``":memory:"``, or an
            open `Database` to share with a `RunStore`.
        max_rows: bound on cached results; beyond it the least recently used are evicted.
        evict_fraction: share of `max_rows` removed per eviction, so eviction runs rarely.
        touch_after: seconds before a hit refreshes its LRU time (a hit is then a read, not a
            write, for rows used in the last minute).

    Examples:
        >>> store = ResultStore(":memory:")
        >>> s = Sample(response="4")
        >>> store.put_many("spec", [(s, RewardResult.ok(1.0))])
        1
        >>> store.get_many("spec", [s])[0].score
        1.0
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | Database,
        *,
        max_rows: int = DEFAULT_MAX_ROWS,
        evict_fraction: float = 0.1,
        touch_after: float = 60.0,
    ):
        if max_rows < 1:
            raise ConfigError(f"max_rows must be >= 1, got {max_rows}")
        super().__init__(path)
        self.max_rows = max_rows
        self.touch_after = touch_after
        self._evict_batch = max(1, int(max_rows * evict_fraction))
        self._spec_ids: dict[str, int] = {}  # spec hash -> `specs.id`; ids never change (see `clear`)
        self._lock, self._db = self.db.lock, self.db.conn
        self._read_lock, self._reader = self.db.read_lock, self.db.reader
        self._rows = self._count()

    @property
    def lookups_wait_for_writes(self) -> bool:
        """Whether a lookup can wait for a write (":memory:" shares one connection)."""
        return self.db.lookups_wait_for_writes

    def _spec_id(self, spec_hash: str, db: sqlite3.Connection, *, create: bool) -> int | None:
        """The `specs.id` of `spec_hash`, added when `create` (the caller holds `db`'s lock and,
        with `create`, an open transaction; it remembers the id once that is committed: a
        rolled-back id could be given to another spec)."""
        known = self._spec_ids.get(spec_hash)
        if known is not None:
            return known
        if create:
            db.execute("INSERT OR IGNORE INTO specs (spec_hash) VALUES (?)", (spec_hash,))
        row = db.execute("SELECT id FROM specs WHERE spec_hash = ?", (spec_hash,)).fetchone()
        if row is None:
            return None
        if not create:
            self._spec_ids[spec_hash] = int(row[0])
        return int(row[0])

    # -- the result cache ------------------------------------------------------------------
    def get_many(self, spec_hash: str, samples: Sequence[Sample]) -> list[RewardResult | None]:
        """Cached results for `samples` under `spec_hash` (``None`` where there is none)."""
        keys = [sample_digest(s) for s in samples]
        found = self.get_keys(spec_hash, keys)
        return [found.get(k) for k in keys]

    def get_keys(self, spec_hash: str, keys: Sequence[bytes]) -> dict[bytes, RewardResult]:
        """Cached results by `sample_digest`; marks the hits as used (for LRU eviction)."""
        return {k: RewardResult.from_dict(loads(v)) for k, v in self.get_encoded(spec_hash, keys).items()}

    def get_encoded(self, spec_hash: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """Cached results as stored JSON bytes, by `sample_digest` (the server splices them
        into replies as they are); marks the hits as used (for LRU eviction)."""
        out: dict[bytes, bytes] = {}
        unique = list(dict.fromkeys(keys))
        now = time.time()
        stale: list[bytes] = []
        with self._read_lock:
            spec = self._spec_id(spec_hash, self._reader, create=False)
            if spec is None:  # nothing was ever stored under this spec
                return out
            # 500 keys per statement stays under SQLite's bound-variable limit.
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._reader.execute(
                    f"SELECT key, result, used FROM result_cache WHERE spec = ? AND key IN ({marks})",
                    [spec, *chunk],
                ).fetchall()
                for key, text, _ in rows:
                    out[key] = text if isinstance(text, bytes) else text.encode()
                # LRU bookkeeping is a write; skip rows touched within `touch_after`, which
                # eviction (oldest first, a tenth of the cache at a time) would not pick anyway.
                stale.extend(key for key, _, used in rows if used <= now - self.touch_after)
        # The touch is best effort: if the writer holds the connection (a batch insert), skip
        # it rather than make a lookup wait; the rows are touched on a later hit.
        if stale and self._lock.acquire(blocking=self._read_lock is self._lock):
            try:
                for start in range(0, len(stale), 500):
                    chunk = stale[start : start + 500]
                    self._db.execute(
                        f"UPDATE result_cache SET used = ? WHERE spec = ? AND key IN ({','.join('?' * len(chunk))})",
                        [now, spec, *chunk],
                    )
            finally:
                self._lock.release()
        return out

    def put_many(self, spec_hash: str, items: Iterable[tuple[Sample | str | bytes, RewardResult]]) -> int:
        """Store results for samples (or their `sample_key` / `sample_digest`); errors are
        skipped (see the module doc). Returns how many were stored.

        Raises:
            InputError: a key that is neither a `sample_key` nor a `sample_digest`.
        """
        rows = [(self._as_digest(item), encode_result(result)) for item, result in items if result.status is not Status.ERROR]
        return self.put_encoded(spec_hash, rows)

    def _as_digest(self, item: Sample | str | bytes) -> bytes:
        if isinstance(item, Sample):
            return sample_digest(item)
        key = _key_bytes(item) if isinstance(item, str) else item
        if key is None or len(key) != 16:
            raise InputError(
                f"cache key {item!r} is neither a sample_key (32 hex characters) nor a sample_digest (16 bytes); "
                "pass the Sample itself",
                source=self.path,
            )
        return key

    def put_encoded(self, spec_hash: str, rows: Sequence[tuple[bytes, bytes]]) -> int:
        """Store already encoded results ``(sample_digest, json bytes)``; the caller leaves out errors."""
        if not rows:
            return 0
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                spec = self._spec_id(spec_hash, self._db, create=True)
                assert spec is not None  # just inserted
                values = [(spec, key, text, now) for key, text in rows]
                before = self._db.total_changes
                self._db.executemany("INSERT OR REPLACE INTO result_cache VALUES (?, ?, ?, ?)", values)
                self._db.execute("COMMIT")
            except BaseException:
                rollback(self._db)
                raise
            self._spec_ids[spec_hash] = spec
            self._rows += self._db.total_changes - before
            if self._rows > self.max_rows:
                self._evict()
        return len(values)

    def _evict(self) -> None:
        # Called with the lock held. REPLACE counts as a change, so re-count before deciding.
        self._rows = self._count_locked()
        excess = self._rows - self.max_rows
        if excess <= 0:
            return
        n = excess + self._evict_batch if self.max_rows > self._evict_batch else excess
        self._db.execute(
            "DELETE FROM result_cache WHERE rowid IN (SELECT rowid FROM result_cache ORDER BY used LIMIT ?)",
            (n,),
        )
        self._rows = self._count_locked()

    def clear(self, spec_hash: str | None = None, *, runs: bool = True) -> int:
        """Delete cached results (of one spec, or all) and, with `runs`, the file's run store too.

        The ``specs`` rows stay: another process with the file open keeps the ids it has
        resolved, so an id must never come back for another spec hash.
        """
        with self._lock:
            if spec_hash is None:
                deleted = self._db.execute("DELETE FROM result_cache").rowcount
            else:
                deleted = self._db.execute(
                    "DELETE FROM result_cache WHERE spec = (SELECT id FROM specs WHERE spec_hash = ?)", (spec_hash,)
                ).rowcount
            self._rows = self._count_locked()
        if spec_hash is None:
            if runs:
                RunStore(self.db).clear()
            self.db.vacuum()
        return int(deleted)

    def stats(self) -> CacheStats:
        """Row counts (of the file's run store too) and file size."""
        with self._lock:
            rows = self._count_locked()
            specs = self._db.execute("SELECT COUNT(DISTINCT spec) FROM result_cache").fetchone()[0]
        runs, run_rows = RunStore(self.db).counts()
        return CacheStats(self.path, rows, self.max_rows, specs, runs, run_rows, self.db.size())

    # -- plumbing --------------------------------------------------------------------------
    def _count(self) -> int:
        with self._lock:
            return self._count_locked()

    def _count_locked(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM result_cache").fetchone()[0])

    def __repr__(self) -> str:
        return f"ResultStore({self.path!r}, max_rows={self.max_rows})"

