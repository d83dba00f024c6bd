"""Result cache and run store: one SQLite file in WAL mode.

Three tables live in the same file:

* ``specs`` / ``result_cache`` — finished `RewardResult`s keyed by ``(spec, key)``, so a retry or
  a re-score of the same sample under the same reward is a lookup, not a computation. ``spec``
  is a small integer standing for the spec hash (``specs`` maps one to the other); ``key`` is
  the 16-byte hash of the sample's *content* (`sample_digest`), never a caller-given id, so two
  different samples that share an id cannot collide. Only `ok` and `skipped` results are
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
from rewardlab.errors import ConfigError, InputError

__all__ = [
    "CacheStats",
    "ResultStore",
    "RunInfo",
    "default_cache_path",
    "encode_result",
    "encode_row",
    "result_row",
    "sample_digest",
    "sample_key",
]

# Layout; the measurements behind each choice are in bench/RESULTS.md ("Result-cache layout")
# and bench/bench_cache.py reproduces them:
# - Small keys: a spec id (table `specs`) and the 16-byte digest as a BLOB. An insert costs what
#   it does to the random-key UNIQUE index (every row dirties an index page, written to the WAL
#   and again at checkpoint), so a smaller key makes inserts and lookups cheaper.
# - No index on ``used``: it would make every insert and every LRU touch of a hit dearer to
#   save a scan per eviction, which runs only once the store is full.
# - No ``created`` column: nothing reads it.
# - SQLite's default page cache: a larger one does not make inserts cheaper, and a WAL reader
#   drops its whole cache whenever the database has changed, i.e. after every batch the server
#   writes.
# - A rowid table: the ~300-byte rows are too large for WITHOUT ROWID, where every insert at a
#   random key moves whole rows between B-tree pages (https://www.sqlite.org/withoutrowid.html).
# Stores in the two earlier layouts (tables `results`, `result_rows`) are migrated on open.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS specs (
    id        INTEGER PRIMARY KEY,
    spec_hash TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS result_cache (
    spec   INTEGER NOT NULL,
    key    BLOB NOT NULL,
    result BLOB NOT NULL,
    used   REAL NOT NULL,
    UNIQUE (spec, key)
);
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


def sample_digest(sample: Sample) -> bytes:
    """16-byte hash of what a reward can see of `sample` (not its id or group): the cache key.

    `Sample.id` is caller-chosen when given, so it cannot key a cache: two different responses
    with id ``"7"`` must not share a result. orjson with sorted keys is the fast path (this runs
    once per served sample); values orjson refuses fall back to `canonical_json`.
    """
    payload = [sample.prompt, sample.response, sample.reference, sample.steps, sample.meta]
    try:
        data = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except TypeError:
        data = canonical_json(payload).encode()
    return hashlib.blake2b(data, digest_size=16).digest()


def sample_key(sample: Sample) -> str:
    """`sample_digest` as 32 hex characters (for people and logs; the cache stores the bytes)."""
    return sample_digest(sample).hex()


def _key_bytes(key: str) -> bytes | None:
    """A stored hex `sample_key` as the 16 bytes the cache now keys by; ``None`` if it is not one."""
    try:
        raw = bytes.fromhex(key)
    except (TypeError, ValueError):
        return None
    return raw if len(raw) == 16 else None


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
            raise ConfigError(f"max_rows must be >= 1, got {max_rows}")
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.max_rows = max_rows
        self.touch_after = touch_after
        self._evict_batch = max(1, int(max_rows * evict_fraction))
        self._spec_ids: dict[str, int] = {}  # spec hash -> `specs.id`; ids never change (see `clear`)
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
        """Move the rows of the two earlier layouts, if any, into `result_cache`, once.

        ``results`` (WITHOUT ROWID) and then ``result_rows`` (rowid) held ``(spec_hash,
        sample_key)`` as text; their rows move over in one transaction (hex keys become the
        16 bytes; a key that is not 32 hex characters could never be looked up and is left
        behind), and the old tables are dropped. A crash before the commit leaves the old
        tables as they were, to be migrated on the next open.
        """
        present = {name for (name,) in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        old = [name for name in ("result_rows", "results") if name in present]  # newest first: its rows win
        if not old:
            return
        self._db.create_function("rewardlab_key_bytes", 1, _key_bytes, deterministic=True)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for table in old:
                self._db.execute(f"INSERT OR IGNORE INTO specs (spec_hash) SELECT DISTINCT spec_hash FROM {table}")
                self._db.execute(
                    "INSERT OR IGNORE INTO result_cache (spec, key, result, used) "
                    "SELECT specs.id, rewardlab_key_bytes(old.sample_key), old.result, old.used "
                    f"FROM {table} AS old JOIN specs ON specs.spec_hash = old.spec_hash "
                    "WHERE rewardlab_key_bytes(old.sample_key) IS NOT NULL"
                )
                self._db.execute(f"DROP TABLE {table}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

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
        return {k: RewardResult.from_dict(orjson.loads(v)) for k, v in self.get_encoded(spec_hash, keys).items()}

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
                self._db.execute("ROLLBACK")
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
        """Delete cached results (of one spec, or all) and, with `runs`, the run store too.

        The ``specs`` rows stay: another process with the file open keeps the ids it has
        resolved, so an id must never come back for another spec hash.
        """
        with self._lock:
            if spec_hash is None:
                deleted = self._db.execute("DELETE FROM result_cache").rowcount
                if runs:
                    self._db.execute("DELETE FROM run_rows")
                    self._db.execute("DELETE FROM runs")
            else:
                deleted = self._db.execute(
                    "DELETE FROM result_cache WHERE spec = (SELECT id FROM specs WHERE spec_hash = ?)", (spec_hash,)
                ).rowcount
            self._rows = self._count_locked()
        if spec_hash is None and self.path != ":memory:":
            with self._lock:
                self._db.execute("VACUUM")
        return int(deleted)

    def stats(self) -> CacheStats:
        """Row counts and file size."""
        with self._lock:
            rows = self._count_locked()
            specs = self._db.execute("SELECT COUNT(DISTINCT spec) FROM result_cache").fetchone()[0]
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
        return int(self._db.execute("SELECT COUNT(*) FROM result_cache").fetchone()[0])

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

