"""The SQLite result cache and run store."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from rewardlab.core import ErrorKind, RewardResult, Sample
from rewardlab.errors import InputError
from rewardlab.serve.cache import ResultStore, sample_key


def _samples(n: int) -> list[Sample]:
    return [Sample(prompt="p", response=f"r{i}", reference=str(i)) for i in range(n)]


def test_put_then_get_returns_equal_results(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    samples = _samples(3)
    results = [RewardResult.ok(0.5, info={"x": 1}).stamped("h"), RewardResult.skip("gate"), RewardResult.ok(1.0)]
    assert store.put_many("h", zip(samples, results, strict=True)) == 3
    assert store.get_many("h", samples) == results
    assert store.get_many("other-spec", samples) == [None, None, None]


def test_error_results_are_not_cached(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    s = _samples(1)[0]
    assert store.put_many("h", [(s, RewardResult.failure(ErrorKind.TIMEOUT, "slow"))]) == 0
    assert store.get_many("h", [s]) == [None]


def test_sample_key_ignores_caller_id_but_not_content():
    a = Sample(response="x", id="7")
    assert sample_key(a) == sample_key(Sample(response="x", id="8"))
    assert sample_key(a) != sample_key(Sample(response="y", id="7"))


def test_cache_survives_reopen(tmp_path):
    path = tmp_path / "c.sqlite"
    samples = _samples(10)
    with ResultStore(path) as store:
        store.put_many("h", [(s, RewardResult.ok(i)) for i, s in enumerate(samples)])
    with ResultStore(path) as store:
        assert [r.score for r in store.get_many("h", samples)] == list(range(10))
        assert store.integrity_check() == "ok"
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_size_is_bounded_and_least_recently_used_are_evicted(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite", max_rows=100, evict_fraction=0.1, touch_after=0.0)
    first = _samples(100)
    store.put_many("h", [(s, RewardResult.ok(1)) for s in first])
    store.get_many("h", first[:10])  # touch the first ten: they are now the most recently used
    more = [Sample(response=f"new{i}") for i in range(50)]
    store.put_many("h", [(s, RewardResult.ok(2)) for s in more])
    stats = store.stats()
    assert stats.rows <= 100
    assert all(r is not None for r in store.get_many("h", first[:10]))
    assert all(r is not None for r in store.get_many("h", more))
    assert sum(r is None for r in store.get_many("h", first[10:])) >= 50


def test_clear_one_spec_keeps_others(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    s = _samples(2)
    store.put_many("a", [(x, RewardResult.ok(1)) for x in s])
    store.put_many("b", [(x, RewardResult.ok(1)) for x in s])
    assert store.clear("a") == 2
    assert store.stats().rows == 2
    assert store.clear() == 2
    assert store.stats().rows == 0


def test_concurrent_writers_from_threads_lose_nothing(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")

    def write(t: int) -> None:
        for k in range(20):
            batch = [Sample(response=f"{t}-{k}-{i}") for i in range(10)]
            store.put_many("h", [(s, RewardResult.ok(t)) for s in batch])

    threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.stats().rows == 4 * 20 * 10


def test_run_rows_are_recorded_once_and_read_in_order(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    store.start_run("r1", spec_hash="h", source="data.jsonl", total=5)
    store.record_rows("r1", [(3, {"v": 3}), (1, {"v": 1})])
    store.record_rows("r1", [(1, {"v": "second write"}), (2, {"v": 2})])  # row 1 again: ignored
    assert store.done_rows("r1") == {1, 2, 3}
    assert list(store.iter_run("r1", page=2)) == [(1, {"v": 1}), (2, {"v": 2}), (3, {"v": 3})]
    info = store.start_run("r1", spec_hash="h", source="data.jsonl")
    assert (info.done, info.finished) == (3, False)


def test_resuming_a_run_with_another_spec_is_refused(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    store.start_run("r1", spec_hash="h", source="data.jsonl")
    with pytest.raises(InputError, match="started with spec h"):
        store.start_run("r1", spec_hash="other", source="data.jsonl")


def test_a_file_that_is_not_sqlite_is_a_clear_error(tmp_path):
    bad = tmp_path / "c.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(InputError, match="cannot open the result store"):
        ResultStore(bad)


def test_a_store_in_the_old_without_rowid_layout_is_migrated_once(tmp_path):
    # Stores written before the rowid layout kept results in a WITHOUT ROWID table `results`.
    path = tmp_path / "old.sqlite"
    sample = _samples(1)[0]
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE results (spec_hash TEXT NOT NULL, sample_key TEXT NOT NULL, result TEXT NOT NULL, "
        "created REAL NOT NULL, used REAL NOT NULL, PRIMARY KEY (spec_hash, sample_key)) WITHOUT ROWID;"
    )
    old.execute("INSERT INTO results VALUES ('h', ?, ?, 1.0, 1.0)", (sample_key(sample), b'{"score":0.25,"status":"ok"}'))
    old.commit()
    old.close()
    with ResultStore(path) as store:
        assert [r.score for r in store.get_many("h", [sample])] == [0.25]
        assert store.stats().rows == 1
    tables = {name for (name,) in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "results" not in tables and "result_rows" in tables
    with ResultStore(path) as store:  # a second open finds nothing left to migrate
        assert [r.score for r in store.get_many("h", [sample])] == [0.25]
