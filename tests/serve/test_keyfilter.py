"""The key filter: no stored key is ever ruled out, most absent ones are, and a store sharing
its file with other writers still finds their rows (after a sync) and survives their clears."""

from __future__ import annotations

import random

import pytest

from rewardlab.serve import cache as cache_module
from rewardlab.serve.cache import ResultStore
from rewardlab.serve.keyfilter import KeyFilter


def _keys(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.getrandbits(128).to_bytes(16, "big") for _ in range(n)]


def test_no_false_negatives_and_few_false_positives_at_capacity():
    added, absent = _keys(50_000, 0), _keys(50_000, 1)
    f = KeyFilter(50_000)
    for start in range(0, len(added), 256):
        f.add(added[start : start + 256])
    assert all(f.may_contain(added))
    false_positive_rate = sum(f.may_contain(absent)) / len(absent)
    assert false_positive_rate < 0.01  # ~0.2% expected at 16 bits per key, 4 positions


def test_only_16_byte_digests_are_filtered():
    assert KeyFilter.usable(_keys(3, 0)) and not KeyFilter.usable([b"short"])


def _row(key: bytes) -> tuple[bytes, bytes]:
    return key, b'{"score":1.0,"status":"ok"}'


def test_a_store_finds_rows_another_writer_added_after_a_sync(tmp_path, monkeypatch):
    path = tmp_path / "c.sqlite"
    reader, writer = ResultStore(path), ResultStore(path)
    own, theirs = _keys(2, 0)
    reader.put_encoded("h", [_row(own)])
    assert reader.get_encoded("h", [own, theirs]) == {own: _row(own)[1]}  # the filter is built now
    writer.put_encoded("h", [_row(theirs)])  # another process (here: connection) writes
    assert theirs not in reader.get_encoded("h", [theirs])  # ruled out until the next sync...
    monkeypatch.setattr(cache_module, "_FILTER_SYNC", 0.0)
    assert reader.get_encoded("h", [theirs]) == {theirs: _row(theirs)[1]}  # ...which re-reads new rows


def test_a_clear_by_another_writer_then_new_rows_are_found(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "_FILTER_SYNC", 0.0)
    path = tmp_path / "c.sqlite"
    reader, writer = ResultStore(path), ResultStore(path)
    first, later = _keys(50, 0), _keys(3, 1)
    writer.put_encoded("h", [_row(k) for k in first])
    assert len(reader.get_encoded("h", first)) == 50
    writer.clear()  # rowids start again from 1: below what the reader's filter has seen
    writer.put_encoded("h", [_row(k) for k in later])
    assert set(reader.get_encoded("h", later + first)) == set(later)


def test_the_own_clear_forgets_and_relearns(tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    a, b = _keys(2, 0)
    store.put_encoded("h", [_row(a)])
    assert a in store.get_encoded("h", [a])
    store.clear()
    assert store.get_encoded("h", [a]) == {}
    store.put_encoded("h", [_row(b)])
    assert store.get_encoded("h", [a, b]) == {b: _row(b)[1]}


@pytest.mark.parametrize("path", [":memory:", "file"])
def test_lookups_of_keys_that_are_not_digests_still_query(tmp_path, path):
    store = ResultStore(path if path == ":memory:" else tmp_path / "c.sqlite")
    store.put_encoded("h", [(b"not-a-digest", b'{"score":1.0,"status":"ok"}')])
    assert store.get_encoded("h", [b"not-a-digest"]) == {b"not-a-digest": b'{"score":1.0,"status":"ok"}'}
