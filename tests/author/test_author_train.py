"""Short trainings on reward tables, scored on the true task."""

from __future__ import annotations

import numpy as np
import pytest
from author_helpers import SMALL_TRAIN

from rewardlab.author import (
    RewardTable,
    TemplateAuthor,
    TrainConfig,
    evaluate_candidate,
    train_on_table,
)
from rewardlab.author.probes import run_checks, value_iteration
from rewardlab.errors import ConfigError


def table(values):
    return RewardTable(values, {"reward": values})


def test_training_on_the_optimal_q_as_reward_reaches_the_optimum(maze):
    """A reward equal to Q* itself makes the greedy action obvious from the first update."""
    q = value_iteration(maze, maze.true_reward())
    fit = train_on_table(maze, table(q - q.max(axis=1, keepdims=True)), SMALL_TRAIN)
    assert fit.optimality == 1.0 and fit.success_rate == 1.0
    assert len(fit.curve) == SMALL_TRAIN.checkpoints and len(fit.per_seed) == SMALL_TRAIN.seeds


def test_a_constant_reward_learns_nothing(maze):
    fit = train_on_table(maze, table(np.zeros(maze.shape)), SMALL_TRAIN)
    assert fit.optimality < 0.2  # greedy with random tie-breaks: a random walk, that sometimes arrives


def test_component_statistics_follow_the_visits(maze):
    goal = maze.success.astype(float)
    step = np.full(maze.shape, -0.01)
    fit = train_on_table(maze, RewardTable(goal + step, {"goal": goal, "step": step}), SMALL_TRAIN)
    stats = fit.components
    assert stats["step"]["mean"] == pytest.approx(-0.01) and stats["step"]["nonzero"] == 1.0
    assert len(stats["goal"]["mean_per_step"]) == SMALL_TRAIN.checkpoints
    assert 0.0 <= stats["goal"]["nonzero"] < 0.5


def test_training_is_deterministic_given_the_seed(maze):
    values = maze.true_reward()
    assert train_on_table(maze, table(values), SMALL_TRAIN) == train_on_table(maze, table(values), SMALL_TRAIN)


def test_bad_training_settings_are_config_errors():
    with pytest.raises(ConfigError):
        TrainConfig(gamma=1.0)
    with pytest.raises(ConfigError):
        TrainConfig(steps=2, checkpoints=5)


@pytest.mark.slow
def test_sparse_office_reward_fails_in_the_default_budget_and_a_shaped_template_succeeds(office, pool):
    """The premise of the loop: on coffee_mail the sparse reward learns nothing in 20k steps
    with Q = 0 at the start, while a shaped reward from the template space does."""
    sparse = train_on_table(office, table(office.true_reward()))
    assert sparse.optimality < 0.9
    author = TemplateAuthor()
    code = author.render(office, {"failure": 1.0, "step_cost": 0.0, "progress": 0.1, "shaping": 0.1, "offset": 1.0})
    shaped = train_on_table(office, evaluate_candidate(code, office.transitions, office.shape, pool))
    assert shaped.optimality >= 0.9


def test_a_stalled_template_search_takes_larger_steps(maze):
    author = TemplateAuthor(seed=0, restart_after=10)
    best = {"fate": "scored", "round": 0, "index": 0, "meta": {"params": author.start},
            "fitness": {"optimality": 0.5, "train_success": 0.1}}  # fmt: skip
    fresh = author.propose(maze, "g", 1, range(8), [best], None)  # type: ignore[arg-type]
    stalled = author.propose(maze, "g", 5, range(8), [best], None)  # type: ignore[arg-type]
    assert {p.prompt["stalled_rounds"] for p in fresh} == {0} and {p.prompt["stalled_rounds"] for p in stalled} == {4}
    changed = lambda props: max(sum(p.meta["params"][k] != author.start[k] for k in author.start) for p in props)  # noqa: E731
    assert changed(fresh) <= 3 < changed(stalled)


def test_a_lineage_stalled_for_restart_after_rounds_starts_again_from_the_sparse_start(maze):
    author = TemplateAuthor(seed=0, restart_after=3)
    parent = dict(author.start) | {"shaping": 0.5}
    stuck = [{"fate": "scored", "round": r, "index": 0, "meta": {"params": parent if r == 0 else author.start | {"failure": 1.0}},
              "fitness": {"optimality": 0.8 if r == 0 else 0.2, "train_success": 0.1}} for r in range(4)]  # fmt: skip
    still = author.propose(maze, "g", 3, range(4), stuck[:3], None)  # type: ignore[arg-type]
    assert {p.meta["lineage"] for p in still} == {0} and {p.prompt["parent"]["shaping"] for p in still} == {0.5}
    restarted = author.propose(maze, "g", 4, range(4), stuck, None)  # type: ignore[arg-type]
    assert {p.meta["lineage"] for p in restarted} == {1} and all(p.prompt["parent"] == author.start for p in restarted)
    tried = {repr(sorted(r["meta"]["params"].items())) for r in stuck}
    assert not tried & {repr(sorted(p.meta["params"].items())) for p in restarted}  # nothing is proposed twice
    with pytest.raises(ConfigError):
        TemplateAuthor(restart_after=0)


