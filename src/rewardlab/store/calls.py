"""A SQLite cache of judge calls: the same request body gets the stored completion, no request.

The key is the SHA-256 of the canonical JSON request (model, messages, sampling parameters)
plus a vote index, so the k answers of a k-vote are k entries, not one answer repeated.
Only successful completions are stored (a timeout or a 503 may not happen again). One
connection per process, guarded by a lock: judge batches call from many threads.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Mapping
from typing import Any

__all__ = ["CallCache"]

_SCHEMA = "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, completion TEXT NOT NULL)"


class CallCache:
    """Stored completions by request.

    Args:
        path: the SQLite file (created if missing).
    """

    def __init__(self, path: str):
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
        return self._db

    @staticmethod
    def key(body: Mapping[str, Any], vote: int) -> str:
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(f"{vote}\n{text}".encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn().execute("SELECT completion FROM calls WHERE key = ?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def put(self, key: str, completion: Mapping[str, Any]) -> None:
        with self._lock:
            db = self._conn()
            db.execute("INSERT OR REPLACE INTO calls VALUES (?, ?)", (key, json.dumps(completion)))
            db.commit()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}  # a worker process opens its own connection

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])  # type: ignore[misc]
