"""Result cache and run store: one SQLite file in WAL mode.

Two tables live in the same file:

* ``result_rows`` — finished `RewardResult`s keyed by ``(spec_hash, sample_key)``, so a retry or a
  re-score of the same sample under the same reward is a lookup, not a computation. The
  ``sample_key`` is a hash of the sample's *content* (`sample_key`), never a caller-given id, so
  two different samples that share an id cannot collide. Only `ok` and `skipped` results are
  stored: an `error` (a timeout, a crash) may well succeed on a retry and must not be frozen.
  The table is bounded (`max_rows`); when it grows past the bound the least recently *used*
  rows are evicted in one statement.
* ``runs`` / ``run_rows`` — the rows of a batch run of ``rewardlab score``, written as they
  finish, so a run killed half-way resumes where it stopped (``--resume``) and the output is
  assembled from the store: every input row exactly once, in input order.

Why SQLite in WAL mode: readers never block the writer, a committed transaction survives a
SIGKILL of the process (the WAL is replayed on the next open), and it is in the standard
library. ``synchronous=NORMAL`` is durable against process crashes (not against power loss,
which a cache can afford). One connection is shared behind a lock, so a `ResultStore` can be
used from the server's worker threads.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from rewardlab.core import RewardResult, Sample, Status, canonical_json
from rewardlab.errors import InputError

__all__ = ["CacheStats", "ResultStore", "RunInfo", "default_cache_path", "encode_result", "encode_row", "result_row", "sample_key"]

# `result_rows` is a rowid table: its rows (~300 bytes of JSON) are too large for WITHOUT
# ROWID, where every insert at a random key moves whole rows between B-tree pages (measured:
# 21 -> 7 us of CPU per inserted row; SQLite's guidance is WITHOUT ROWID only for rows under
# ~1/20 of a page, https://www.sqlite.org/withoutrowid.html). Stores written before this
# layout had a WITHOUT ROWID table `results`: `_migrate` moves its rows over once.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS result_rows (
    spec_hash  TEXT NOT NULL,
    sample_key TEXT NOT NULL,
    result     TEXT NOT NULL,
    created    REAL NOT NULL,
    used       REAL NOT NULL,
    UNIQUE (spec_hash, sample_key)
);
CREATE INDEX IF NOT EXISTS result_rows_used ON result_rows (used);
CREATE TABLE IF NOT EXISTS runs (
    run_id    TEXT PRIMARY KEY,
    spec_hash TEXT NOT NULL,
    source    TEXT NOT NULL,
    total     INTEGER,
    created   REAL NOT NULL,
    finished  REAL
);
CREATE TABLE IF NOT EXISTS run_rows (
    run_id     TEXT NOT NULL,
    row_index  INTEGER NOT NULL,
    payload    TEXT NOT NULL,
    PRIMARY KEY (run_id, row_index)
) WITHOUT ROWID;
"""


def default_cache_path() -> Path:
    """``$REWARDLAB_CACHE``, else ``$XDG_CACHE_HOME/rewardlab/results.sqlite`` (``~/.cache``)."""
    explicit = os.environ.get("REWARDLAB_CACHE")
    if explicit:
        return Path(explicit)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rewardlab" / "results.sqlite"


def sample_key(sample: Sample) -> str:
    """Hash of what a reward can see of `sample` (not its id or group).

    `Sample.id` is caller-chosen when given, so it cannot key a cache: two different responses
    with id ``"7"`` must not share a result. orjson with sorted keys is the fast path (this runs
    once per served sample); values orjson refuses fall back to `canonical_json`.
    """
    payload = [sample.prompt, sample.response, sample.reference, sample.steps, sample.meta]
    try:
        data = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except TypeError:
        data = canonical_json(payload).encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()


_STATUS_VALUE = {s: s.value for s in Status}


