"""The loop with the template author: records, fates, the best candidate, resuming."""

from __future__ import annotations

import json

import pytest
from author_helpers import small_loop

from rewardlab.author import TemplateAuthor, TrainConfig, author_reward, load_authored, write_result
from rewardlab.author.authors import Proposal
from rewardlab.errors import InputError
from rewardlab.store import RunStore

GOAL = "reach the goal cell, avoid the trap"


def test_every_candidate_gets_a_record_with_code_fate_and_scores(maze, pool):
    result = author_reward(maze, TemplateAuthor(seed=3), goal=GOAL, config=small_loop(), pool=pool)
    assert [(r["round"], r["index"]) for r in result.records] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    first = result.records[0]
    assert first["meta"]["params"] == TemplateAuthor().start  # the sparse start
    for record in result.records:
        assert record["fate"] == "scored" and record["code"].startswith("GAMMA")
        assert set(record["fitness"]) >= {"optimality", "success_rate", "curve", "components", "train_success"}
        assert {p["name"] for p in record["checks"]["probes"]} == {"loiter", "fail", "idle"}
    assert result.best is not None and result.best["fitness"]["optimality"] == max(r["fitness"]["optimality"] for r in result.records)
    json.dumps(result.records)  # records are plain JSON


def test_round_two_mutates_the_best_of_round_one(maze, pool):
    result = author_reward(maze, TemplateAuthor(seed=3), goal=GOAL, config=small_loop(), pool=pool)
    from rewardlab.author.train import rank

    best_first = max(result.records[:2], key=rank)
    for record in result.records[2:]:
        assert record["prompt"]["parent"] == best_first["meta"]["params"]
        assert record["meta"]["params"] != best_first["meta"]["params"]


class _Counting:
    """Wraps an author and counts what it is asked for."""

    def __init__(self, inner):
        self.inner, self.name, self.asked = inner, inner.name, []

    def propose(self, task, goal, round, indices, history, policy):
        self.asked.append((round, list(indices)))
        return self.inner.propose(task, goal, round, indices, history, policy)


