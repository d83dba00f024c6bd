"""The file engine (`runner.run.score_chunks`): every run of `score_file`, streamed or recorded,
in this process or on the worker pool, scores through an `Executor` (`BaseExecutor.score_rows`),
with one chunk loop and one `--strict` rule; recorded runs take `--explode` and resume it."""

import json
import os
from pathlib import Path
from typing import ClassVar

import pytest

import rewardlab
from rewardlab.compose import build
from rewardlab.core import BaseReward, spec_hash
from rewardlab.errors import InputError
from rewardlab.runner import ScoreFileOptions, score_file
from rewardlab.runner.executors import InlineExecutor, PoolExecutor
from rewardlab.runner.run import FileRows, score_file_streamed
from rewardlab.store import RunStore

from .rewards_for_tests import GroupMean

SPEC = '[reward]\nname = "t"\n[[reward.components]]\nname = "exact"\nuse = "text.exact"\n'


def _write(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class CountingExecutor(InlineExecutor):
    """An in-process executor that remembers the size of every batch it was given."""

    def __init__(self, reward):
        super().__init__(reward)
        self.batches: list[int] = []

    def map(self, samples):
        self.batches.append(len(samples))
        return super().map(samples)


class BatchSays(BaseReward):
    """Scores 0 one at a time and 1 in a batch: tells which call a runner made."""

    name = "test.batch_says"

    def compute(self, sample):
        return 0.0

    def compute_batch(self, samples):
        return [1.0] * len(samples)


def test_a_streamed_run_scores_chunks_through_the_executor_it_is_given(tmp_path):
    rows = [{"id": i, "response": "a", "reference": "a" if i % 2 else "b"} for i in range(130)]
    data = _write(tmp_path / "in.jsonl", rows)
    reward = build(SPEC)
    executor = CountingExecutor(reward)
    summary = score_file_streamed(executor, data, tmp_path / "engine.jsonl", spec_hash=spec_hash(reward))
    score_file(reward, data, tmp_path / "pool.jsonl", ScoreFileOptions(workers=1))
    assert executor.batches == [64, 64, 2]
    assert summary.rows == 130
    assert _read(tmp_path / "engine.jsonl") == _read(tmp_path / "pool.jsonl")  # same rows as the worker pool writes


def test_workers_0_scores_a_file_in_batches_as_rewardlab_score_does(tmp_path):
    """One meaning of `workers=0`: the reward's `score_batch` in this process, for files too."""
    data = _write(tmp_path / "in.jsonl", [{"response": "x"}, {"response": "y"}])
    score_file(BatchSays(), data, tmp_path / "out.jsonl", ScoreFileOptions(workers=0))
    assert [r["reward"] for r in _read(tmp_path / "out.jsonl")] == [r.score for r in rewardlab.score(BatchSays(), [{"response": "x"}] * 2)]
    assert [r["reward"] for r in _read(tmp_path / "out.jsonl")] == [1.0, 1.0]


class StopsOnce(BaseReward):
    """The length of the response; the first time it meets "stop" the run is interrupted
    (Ctrl-C), as a user or a killed job would interrupt it. `flag` says it has happened."""

    name = "test.stops_once"
    flag: ClassVar[Path]
    scored: ClassVar[list[str]] = []

    def compute(self, sample):
        if sample.response == "stop" and not self.flag.exists():
            self.flag.touch()
            raise KeyboardInterrupt
        StopsOnce.scored.append(sample.response)
        return float(len(sample.response))


EXPLODED = [{"id": 1, "responses": ["a", "bb", "ccc"]}, {"id": 2, "responses": ["dd", "stop", "e"]},
            {"id": 3, "responses": "not a list"}, "{not json",
            {"id": 5, "responses": ["ffff"]}, {"id": 6, "responses": ["g", "hh"]}]  # fmt: skip


def test_a_recorded_exploded_run_interrupted_mid_line_resumes_to_the_uninterrupted_output(tmp_path):
    """Exploded rows are recorded by (line, index within the line): a run stopped between two
    rows of one line resumes with the rest of that line, scores no recorded row again, and
    writes what an uninterrupted run writes (and a streamed one)."""
    data = _write(tmp_path / "in.jsonl", EXPLODED)
    StopsOnce.flag = tmp_path / "stopped"
    opts = {"workers": 0, "explode": ("responses",), "fields": {"response": "responses"}, "record_every": 4}
    recorded = ScoreFileOptions(resume=True, run_store=tmp_path / "runs.sqlite", run_id="r", **opts)
    with pytest.raises(KeyboardInterrupt):
        score_file(StopsOnce(), data, tmp_path / "out.jsonl", recorded)
    with RunStore(tmp_path / "runs.sqlite") as store:
        assert store.run_info("r").done == 4  # line 1's three rows and line 2's first
    StopsOnce.scored = []
    summary = score_file(StopsOnce(), data, tmp_path / "out.jsonl", recorded)
    assert StopsOnce.scored == ["stop", "e", "ffff", "g", "hh"]  # nothing recorded is scored again
    fresh = ScoreFileOptions(resume=True, run_store=tmp_path / "fresh.sqlite", **opts)
    score_file(StopsOnce(), data, tmp_path / "fresh.jsonl", fresh)
    score_file(StopsOnce(), data, tmp_path / "streamed.jsonl", ScoreFileOptions(**opts))
    out = _read(tmp_path / "out.jsonl")
    assert out == _read(tmp_path / "fresh.jsonl") == _read(tmp_path / "streamed.jsonl")
    assert summary.rows == 11
    assert [(r["source_line"], r.get("explode_index"), r["reward"]) for r in out] == [
        (1, 0, 1.0), (1, 1, 2.0), (1, 2, 3.0), (2, 0, 2.0), (2, 1, 4.0), (2, 2, 1.0), (3, None, None), (4, None, None),
        (5, 0, 4.0), (6, 0, 1.0), (6, 1, 2.0)]  # fmt: skip
    assert [r["reward_error_kind"] for r in out if r["reward"] is None] == ["invalid_input", "invalid_input"]


def test_a_recorded_run_is_not_resumed_with_rows_exploded_another_way(tmp_path):
    data = _write(tmp_path / "in.jsonl", [{"responses": ["a", "b"], "reference": "a"}])
    store_path = tmp_path / "runs.sqlite"
    score_file(SPEC, data, tmp_path / "out.jsonl", ScoreFileOptions(workers=0, resume=True, run_store=store_path, run_id="r",
               explode=("responses",), fields={"response": "responses"}))  # fmt: skip
    with pytest.raises(InputError, match="--explode responses"):
        score_file(SPEC, data, tmp_path / "out.jsonl", ScoreFileOptions(workers=0, resume=True, run_store=store_path, run_id="r",
                   fields={"response": "responses"}))  # fmt: skip


@pytest.mark.parametrize("recorded", [False, True])
def test_strict_keeps_the_rows_before_the_first_bad_row(tmp_path, recorded):
    """The engine's one `--strict` rule: rows before the bad one are kept (written, or recorded
    so a resumed run need not score them again); the bad row and later ones are not."""
    data = _write(tmp_path / "in.jsonl", [{"response": "a", "reference": "a"}, "{not json", {"response": "b", "reference": "b"}])
    store_path = tmp_path / "runs.sqlite"
    opts = ScoreFileOptions(workers=0, strict=True, resume=recorded, run_store=store_path, run_id="r")
    with pytest.raises(InputError, match=r"in.jsonl:2.*--strict"):
        score_file(SPEC, data, tmp_path / "out.jsonl", opts)
    if recorded:
        with RunStore(store_path) as store:
            assert store.done_rows("r") == {1}
    else:
        assert [r["source_line"] for r in _read(tmp_path / "out.jsonl")] == [1]


@pytest.mark.parametrize("recorded", [False, True])
def test_a_group_run_with_explode_scores_each_exploded_group_whole(tmp_path, recorded):
    """Rows exploded from one input row are scored with their group wherever it is in the file."""
    rows = [{"group": "g", "meta": {"v": 1}, "responses": ["a", "b"]}, {"group": "h", "meta": {"v": 5}, "responses": ["c"]},
            {"group": "g", "meta": {"v": 4}, "responses": ["d"]}]  # fmt: skip
    opts = ScoreFileOptions(workers=0, explode=("responses",), fields={"response": "responses"}, resume=recorded,
                            run_store=tmp_path / "runs.sqlite", record_every=2)  # fmt: skip
    summary = score_file(GroupMean(), _write(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl", opts)
    out = _read(tmp_path / "out.jsonl")
    assert summary.rows == 4
    assert [(r["source_line"], r["explode_index"], r["reward"], r["reward_info"]["seen"]) for r in out] == [
        (1, 0, 2.0, 3), (1, 1, 2.0, 3), (2, 0, 5.0, 1), (3, 0, 2.0, 3)]  # fmt: skip


def test_record_key_orders_exploded_rows_by_line_then_index_and_refuses_what_a_key_cannot_hold():
    from rewardlab.runner.run import record_key

    keys = [record_key((line, {"explode_index": i}), True) for line, i in [(1, 0), (1, 7), (2, 0), (10, 3)]]
    assert keys == sorted(keys) and len(set(keys)) == 4
    assert record_key((3, "{not json"), True) == record_key((3, {"explode_index": 0}), True)  # a line's only row
    assert record_key((3, {"explode_index": 5}), False) == 3  # not exploded: the line
    with pytest.raises(InputError, match=r"in.jsonl:2: an exploded run records at most"):
        record_key((2, {"explode_index": 2**32}), True, "in.jsonl")


PARENT = os.getpid()


class WhereScored(BaseReward):
    """1 in a worker process, 0 in the test's own process."""

    name = "test.where_scored"

    def compute(self, sample):
        return float(os.getpid() != PARENT)


def test_the_pool_scores_raw_rows_in_its_workers_and_hands_back_each_chunk_whole():
    """`PoolExecutor.score_rows`: one stream of raw rows through the workers (they decode, score
    and encode), cut back into the engine's chunks, empty ones included; the same rows as the
    default path in this process, apart from where they were scored."""
    rows = [(n, json.dumps({"response": "a" * n})) for n in range(1, 8)] + [(8, "{not json")]
    chunks = [rows[:3], [], rows[3:4], rows[4:]]
    job = FileRows("in.jsonl", "h", "v", serialize=False)
    pool = PoolExecutor(WhereScored(), workers=2, timeout=30)
    try:
        pooled = list(pool.score_rows(chunks, job))
    finally:
        pool.close()
    here = list(InlineExecutor(WhereScored()).score_rows(chunks, job))
    assert [len(outs) for outs in pooled] == [3, 0, 1, 4]
    assert [out[0]["reward"] for outs in pooled for out in outs] == [1.0] * 7 + [None]
    assert [out[0]["reward"] for outs in here for out in outs] == [0.0] * 7 + [None]
    assert [out[0]["reward_error"] for outs in pooled for out in outs][-1] == [out[0]["reward_error"] for outs in here for out in outs][-1]