def result_row(result: RewardResult) -> dict[str, Any]:
    """`result.to_dict()`, built for the server's hot path: same keys and values, no copies.

    `RewardResult.to_dict` copies every `info` and `steps`; here they are shared with the
    result (only to be encoded right away), which halves the cost for a cheap reward.
    """
    out: dict[str, Any] = {"score": result.score, "status": _STATUS_VALUE[result.status]}
    if result.error is not None:
        out["error"] = result.error.to_dict()
    if result.components:
        out["components"] = {k: result_row(v) for k, v in result.components.items()}
    if result.steps is not None:
        out["steps"] = result.steps  # orjson writes a tuple as a list
    info = result.info
    if info:
        out["info"] = info if type(info) is dict else dict(info)
    if result.stamp is not None:
        out["rewardlab_version"] = result.stamp.rewardlab_version
        out["spec_hash"] = result.stamp.spec_hash
    return out


def encode_row(row: dict[str, Any]) -> bytes:
    """JSON bytes of a result row; values orjson refuses are written with `str` (as before)."""
    try:
        return orjson.dumps(row)
    except TypeError:  # non-string keys or an object orjson does not know in `info`
        return orjson.dumps(row, default=str, option=orjson.OPT_NON_STR_KEYS)


def encode_result(result: RewardResult) -> bytes:
    """JSON bytes of `result.to_dict()` (what the cache stores and the server sends)."""
    return encode_row(result_row(result))


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


@dataclass(frozen=True)
class RunInfo:
    """One recorded batch run."""

    run_id: str
    spec_hash: str
    source: str
    total: int | None
    done: int
    finished: bool