def test_a_finished_run_resumes_without_asking_the_author(maze, pool, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    first = author_reward(maze, TemplateAuthor(seed=1), goal=GOAL, config=small_loop(), pool=pool, store=store)
    again = _Counting(TemplateAuthor(seed=1))
    second = author_reward(maze, again, goal=GOAL, config=small_loop(), pool=pool, store=store)
    assert again.asked == [] and second.records == first.records and second.run_id == first.run_id


def test_a_run_killed_half_way_asks_only_for_the_missing_candidates(maze, pool, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    full = author_reward(maze, TemplateAuthor(seed=1), goal=GOAL, config=small_loop(), pool=pool)
    store.start_run(full.run_id, spec_hash=full.run_id.split("-")[1], source=maze.name)
    store.record_rows(full.run_id, [(0, full.records[0]), (1, full.records[1]), (3, full.records[3])])
    author = _Counting(TemplateAuthor(seed=1))
    resumed = author_reward(maze, author, goal=GOAL, config=small_loop(), pool=pool, store=store)
    assert author.asked == [(1, [0])]
    assert [r["code"] for r in resumed.records] == [r["code"] for r in full.records]


def test_a_run_id_reused_with_other_settings_is_refused(maze, pool, tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    author_reward(maze, TemplateAuthor(), goal=GOAL, config=small_loop(rounds=1), pool=pool, store=store, run_id="r")
    with pytest.raises(InputError):
        author_reward(maze, TemplateAuthor(), goal=GOAL, config=small_loop(rounds=2), pool=pool, store=store, run_id="r")


class _Broken:
    """An author whose candidates are all broken in a different way."""

    name = "broken"
    CODES = (
        "import os\ndef reward(obs, action, next_obs, info):\n    return 0.0\n",
        "def reward(obs, action, next_obs, info):\n    while True:\n        pass\n",
        "def reward(obs, action, next_obs, info):\n    return float('nan')\n",
        "def reward(obs, action, next_obs, info):\n    raise RuntimeError('no')\n",
        "def reward(obs, action, next_obs, info):\n    return [0] * (1 << 34)\n",
        "def reward(obs, action):\n    return 0.0\n",
    )

    def propose(self, task, goal, round, indices, history, policy):
        return [Proposal(i, "p", self.CODES[i], self.CODES[i]) for i in indices]


def test_broken_candidates_are_recorded_and_the_loop_goes_on(maze, pool):
    config = small_loop(candidates=len(_Broken.CODES), rounds=1)
    result = author_reward(maze, _Broken(), goal=GOAL, config=config, pool=pool)
    assert [r["fate"] for r in result.records] == ["forbidden_import", "timeout", "non_finite", "raised", "memory", "signature"]
    assert result.best is None and all(r["error"] for r in result.records)


def test_write_result_writes_code_spec_and_records_that_load_again(maze, pool, tmp_path):
    result = author_reward(maze, TemplateAuthor(), goal=GOAL, config=small_loop(rounds=1), pool=pool)
    paths = write_result(result, maze, GOAL, tmp_path)
    assert len(paths["records"].read_text().splitlines()) == 2
    task, table = load_authored(paths["spec"], pool=pool)
    assert task.name == maze.name and table.total.shape == maze.shape
    paths["reward"].write_text(paths["reward"].read_text() + "\n# edited\n")
    with pytest.raises(InputError, match="changed since"):
        load_authored(paths["spec"], pool=pool)


class _Flaky:
    """Round 0: leaves index 1 out. Round 1: raises."""

    name = "flaky"

    def propose(self, task, goal, round, indices, history, policy):
        if round == 1:
            raise RuntimeError("the author's own bug")
        code = "def reward(obs, action, next_obs, info):\n    return 1.0 * info['success']\n"
        return [Proposal(0, "p", code, code)]


def test_a_failing_or_forgetful_author_loses_no_candidate(maze, pool):
    result = author_reward(maze, _Flaky(), goal=GOAL, config=small_loop(), pool=pool)
    assert [(r["round"], r["index"], r["fate"]) for r in result.records] == [
        (0, 0, "scored"), (0, 1, "author_error"), (1, 0, "author_error"), (1, 1, "author_error")]
    assert "no candidate" in result.records[1]["error"] and "the author's own bug" in result.records[2]["error"]


def test_with_validation_the_best_is_validated_and_counts_its_validated_optimality(maze, pool):
    from rewardlab.author.train import merit

    check = TrainConfig(steps=3000, seeds=2, eval_episodes=3, checkpoints=3, seed=77)
    result = author_reward(maze, TemplateAuthor(seed=3), goal=GOAL, config=small_loop(validation=check), pool=pool)
    best = result.best
    assert best is not None and "validation" in best
    worth = min(merit(best), best["validation"]["optimality"])
    others = [r for r in result.records if r["fate"] == "scored" and r is not best]
    assert all(min(merit(r), r["validation"]["optimality"]) <= worth if "validation" in r else merit(r) <= worth for r in others)


def test_a_leader_that_fails_validation_does_not_stop_the_loop(maze, pool):
    hopeless = TrainConfig(steps=3, seeds=1, eval_episodes=1, checkpoints=3, seed=77)  # learns nothing
    stops = author_reward(maze, TemplateAuthor(seed=3), goal=GOAL, config=small_loop(rounds=3, target=0.5), pool=pool)
    assert len(stops.records) == 4  # round 1 reaches the target
    config = small_loop(rounds=3, target=0.5, validation=hopeless)
    goes_on = author_reward(maze, TemplateAuthor(seed=3), goal=GOAL, config=config, pool=pool)
    assert len(goes_on.records) == 6 and goes_on.best is not None
    assert goes_on.best["validation"]["optimality"] == 0.0
