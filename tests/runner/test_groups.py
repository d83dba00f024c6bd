"""Group rewards through every executor: a group split across chunks would be voted on a part.

The files here are built so that any cut through a group changes its members' results (the
`naive` control checks that), and every executor must give what one `score_batch` over the
whole file gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rewardlab
from rewardlab.compose import build
from rewardlab.core import Sample, Status, group_keys
from rewardlab.runner import ScoreFileOptions, WorkerPool, score_file
from rewardlab.runner.executors import InlineExecutor, PoolExecutor, executor_group_keys
from rewardlab.runner.groups import pack_units, scatter, units_of
from rewardlab.runner.run import score_file_resumable
from rewardlab.store import RunStore

from .rewards_for_tests import GroupMean, SlowGroup

VOTE = {"reward": {"name": "ttrl", "components": [
    {"name": "vote", "use": "labelfree.majority_vote", "params": {"min_group": 3, "answer_key": "ans"}},
    {"name": "exact", "use": "text.exact", "weight": 0.0},
]}}  # fmt: skip


def _rows(groups: int = 12, size: int = 5, *, interleave: bool = False) -> list[dict]:
    """Per group: 3 members answer `g`, 2 answer `g+100`, in an order where any cut of 1-4
    members changes the vote (a part of 2 may hold only the minority, or tie)."""
    rows = []
    for g in range(groups):
        answers = [g + 100, g, g + 100, g, g][:size]
        rows += [{"prompt": f"q{g}", "response": str(a), "reference": str(g), "group": f"g{g}", "meta": {"ans": str(a), "v": a}} for a in answers]
    if interleave:  # member k of every group, then member k+1: each group spread over the file
        rows = [rows[g * size + k] for k in range(size) for g in range(groups)]
    return rows


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _expected(reward, rows: list[dict]) -> list[tuple]:
    results = reward.score_batch([Sample.from_dict(r) for r in rows])
    return [(r.status.value, r.score, json.dumps(dict(r.info), sort_keys=True, default=str)) for r in results]


def _read(path: Path) -> list[tuple]:
    out = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        info = {k: v for k, v in row["reward_info"].items()}
        out.append((row["reward_status"], row["reward"], info))
    return out


def _flat_expected(reward, rows: list[dict], tmp_path: Path) -> list[tuple]:
    """One piece: the same file through the inline executor in one record (the reference)."""
    store = RunStore(tmp_path / "ref.sqlite")
    try:
        opts = ScoreFileOptions(record_every=10**6)
        score_file_resumable(InlineExecutor(reward), _write(tmp_path / "ref_in.jsonl", rows), tmp_path / "ref.jsonl",
                             store=store, spec_hash="h", options=opts)  # fmt: skip
    finally:
        store.close()
    return _read(tmp_path / "ref.jsonl")


# -- the pieces ------------------------------------------------------------------------------


def test_units_link_samples_sharing_a_group_or_a_prompt():
    samples = [Sample(prompt="a", group="1"), Sample(prompt="b", group="2"), Sample(prompt="a", group="3"), Sample(prompt="c", group="2"), Sample(prompt="d")]
    assert units_of(samples, {"group"}) == [[0], [1, 3], [2], [4]]
    assert units_of(samples, {"group", "prompt"}) == [[0, 2], [1, 3], [4]]
    assert units_of(samples, ()) == [[0], [1], [2], [3], [4]]


def test_pack_units_never_cuts_a_unit_and_keeps_an_oversized_one_whole():
    assert pack_units([[0, 1, 2], [3], [4, 5, 6, 7, 8], [9]], 4) == [[0, 1, 2, 3], [4, 5, 6, 7, 8], [9]]


def test_scatter_puts_outputs_back_in_input_order():
    assert scatter([[1, 3], [0, 2]], [["b", "d"], ["a", "c"]], 4) == ["a", "b", "c", "d"]


def test_composites_and_clips_declare_their_parts_grouping():
    assert group_keys(build(VOTE)) == {"group"}
    assert group_keys(build({"reward": {"name": "x", "clip": [0, 1], "components": [{"name": "e", "use": "text.exact"}]}})) == frozenset()
    consensus = {"name": "c", "use": "labelfree.consensus", "params": {"group_by": "prompt"}}
    assert group_keys(build({"reward": {"name": "y", "components": [VOTE["reward"]["components"][0], consensus]}})) == {"group", "prompt"}
    assert executor_group_keys(InlineExecutor(build(VOTE))) == {"group"}


def test_the_file_really_straddles_chunks():
    """Control: cutting the file every 7 rows (what the runner did) changes the results."""
    reward = build(VOTE)
    rows = _rows()
    naive = [r for i in range(0, len(rows), 7) for r in reward.score_batch([Sample.from_dict(x) for x in rows[i : i + 7]])]
    whole = reward.score_batch([Sample.from_dict(x) for x in rows])
    assert [r.score for r in naive] != [r.score for r in whole]
    skipped = [sum(r.components["vote"].status is Status.SKIPPED for r in rs) for rs in (naive, whole)]
    assert skipped[0] > skipped[1] == 0


# -- every executor gives the one-piece results ----------------------------------------------


@pytest.mark.parametrize("interleave", [False, True], ids=["contiguous", "interleaved"])
def test_streamed_file_through_the_pool_scores_groups_whole(tmp_path, interleave):
    rows = _rows(interleave=interleave)
    reward = build(VOTE)
    opts = ScoreFileOptions(workers=2, chunk_size=1, timeout=30)
    summary = score_file(reward, _write(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl", opts)
    assert summary.rows == len(rows)
    assert _read(tmp_path / "out.jsonl") == _flat_expected(reward, rows, tmp_path)


@pytest.mark.parametrize("workers", [0, 2], ids=["inline", "pool"])
@pytest.mark.parametrize("interleave", [False, True], ids=["contiguous", "interleaved"])
def test_recorded_run_keeps_groups_in_one_transaction(tmp_path, workers, interleave):
    rows = _rows(interleave=interleave)
    reward = build(VOTE)
    opts = ScoreFileOptions(workers=workers, resume=True, record_every=7, run_store=tmp_path / "runs.sqlite")
    score_file(reward, _write(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl", opts)
    assert _read(tmp_path / "out.jsonl") == _flat_expected(reward, rows, tmp_path)


def test_score_with_workers_scores_groups_whole():
    rows = _rows(interleave=True)
    reward = build(VOTE)
    results = rewardlab.score(reward, rows, workers=2)
    assert [(r.status.value, r.score) for r in results] == [(s, v) for s, v, _ in _expected(reward, rows)]


def test_observed_composite_on_the_pool_scores_groups_whole():
    """The server's path: an observed composite in worker processes, observations replayed."""
    from rewardlab.compose.observer import ComponentTimes

    rows = _rows(interleave=True)
    times = ComponentTimes()
    reward = build(VOTE).observed(times)
    executor = PoolExecutor(reward, workers=2, timeout=30)
    try:
        results = executor.map([Sample.from_dict(r) for r in rows])
    finally:
        executor.close()
    assert [(r.status.value, r.score) for r in results] == [(s, v) for s, v, _ in _expected(build(VOTE), rows)]
    assert {name for name, _, _ in times.drain()} == {"vote", "exact"}


