"""The run store: the rows of a batch run of ``rewardlab score``, recorded as they finish.

Tables ``runs`` / ``run_rows`` of the store file (`rewardlab.store.sqlite`). A run killed half-way
resumes where it stopped (``--resume``) and its output is assembled from the store: every
input row exactly once, in input order (`rewardlab.runner.run`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rewardlab.core.jsontext import LONE_SURROGATE
from rewardlab.errors import InputError
from rewardlab.store.sqlite import Database, OnDatabase, rollback

__all__ = ["RunInfo", "RunStore"]


@dataclass(frozen=True)
class RunInfo:
    """One recorded batch run."""

    run_id: str
    spec_hash: str
    source: str
    total: int | None
    done: int
    finished: bool


class RunStore(OnDatabase):
    """Recorded batch runs (thread-safe; the same file as the result cache can hold them).

    Args:
        path: the store file, or an open `Database` to share (e.g. ``ResultStore(...).db``).

    Examples:
        >>> runs = RunStore(":memory:")
        >>> runs.start_run("r1", spec_hash="h", source="data.jsonl").done
        0
        >>> runs.record_rows("r1", [(2, {"v": 2}), (1, {"v": 1})])
        2
        >>> [index for index, _ in runs.iter_run("r1")]
        [1, 2]
    """

    def __init__(self, path: str | os.PathLike[str] | Database):
        super().__init__(path)
        self._lock, self._db = self.db.lock, self.db.conn

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
        values = [(run_id, int(i), _row_text(payload)) for i, payload in rows]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT OR IGNORE INTO run_rows VALUES (?, ?, ?)", values)
                self._db.execute("COMMIT")
            except BaseException:
                rollback(self._db)
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

    def counts(self) -> tuple[int, int]:
        """(runs, recorded rows) in the store."""
        with self._lock:
            runs = self._db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            rows = self._db.execute("SELECT COUNT(*) FROM run_rows").fetchone()[0]
        return int(runs), int(rows)

    def clear(self) -> None:
        """Forget every run."""
        with self._lock:
            self._db.execute("DELETE FROM run_rows")
            self._db.execute("DELETE FROM runs")

    def __repr__(self) -> str:
        return f"RunStore({self.path!r})"


def _row_text(row: Mapping[str, Any]) -> str:
    """A recorded row as JSON text SQLite can store as UTF-8: a lone surrogate (JSON's
    ``\\ud800`` escape read into a string) is written as its escape, the rest as itself."""
    text = json.dumps(row, ensure_ascii=False, default=str)
    return json.dumps(row, ensure_ascii=True, default=str) if LONE_SURROGATE.search(text) else text