@pytest.mark.slow
def test_stable_baselines3_dqn_learns_from_a_dense_reward_and_not_from_a_constant(maze):
    """The real SB3 DQN code path on the table env, scored on the true task."""
    from rewardlab.author.train_sb3 import train_sb3

    q = value_iteration(maze, maze.true_reward())
    dense = q - q.max(axis=1, keepdims=True) + maze.true_reward()
    config = TrainConfig(learner="dqn", steps=5000, seeds=1, checkpoints=1)
    assert train_sb3(maze, table(dense), config).optimality == 1.0
    assert train_sb3(maze, table(np.zeros(maze.shape)), TrainConfig(learner="dqn", steps=1000, seeds=1)).optimality < 0.5


def test_fresh_seeds_follow_the_training_seeds():
    train = TrainConfig(learner="dqn", seeds=4, seed=10)
    fresh = train.on_fresh_seeds(8)
    assert (fresh.learner, fresh.seeds, fresh.seed, fresh.steps) == ("dqn", 8, 14, train.steps)


def test_train_config_rejects_an_unknown_learner():
    with pytest.raises(ConfigError, match="learner"):
        TrainConfig(learner="sac")  # type: ignore[arg-type]


def test_sb3_refuses_the_tabular_learner(maze):
    from rewardlab.author.train_sb3 import train_sb3

    with pytest.raises(ConfigError, match="dqn or ppo"):
        train_sb3(maze, table(maze.true_reward()), TrainConfig(learner="q"))


def _record(trained: float, planned: float | None, index: int) -> dict[str, object]:
    checks = None if planned is None else {"planning_optimality": planned, "probes": [], "preference_agreement": None}
    return {"fate": "scored", "round": 0, "index": index, "code": "def reward(o, a, n, i):\n    return 0.0\n",
            "fitness": {"optimality": trained, "success_rate": 1.0, "curve": [], "components": {}}, "checks": checks}  # fmt: skip


def test_a_reward_whose_own_optimum_is_off_task_ranks_below_a_slightly_worse_trained_one() -> None:
    from rewardlab.author.train import merit, rank

    lucky = _record(1.0, 0.829, 0)  # trained seeds stopped on the true optimum; the reward asks for another
    honest = _record(0.95, 1.0, 1)
    assert merit(lucky) == pytest.approx(0.829)
    assert max([lucky, honest], key=rank) is honest
    assert merit(_record(0.7, None, 2)) == 0.7  # unmeasured planning leaves training's word


def test_reflection_names_the_planned_optimality_and_survives_no_preference_pairs() -> None:
    from rewardlab.author.prompts import reflection

    text = reflection([_record(1.0, 0.829, 0)])
    assert "0.829" in text and "preferences" not in text


def test_reflection_names_the_learner_that_trained() -> None:
    from rewardlab.author.prompts import reflection

    record = _record(0.9, None, 0)
    assert "tabular Q-learning" in reflection([record])
    record["fitness"]["learner"] = "dqn"  # type: ignore[index]
    assert "Stable-Baselines3 DQN" in reflection([record])


def _stage_bonus(task, weight):
    """A bonus of `weight` on every step that changes the stage: the non-potential progress term."""
    bonus = [weight * float(nxt["stage"] != obs["stage"] and not (info["success"] or info["failed"]))
             for obs, _, nxt, info in task.transitions]  # fmt: skip
    return np.asarray(bonus).reshape(task.shape)


def test_a_once_per_stage_bonus_moves_the_office_optimum_to_the_nearer_item(office):
    """The control of the test below: paid once per stage, discounting makes the bonus for the
    nearer item worth more than the shorter route, so the planned policy is not optimal."""
    checks = run_checks(office, office.true_reward() + _stage_bonus(office, 1.0))
    assert checks.planning_optimality < 0.9


@pytest.mark.parametrize("params", [
    {"progress": 1.0},
    {"progress": 1.0, "shaping": 1.0, "offset": 1.0},
    {"progress": 0.5, "shaping": 0.1, "failure": 1.0},
    {"progress": 0.1, "shaping": 0.5, "offset": 1.0, "step_cost": 0.05, "failure": 1.0},
])  # fmt: skip
def test_the_template_shaping_terms_never_move_the_office_optimum(office, pool, params):
    """The progress and distance terms are potential-based (Ng et al. 1999), so whatever their
    weights, the reward's own optimal policy is the task's. (A step cost is not a shaping term:
    without a failure penalty it makes walking into a decoration the best way out.)"""
    author = TemplateAuthor()
    code = author.render(office, author.start | params)
    checks = run_checks(office, evaluate_candidate(code, office.transitions, office.shape, pool).total)
    assert checks.planning_optimality == 1.0