def test_a_third_party_group_reward_declaring_group_keys_is_kept_whole():
    rows = _rows(interleave=True)
    with WorkerPool(GroupMean(), workers=2, chunk_size=1) as pool:
        results = pool.map([Sample.from_dict(r) for r in rows])
    assert {r.info["seen"] for r in results} == {5}


def test_a_group_gets_the_timeout_once_per_member():
    """A group of 4 that takes 1.5 s is within a 1 s per-sample timeout (4 s for the group)."""
    rows = [{"response": "x", "group": "g", "meta": {"v": 1, "sleep": 1.5}} for _ in range(4)]
    with WorkerPool(SlowGroup(), workers=1, timeout=1.0) as pool:
        results = pool.map([Sample.from_dict(r) for r in rows])
    assert [r.status for r in results] == [Status.OK] * 4


def test_a_group_past_its_budget_is_a_timeout_for_every_member_and_the_rest_is_scored():
    rows = [{"response": "x", "group": "slow", "meta": {"v": 1, "sleep": 60}} for _ in range(2)]
    rows += [{"response": "x", "group": "fast", "meta": {"v": 3}} for _ in range(2)]
    with WorkerPool(SlowGroup(), workers=1, timeout=0.5) as pool:
        results = pool.map([Sample.from_dict(r) for r in rows])
    assert [r.status for r in results] == [Status.ERROR, Status.ERROR, Status.OK, Status.OK]
    assert "per sample x 2 samples of the group" in results[0].error.message
    assert results[2].score == 3.0


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ray_backend_scores_groups_whole(ray_session, tmp_path):
    from rewardlab.runner.ray import RayExecutor

    rows = _rows(interleave=True)
    reward = build(VOTE)
    executor = RayExecutor(reward, chunk_size=2)
    store = RunStore(tmp_path / "runs.sqlite")
    try:
        score_file_resumable(executor, _write(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl", store=store,
                             spec_hash="h", options=ScoreFileOptions(record_every=7))  # fmt: skip
    finally:
        store.close()
    assert _read(tmp_path / "out.jsonl") == _flat_expected(reward, rows, tmp_path)


# -- --limit keeps whole groups ---------------------------------------------------------------


def _limited(tmp_path: Path, rows: list[dict], limit: int, **options) -> list[tuple]:
    opts = ScoreFileOptions(limit=limit, run_store=tmp_path / "runs.sqlite", **options)
    score_file(build(VOTE), _write(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl", opts)
    return _read(tmp_path / "out.jsonl")


@pytest.mark.parametrize("options", [{"workers": 2, "chunk_size": 1}, {"workers": 0, "resume": True, "record_every": 3}], ids=["streamed", "recorded"])
def test_limit_scores_the_group_it_cuts_whole(tmp_path, options):
    rows = _rows(groups=4)  # g0 is rows 1-5, g1 rows 6-10: a limit of 7 cuts g1 after 2 members
    kept = rows[:10]
    assert _limited(tmp_path, rows, 7, **options) == _flat_expected(build(VOTE), kept, tmp_path)
    cut = build(VOTE).score_batch([Sample.from_dict(r) for r in rows[:7]])  # what the old cut voted on
    assert [r.components["vote"].status for r in cut[5:]] == [Status.SKIPPED] * 2  # 2 members < min_group: the part is not the group


def test_limit_takes_the_groups_of_the_first_rows_wherever_their_rows_are(tmp_path):
    rows = _rows(groups=4, interleave=True)  # rows 1-4 are the first members of g0..g3, 5-8 the second...
    out = _limited(tmp_path, rows, 3, workers=2, chunk_size=1)
    kept = [r for r in rows if r["group"] in {"g0", "g1", "g2"}]
    assert len(out) == 15 and out == _flat_expected(build(VOTE), kept, tmp_path)


def test_limit_of_a_per_sample_reward_still_cuts_rows(tmp_path):
    rows = _rows(groups=4)
    exact = {"reward": {"name": "exact", "components": [{"name": "exact", "use": "text.exact"}]}}
    opts = ScoreFileOptions(limit=7, workers=0)
    summary = score_file(build(exact), _write(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl", opts)
    assert summary.rows == 7 and len(_read(tmp_path / "out.jsonl")) == 7


def test_limit_counts_input_rows_before_explode(tmp_path):
    rows = [{"prompt": f"q{g}", "responses": [str(g), str(g), str(g + 1)], "group": f"g{g}", "meta": {}} for g in range(3)]
    spec = {"reward": {"name": "vote", "components": [{"name": "vote", "use": "labelfree.majority_vote", "params": {"min_group": 3}}]}}
    opts = ScoreFileOptions(limit=2, workers=0, explode=("responses",))
    summary = score_file(build(spec), _write(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl", opts)
    assert summary.rows == 6  # the 3 responses of each of the first 2 input rows
