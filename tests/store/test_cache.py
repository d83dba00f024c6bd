"""The SQLite result cache."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from rewardlab.core import ErrorKind, RewardResult, Sample
from rewardlab.errors import InputError
from rewardlab.store import ResultStore, RunStore, sample_digest, sample_key


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
    assert sample_digest(a) == bytes.fromhex(sample_key(a)) and len(sample_digest(a)) == 16


def test_results_can_be_stored_by_sample_key_or_digest(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    a, b, c = _samples(3)
    rows = [(sample_key(a), RewardResult.ok(0.1)), (sample_digest(b), RewardResult.ok(0.2)), (c, RewardResult.ok(0.3))]
    assert store.put_many("h", rows) == 3
    assert [r.score for r in store.get_many("h", [a, b, c])] == [0.1, 0.2, 0.3]
    assert set(store.get_encoded("h", [sample_digest(a), sample_digest(c)])) == {sample_digest(a), sample_digest(c)}
    with pytest.raises(InputError, match="neither a sample_key"):
        store.put_many("h", [("not-hex", RewardResult.ok(1.0))])
    with pytest.raises(InputError, match="neither a sample_key"):
        store.put_many("h", [(b"short", RewardResult.ok(1.0))])


def test_a_lookup_under_an_unknown_spec_writes_nothing(tmp_path):
    path = tmp_path / "c.sqlite"
    with ResultStore(path) as store:
        assert store.get_many("never-stored", _samples(2)) == [None, None]
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM specs").fetchone()[0] == 0


def test_spec_ids_are_never_reused_across_open_stores(tmp_path):
    # A second process clears the file and stores another spec: the first process's cached
    # id for its spec must not now point at the other spec's results.
    path = tmp_path / "c.sqlite"
    samples = _samples(3)
    first, second = ResultStore(path), ResultStore(path)
    first.put_many("a", [(s, RewardResult.ok(1.0)) for s in samples])
    assert second.clear() == 3
    second.put_many("b", [(s, RewardResult.ok(2.0)) for s in samples])
    assert first.get_many("a", samples) == [None, None, None]
    assert [r.score for r in first.get_many("b", samples)] == [2.0, 2.0, 2.0]
    first.put_many("a", [(samples[0], RewardResult.ok(3.0))])
    assert [r.score for r in second.get_many("a", samples[:1])] == [3.0]
    assert second.stats().specs == 2
    first.close()
    second.close()


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


def test_a_file_that_is_not_sqlite_is_a_clear_error(tmp_path):
    bad = tmp_path / "c.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(InputError, match="cannot open the result store"):
        ResultStore(bad)


def test_a_spec_id_of_a_rolled_back_write_is_not_remembered(tmp_path):
    path = tmp_path / "c.sqlite"
    samples = _samples(2)
    first, second = ResultStore(path), ResultStore(path)
    with pytest.raises(sqlite3.Error):  # a value SQLite cannot bind: the write is rolled back
        first.put_encoded("a", [(sample_digest(samples[0]), b"{}"), (object(), b"{}")])  # type: ignore[list-item]
    second.put_many("b", [(s, RewardResult.ok(2.0)) for s in samples])  # may get the id "a" had
    assert first.get_many("a", samples) == [None, None]
    first.put_many("a", [(samples[0], RewardResult.ok(1.0))])
    assert [r.score if r else None for r in second.get_many("a", samples)] == [1.0, None]
    assert [r.score for r in first.get_many("b", samples)] == [2.0, 2.0]
    first.close()
    second.close()


_OLD_LAYOUTS = {
    # Before the rowid layout: a WITHOUT ROWID table `results`.
    "results": "CREATE TABLE results (spec_hash TEXT NOT NULL, sample_key TEXT NOT NULL, result TEXT NOT NULL, "
    "created REAL NOT NULL, used REAL NOT NULL, PRIMARY KEY (spec_hash, sample_key)) WITHOUT ROWID;",
    # Before the small-key layout: a rowid table `result_rows` with hex text keys.
    "result_rows": "CREATE TABLE result_rows (spec_hash TEXT NOT NULL, sample_key TEXT NOT NULL, result TEXT NOT NULL, "
    "created REAL NOT NULL, used REAL NOT NULL, UNIQUE (spec_hash, sample_key)); "
    "CREATE INDEX result_rows_used ON result_rows (used);",
}


def _old_store(path, table: str, rows: list[tuple[str, str, bytes | str]]) -> None:
    """A store file written in an old layout, by raw SQL (what the old code wrote)."""
    old = sqlite3.connect(path)
    old.executescript(_OLD_LAYOUTS[table])
    old.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, 1.0, 1.0)", rows)
    old.commit()
    old.close()


def _tables(path) -> set[str]:
    return {name for (name,) in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


@pytest.mark.parametrize("table", ["results", "result_rows"])
def test_a_store_in_an_old_layout_is_migrated_once(tmp_path, table):
    path = tmp_path / "old.sqlite"
    a, b, c = _samples(3)
    _old_store(
        path,
        table,
        [
            ("h", sample_key(a), b'{"score":0.25,"status":"ok"}'),
            ("h", sample_key(b), '{"score":0.5,"status":"ok"}'),  # a text value, as an older writer left it
            ("g", sample_key(a), b'{"score":0.75,"status":"ok"}'),
            ("h", "not-a-key", b'{"score":1.0,"status":"ok"}'),  # could never be looked up: left behind
        ],
    )
    with ResultStore(path) as store:
        assert [r.score if r else None for r in store.get_many("h", [a, b, c])] == [0.25, 0.5, None]
        assert [r.score for r in store.get_many("g", [a])] == [0.75]
        assert (store.stats().rows, store.stats().specs) == (3, 2)
        assert store.integrity_check() == "ok"
    assert table not in _tables(path) and "result_cache" in _tables(path)
    with ResultStore(path) as store:  # a second open finds nothing left to migrate
        assert [r.score for r in store.get_many("h", [a])] == [0.25]
        assert store.stats().rows == 3


def test_both_old_layouts_in_one_file_are_migrated_together(tmp_path):
    path = tmp_path / "old.sqlite"
    a, b = _samples(2)
    _old_store(path, "results", [("h", sample_key(a), b'{"score":0.1,"status":"ok"}'), ("h", sample_key(b), b'{"score":0.2,"status":"ok"}')])
    _old_store(path, "result_rows", [("h", sample_key(a), b'{"score":0.9,"status":"ok"}')])  # newer: wins
    with ResultStore(path) as store:
        assert [r.score for r in store.get_many("h", [a, b])] == [0.9, 0.2]
    assert not {"results", "result_rows"} & _tables(path)


def test_a_failed_migration_leaves_the_old_table_as_it_was(tmp_path):
    # The move is one transaction: make its insert fail half-way and nothing may be lost.
    path = tmp_path / "old.sqlite"
    samples = _samples(3)
    _old_store(path, "result_rows", [("h", sample_key(s), b'{"score":0.5,"status":"ok"}') for s in samples])
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE result_cache (spec INTEGER NOT NULL, key BLOB NOT NULL, result BLOB NOT NULL, used REAL NOT NULL, "
        "UNIQUE (spec, key)); CREATE TABLE seen (n INTEGER);"
        "CREATE TRIGGER third BEFORE INSERT ON result_cache WHEN (SELECT COUNT(*) FROM seen) >= 2 "
        "BEGIN SELECT RAISE(ABORT, 'disk full, say'); END;"
        "CREATE TRIGGER count AFTER INSERT ON result_cache BEGIN INSERT INTO seen VALUES (1); END;"
    )
    db.close()
    with pytest.raises(InputError, match="disk full, say"):
        ResultStore(path)
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM result_rows").fetchone()[0] == 3
    assert db.execute("SELECT COUNT(*) FROM result_cache").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM specs").fetchone()[0] == 0
    db.executescript("DROP TRIGGER third; DROP TRIGGER count;")
    db.close()
    with ResultStore(path) as store:  # the next open migrates
        assert [r.score for r in store.get_many("h", samples)] == [0.5, 0.5, 0.5]


def test_clear_all_forgets_the_runs_of_the_same_file_too(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    runs = RunStore(store.db)
    runs.start_run("r1", spec_hash="h", source="data.jsonl")
    runs.record_rows("r1", [(1, {"v": 1})])
    store.put_many("h", [(_samples(1)[0], RewardResult.ok(1.0))])
    assert (store.stats().runs, store.stats().run_rows) == (1, 1)
    store.clear(runs=False)
    assert runs.counts() == (1, 1)
    store.clear()
    assert runs.counts() == (0, 0) and store.stats().rows == 0
