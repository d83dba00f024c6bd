"""The cache's write-behind: rows wait while the reward is busy, are answered from memory
meanwhile, and land when it is idle, at the high-water mark, past the limit, or on close."""

from __future__ import annotations

import logging
import time

import pytest

from rewardlab.serve.writer import CacheWriter
from rewardlab.store import ResultStore


def _rows(start: int, n: int) -> list[tuple[bytes, bytes]]:
    return [(i.to_bytes(16, "big"), b'{"score":%d.0,"status":"ok"}' % i) for i in range(start, start + n)]


def _stored(store: ResultStore) -> int:
    return store.stats().rows


def _wait_until(check, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.005)
    return check()


def test_rows_wait_while_busy_are_looked_up_meanwhile_and_land_once_idle(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    writer = CacheWriter(store, "h", "r", idle_after=0.05)
    writer.set_busy(True)
    rows = _rows(0, 10)
    writer.add(rows)
    time.sleep(0.2)
    assert _stored(store) == 0 and writer.waiting == 10  # busy: nothing written yet
    assert writer.lookup([rows[3][0], b"x" * 16]) == {rows[3][0]: rows[3][1]}
    idle_at = time.monotonic()
    writer.set_busy(False)
    assert _wait_until(lambda: _stored(store) == 10)
    assert time.monotonic() - idle_at >= 0.05  # not before `idle_after`
    assert _wait_until(lambda: writer.lookup([rows[3][0]]) == {})  # written rows leave memory
    assert store.get_encoded("h", [rows[3][0]]) == {rows[3][0]: rows[3][1]}
    writer.close()


def test_the_high_water_mark_writes_while_busy(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    writer = CacheWriter(store, "h", "r", high_water=100)
    writer.set_busy(True)
    writer.add(_rows(0, 99))
    time.sleep(0.1)
    assert _stored(store) == 0
    writer.add(_rows(99, 1))  # 100 waiting: write even though the reward is busy
    assert _wait_until(lambda: _stored(store) == 100)
    writer.close()


def test_past_the_limit_the_caller_writes_and_close_writes_the_rest(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    writer = CacheWriter(store, "h", "r", high_water=10_000, limit=50)
    writer.set_busy(True)
    writer.add(_rows(0, 50))
    writer.add(_rows(50, 5))  # 50 already waiting: written in this thread, now
    assert _stored(store) == 5 and writer.waiting == 50
    writer.close()  # still busy, but closing writes everything
    assert _stored(store) == 55 and writer.waiting == 0


def test_a_failed_write_is_logged_and_the_writer_goes_on(tmp_path, caplog):
    store = ResultStore(tmp_path / "c.sqlite")
    writer = CacheWriter(store, "h", "r", idle_after=0.0)
    real_put = store.put_encoded
    calls = []

    def failing_once(spec_hash, rows):
        calls.append(len(rows))
        if len(calls) == 1:
            raise OSError("disk full")
        return real_put(spec_hash, rows)

    store.put_encoded = failing_once  # the store itself is real; only its first write fails
    with caplog.at_level(logging.ERROR, logger="rewardlab.serve.writer"):
        writer.add(_rows(0, 3))
        assert _wait_until(lambda: len(calls) == 1 and writer.lookup([_rows(0, 1)[0][0]]) == {})
        writer.add(_rows(3, 2))
        writer.close()
    assert "3 results could not be written" in caplog.text
    assert _stored(store) == 2  # the failed rows are simply not cached


@pytest.mark.parametrize("busy", [True, False])
def test_close_without_rows_returns_at_once(tmp_path, busy):
    writer = CacheWriter(ResultStore(tmp_path / "c.sqlite"), "h", "r")
    writer.set_busy(busy)
    started = time.monotonic()
    writer.close()
    assert time.monotonic() - started < 1.0


def test_a_failed_write_in_the_callers_thread_is_counted_not_raised(tmp_path, caplog):
    """Past the limit the caller (a batch's thread) writes: a write that fails there (a full
    disk, a locked file) must not fail the batch whose results were computed; it is logged and
    counted like the writer thread's."""
    store = ResultStore(tmp_path / "c.sqlite")
    counted: list[int] = []
    writer = CacheWriter(store, "h", "r", high_water=10_000, limit=5, on_failure=counted.append)
    writer.set_busy(True)
    writer.add(_rows(0, 5))
    store.close()  # every write fails from now on
    with caplog.at_level(logging.ERROR, logger="rewardlab.serve.writer"):
        writer.add(_rows(5, 3))  # behind: this thread writes, and the write fails
    assert counted == [3] and writer.failed == 3
    assert "3 results could not be written to the cache" in caplog.text
    writer.close()
    assert writer.failed == 8 and sum(counted) == 8
