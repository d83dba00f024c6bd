"""The SQLite run store: rows of batch runs, recorded once, read in order."""

from __future__ import annotations

import pytest

from rewardlab.errors import InputError
from rewardlab.store import ResultStore, RunStore


def test_run_rows_are_recorded_once_and_read_in_order(tmp_path):
    store = RunStore(tmp_path / "c.sqlite")
    store.start_run("r1", spec_hash="h", source="data.jsonl", total=5)
    store.record_rows("r1", [(3, {"v": 3}), (1, {"v": 1})])
    store.record_rows("r1", [(1, {"v": "second write"}), (2, {"v": 2})])  # row 1 again: ignored
    assert store.done_rows("r1") == {1, 2, 3}
    assert list(store.iter_run("r1", page=2)) == [(1, {"v": 1}), (2, {"v": 2}), (3, {"v": 3})]
    info = store.start_run("r1", spec_hash="h", source="data.jsonl")
    assert (info.done, info.finished) == (3, False)


def test_resuming_a_run_with_another_spec_is_refused(tmp_path):
    store = RunStore(tmp_path / "c.sqlite")
    store.start_run("r1", spec_hash="h", source="data.jsonl")
    with pytest.raises(InputError, match="started with spec h"):
        store.start_run("r1", spec_hash="other", source="data.jsonl")


def test_a_run_store_and_a_cache_share_one_file(tmp_path):
    path = tmp_path / "c.sqlite"
    with RunStore(path) as runs:
        runs.start_run("r1", spec_hash="h", source="data.jsonl")
    with ResultStore(path) as cache:
        assert cache.stats().runs == 1
        assert RunStore(cache.db).run_info("r1").spec_hash == "h"