class ResultStore:
    """The SQLite result cache and run store (thread-safe; one file, WAL mode).

    Args:
        path: the database file (created with its parent directories), or ``":memory:"``.
        max_rows: bound on cached results; beyond it the least recently used are evicted.
        evict_fraction: share of `max_rows` removed per eviction, so eviction runs rarely.
        touch_after: seconds before a hit refreshes its LRU time (a hit is then a read, not a
            write, for rows used in the last minute).

    Example:
        >>> store = ResultStore(":memory:")
        >>> s = Sample(response="4")
        >>> store.put_many("spec", [(s, RewardResult.ok(1.0))])
        1
        >>> store.get_many("spec", [s])[0].score
        1.0
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_rows: int = 1_000_000,
        evict_fraction: float = 0.1,
        touch_after: float = 60.0,
    ):
        if max_rows < 1:
            raise ValueError(f"max_rows must be >= 1, got {max_rows}")
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.max_rows = max_rows
        self.touch_after = touch_after
        self._evict_batch = max(1, int(max_rows * evict_fraction))
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot open the result store: {exc}; delete the file or pass another --cache path", source=self.path) from exc
        # Lookups get a connection of their own: in WAL mode a reader never waits for the
        # writer, so a request's cache lookup does not queue behind the server's background
        # cache writes (which hold `_lock` for a whole batch insert). ":memory:" is one
        # database per connection, so there lookups share the writer's connection.
        self._read_lock = threading.Lock()
        self._reader = self._db
        if self.path != ":memory:":
            self._reader = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0, isolation_level=None)
        else:
            self._read_lock = self._lock
        self._rows = self._count()

    @property
    def lookups_wait_for_writes(self) -> bool:
        """Whether a lookup can wait for a write (":memory:" shares one connection)."""
        return self._read_lock is self._lock

    def _migrate(self) -> None:
        """Move the rows of the old WITHOUT ROWID `results` table, if any, into `result_rows`."""
        old = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'results'").fetchone()
        if old is None:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute(
                "INSERT OR IGNORE INTO result_rows (spec_hash, sample_key, result, created, used) "
                "SELECT spec_hash, sample_key, result, created, used FROM results"
            )
            self._db.execute("DROP TABLE results")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    # -- the result cache ------------------------------------------------------------------
    def get_many(self, spec_hash: str, samples: Sequence[Sample]) -> list[RewardResult | None]:
        """Cached results for `samples` under `spec_hash` (``None`` where there is none)."""
        keys = [sample_key(s) for s in samples]
        found = self.get_keys(spec_hash, keys)
        return [found.get(k) for k in keys]

    def get_keys(self, spec_hash: str, keys: Sequence[str]) -> dict[str, RewardResult]:
        """Cached results by sample key; marks the hits as used (for LRU eviction)."""
        return {k: RewardResult.from_dict(orjson.loads(v)) for k, v in self.get_encoded(spec_hash, keys).items()}

    def get_encoded(self, spec_hash: str, keys: Sequence[str]) -> dict[str, bytes]:
        """Cached results as stored JSON bytes (the server splices them into replies as is)."""
        out: dict[str, bytes] = {}
        unique = list(dict.fromkeys(keys))
        now = time.time()
        stale: list[str] = []
        with self._read_lock:
            # 500 keys per statement stays under SQLite's bound-variable limit.
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._reader.execute(
                    f"SELECT sample_key, result, used FROM result_rows WHERE spec_hash = ? AND sample_key IN ({marks})",
                    [spec_hash, *chunk],
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
                        f"UPDATE result_rows SET used = ? WHERE spec_hash = ? AND sample_key IN ({','.join('?' * len(chunk))})",
                        [now, spec_hash, *chunk],
                    )
            finally:
                self._lock.release()
        return out

    def put_many(self, spec_hash: str, items: Iterable[tuple[Sample | str, RewardResult]]) -> int:
        """Store results (errors are skipped, see the module doc). Returns how many were stored."""
        rows = [
            (item if isinstance(item, str) else sample_key(item), encode_result(result))
            for item, result in items
            if result.status is not Status.ERROR
        ]
        return self.put_encoded(spec_hash, rows)

    def put_encoded(self, spec_hash: str, rows: Sequence[tuple[str, bytes]]) -> int:
        """Store already encoded results ``(sample_key, json bytes)``; the caller leaves out errors."""
        if not rows:
            return 0
        now = time.time()
        values = [(spec_hash, key, text, now, now) for key, text in rows]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                before = self._db.total_changes
                self._db.executemany("INSERT OR REPLACE INTO result_rows VALUES (?, ?, ?, ?, ?)", values)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
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
            "DELETE FROM result_rows WHERE rowid IN (SELECT rowid FROM result_rows ORDER BY used LIMIT ?)",
            (n,),
        )
        self._rows = self._count_locked()

    def clear(self, spec_hash: str | None = None, *, runs: bool = True) -> int:
        """Delete cached results (of one spec, or all) and, with `runs`, the run store too."""
        with self._lock:
            if spec_hash is None:
                deleted = self._db.execute("DELETE FROM result_rows").rowcount
                if runs:
                    self._db.execute("DELETE FROM run_rows")
                    self._db.execute("DELETE FROM runs")
            else:
                deleted = self._db.execute("DELETE FROM result_rows WHERE spec_hash = ?", (spec_hash,)).rowcount
            self._rows = self._count_locked()
        if spec_hash is None and self.path != ":memory:":
            with self._lock:
                self._db.execute("VACUUM")
        return int(deleted)

    def stats(self) -> CacheStats:
        """Row counts and file size."""
        with self._lock:
            rows = self._count_locked()
            specs = self._db.execute("SELECT COUNT(DISTINCT spec_hash) FROM result_rows").fetchone()[0]
            runs = self._db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            run_rows = self._db.execute("SELECT COUNT(*) FROM run_rows").fetchone()[0]
        size = 0
        if self.path != ":memory:":
            size = sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))
        return CacheStats(self.path, rows, self.max_rows, specs, runs, run_rows, size)

    def integrity_check(self) -> str:
        """SQLite's own consistency check: ``"ok"`` for a healthy file."""
        with self._lock:
            return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])

    # -- the run store ---------------------------------------------------------------------
    def start_run(self, run_id: str, *, spec_hash: str, source: str, total: int | None = None) -> RunInfo:
        """Create run `run_id`, or return it if it exists with the same spec and source.

        Raises:
            InputError: the id exists but for another spec or input; resuming it would mix
                results of two rewards.
        """
        with self._lock:
            row = self._db.execute("SELECT spec_hash, source FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                self._db.execute(
                    "INSERT INTO runs VALUES (?, ?, ?, ?, ?, NULL)", (run_id, spec_hash, source, total, time.time())
                )
            elif tuple(row) != (spec_hash, source):
                raise InputError(
                    f"run {run_id!r} was started with spec {row[0]} on {row[1]!r}, not spec {spec_hash} "
                    f"on {source!r}; start a new run (drop --resume) or pass the original spec and input",
                    source=source,
                )
            elif total is not None:
                self._db.execute("UPDATE runs SET total = ? WHERE run_id = ?", (total, run_id))
        return self.run_info(run_id)

    def run_info(self, run_id: str) -> RunInfo:
        """State of a recorded run. Raises `KeyError` if there is none."""
        with self._lock:
            row = self._db.execute(
                "SELECT spec_hash, source, total, finished FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is None:
                raise KeyError(run_id)
            done = self._db.execute("SELECT COUNT(*) FROM run_rows WHERE run_id = ?", (run_id,)).fetchone()[0]
        return RunInfo(run_id, row[0], row[1], row[2], int(done), row[3] is not None)

    def done_rows(self, run_id: str) -> set[int]:
        """Row indices of `run_id` that already have a result."""
        with self._lock:
            rows = self._db.execute("SELECT row_index FROM run_rows WHERE run_id = ?", (run_id,)).fetchall()
        return {int(r[0]) for r in rows}

    def record_rows(self, run_id: str, rows: Iterable[tuple[int, Mapping[str, Any]]]) -> int:
        """Record finished rows (index, output row) of a run in one transaction.

        Idempotent per row index: ``INSERT OR IGNORE`` keeps the first row recorded, so a
        resumed run can never write a row twice and nothing is double-counted.
        """
        values = [(run_id, int(i), json.dumps(payload, ensure_ascii=False, default=str)) for i, payload in rows]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT OR IGNORE INTO run_rows VALUES (?, ?, ?)", values)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return len(values)

    def iter_run(self, run_id: str, *, page: int = 4096) -> Iterator[tuple[int, dict[str, Any]]]:
        """Recorded rows of `run_id` in row order, read a page at a time."""
        last = -1
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT row_index, payload FROM run_rows WHERE run_id = ? AND row_index > ? "
                    "ORDER BY row_index LIMIT ?",
                    (run_id, last, page),
                ).fetchall()
            if not rows:
                return
            for index, text in rows:
                yield int(index), json.loads(text)
            last = int(rows[-1][0])

    def drop_run(self, run_id: str) -> None:
        """Forget run `run_id` and its rows (a fresh start under the same id)."""
        with self._lock:
            self._db.execute("DELETE FROM run_rows WHERE run_id = ?", (run_id,))
            self._db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))

    def finish_run(self, run_id: str) -> None:
        """Mark `run_id` finished."""
        with self._lock:
            self._db.execute("UPDATE runs SET finished = ? WHERE run_id = ?", (time.time(), run_id))

    # -- plumbing --------------------------------------------------------------------------
    def _count(self) -> int:
        with self._lock:
            return self._count_locked()

    def _count_locked(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM result_rows").fetchone()[0])

    def close(self) -> None:
        """Close the connection (the WAL is checkpointed by SQLite)."""
        with self._lock, self._read_lock if self._reader is not self._db else contextlib.nullcontext():
            if self._reader is not self._db:
                self._reader.close()
            self._db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultStore({self.path!r}, max_rows={self.max_rows})"

