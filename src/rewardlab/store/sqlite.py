"""The SQLite file behind the result cache and the run store: one file in WAL mode.

Why SQLite in WAL mode: readers never block the writer, a committed transaction survives a
SIGKILL of the process (the WAL is replayed on the next open), and it is in the standard
library. ``synchronous=NORMAL`` is durable against process crashes (not against power loss,
which a cache can afford). One write connection is shared behind a lock, so the stores can be
used from a server's worker threads; lookups get a connection of their own (see `Database`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from pathlib import Path
from typing import Self

from rewardlab.errors import InputError

__all__ = ["Database", "OnDatabase", "default_cache_path", "rollback"]

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


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already.

    On some errors (``SQLITE_FULL``: the disk is full; ``SQLITE_IOERR``, ``SQLITE_NOMEM``)
    SQLite rolls the transaction back itself (https://www.sqlite.org/lang_transaction.html,
    "Response To Errors Within A Transaction"); a ``ROLLBACK`` then fails with "cannot rollback
    - no transaction is active", and that error would replace the one that says what happened.
    """
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _key_bytes(key: str) -> bytes | None:
    """A stored hex `sample_key` as the 16 bytes the cache now keys by; ``None`` if it is not one."""
    try:
        raw = bytes.fromhex(key)
    except (TypeError, ValueError):
        return None
    return raw if len(raw) == 16 else None


class Database:
    """An open store file: the schema of both stores, a write and a read connection.

    `ResultStore` and `RunStore` each open one from a path, or share one (``RunStore(cache.db)``).

    Args:
        path: the database file (created with its parent directories), or ``":memory:"``.

    Raises:
        InputError: the file is not an SQLite database (names the file).
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        try:
            self.conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.executescript(_SCHEMA)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot open the result store: {exc}; delete the file or pass another --cache path", source=self.path) from exc
        # Lookups get a connection of their own: in WAL mode a reader never waits for the
        # writer, so a request's cache lookup does not queue behind the server's background
        # cache writes (which hold `lock` for a whole batch insert). ":memory:" is one
        # database per connection, so there lookups share the writer's connection.
        self.read_lock = threading.Lock()
        self.reader = self.conn
        if self.path != ":memory:":
            self.reader = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0, isolation_level=None)
        else:
            self.read_lock = self.lock
        self.closed = False

    @property
    def lookups_wait_for_writes(self) -> bool:
        """Whether a lookup can wait for a write (":memory:" shares one connection)."""
        return self.read_lock is self.lock

    def size(self) -> int:
        """Bytes on disk (the file and its WAL; 0 in memory)."""
        if self.path == ":memory:":
            return 0
        return sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))

    def integrity_check(self) -> str:
        """SQLite's own consistency check: ``"ok"`` for a healthy file."""
        with self.lock:
            return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])

    def vacuum(self) -> None:
        """Give the space of deleted rows back to the file system."""
        if self.path != ":memory:":
            with self.lock:
                self.conn.execute("VACUUM")

    def _migrate(self) -> None:
        """Move the rows of the two earlier layouts, if any, into `result_cache`, once.

        ``results`` (WITHOUT ROWID) and then ``result_rows`` (rowid) held ``(spec_hash,
        sample_key)`` as text; their rows move over in one transaction (hex keys become the
        16 bytes; a key that is not 32 hex characters could never be looked up and is left
        behind), and the old tables are dropped. A crash before the commit leaves the old
        tables as they were, to be migrated on the next open.
        """
        present = {name for (name,) in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        old = [name for name in ("result_rows", "results") if name in present]  # newest first: its rows win
        if not old:
            return
        self.conn.create_function("rewardlab_key_bytes", 1, _key_bytes, deterministic=True)
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for table in old:
                self.conn.execute(f"INSERT OR IGNORE INTO specs (spec_hash) SELECT DISTINCT spec_hash FROM {table}")
                self.conn.execute(
                    "INSERT OR IGNORE INTO result_cache (spec, key, result, used) "
                    "SELECT specs.id, rewardlab_key_bytes(old.sample_key), old.result, old.used "
                    f"FROM {table} AS old JOIN specs ON specs.spec_hash = old.spec_hash "
                    "WHERE rewardlab_key_bytes(old.sample_key) IS NOT NULL"
                )
                self.conn.execute(f"DROP TABLE {table}")
            self.conn.execute("COMMIT")
        except BaseException:
            rollback(self.conn)
            raise

    def close(self) -> None:
        """Close both connections (the WAL is checkpointed by SQLite); safe to call twice."""
        with self.lock, self.read_lock if self.reader is not self.conn else contextlib.nullcontext():
            if self.closed:
                return
            if self.reader is not self.conn:
                self.reader.close()
            self.conn.close()
            self.closed = True

    def __repr__(self) -> str:
        return f"Database({self.path!r})"


class OnDatabase:
    """What both stores share: a store file opened from `path`, or an open `Database` shared
    with the other store (closed by whoever opened it)."""

    def __init__(self, path: str | os.PathLike[str] | Database):
        self._owns_db = not isinstance(path, Database)
        self.db = path if isinstance(path, Database) else Database(path)
        self.path = self.db.path

    def integrity_check(self) -> str:
        """SQLite's own consistency check: ``"ok"`` for a healthy file."""
        return self.db.integrity_check()

    def close(self) -> None:
        """Close the file, unless it was passed in as a `Database`."""
        if self._owns_db:
            self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
