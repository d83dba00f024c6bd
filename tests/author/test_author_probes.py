"""Cheap checks: planning under the candidate, hacking probes, preference agreement."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.author import preference_agreement, preference_pairs, run_checks
from rewardlab.author.probes import value_iteration
from rewardlab.envs.preferences import SyntheticTeacher, TeacherConfig


def probe(checks, name):
    return next(p for p in checks.probes if p["name"] == name)


def test_the_sparse_reward_plans_optimally_and_passes_every_probe(office):
    checks = run_checks(office, office.true_reward())
    assert checks.planning_optimality == 1.0
    assert {p["name"] for p in checks.probes} == {"loiter", "fail", "idle"}
    assert all(p["passed"] for p in checks.probes)


def test_a_living_bonus_is_caught_by_loiter_and_idle(office):
    # pays for every step; with gamma 0.9 a bonus b is worth b / 0.1 forever against
    # b * (1 - 0.9**29) / 0.1 + 0.9**28 for the 29-step solution, so wandering wins
    hacked = office.true_reward() + 1.0
    checks = run_checks(office, hacked)
    assert not probe(checks, "idle")["passed"] and not probe(checks, "loiter")["passed"]
    assert checks.planning_optimality < 1.0  # its own optimum never finishes the task


def test_a_reward_for_failing_is_caught_by_the_fail_probe(office):
    hacked = office.true_reward() + 0.5 * office.failed
    checks = run_checks(office, hacked)
    assert not probe(checks, "fail")["passed"]
    assert checks.planning_optimality == 0.0


def test_potential_shaping_keeps_the_plan(maze):
    """Ng et al. 1999: F = gamma*Phi(s') - Phi(s) (Phi = 0 at the end) leaves the optimum alone."""
    rng = np.random.default_rng(0)
    phi = rng.normal(size=maze.shape[0])
    nxt = maze.next_state
    shaped = maze.true_reward() + np.where(nxt >= 0, 0.9 * phi[np.maximum(nxt, 0)], 0.0) - phi[:, None]
    assert run_checks(maze, shaped).planning_optimality == 1.0


def test_the_true_regret_agrees_with_its_own_labels_and_its_negation_disagrees(maze):
    pairs = preference_pairs(maze, n=200, seed=1)
    q = value_iteration(maze, maze.true_reward())
    regret = q - q.max(axis=1, keepdims=True)
    assert preference_agreement(regret, pairs) == 1.0
    assert preference_agreement(-regret, pairs) == 0.0


def test_a_constant_reward_agrees_by_half(maze):
    pairs = preference_pairs(maze, n=200, seed=1)
    assert preference_agreement(np.zeros(maze.shape), pairs) == 0.5


def test_a_noisy_teacher_lowers_the_agreement_of_the_truth(maze):
    q = value_iteration(maze, maze.true_reward())
    regret = q - q.max(axis=1, keepdims=True)
    noisy = preference_pairs(maze, n=400, seed=1, teacher=SyntheticTeacher(TeacherConfig(eps=0.3), seed=2))
    assert 0.55 < preference_agreement(regret, noisy) < 0.85


def test_checks_record_as_json_without_nan(maze):
    import json

    out = run_checks(maze, maze.true_reward()).to_dict()
    assert out["preference_agreement"] is None
    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize("name", ["office", "maze"])
def test_optimal_steps_match_value_iteration(name, request):
    task = request.getfixturevalue(name)
    q = value_iteration(task, task.true_reward())
    # with reward 1 on success and gamma 0.9, V*(start) = 0.9 ** (steps - 1)
    assert q[task.start].max() == pytest.approx(0.9 ** (task.optimal_steps() - 1))
