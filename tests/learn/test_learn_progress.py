"""Progress learners: progress increases along held-out demonstrations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from rewardlab.learn import load_learned
from rewardlab.learn.progress import SubtaskBudgetProgress, TemporalDistanceProgress


@pytest.fixture(scope="module")
def temporal(office_split):
    return TemporalDistanceProgress.fit(office_split[0], pairs=3000, hidden=(64, 64), epochs=25, seed=0)


@pytest.fixture(scope="module")
def budgets(office_split):
    return SubtaskBudgetProgress.fit(office_split[0], epochs=30, seed=0)


def test_temporal_distance_progress_increases_along_held_out_demonstrations(temporal, office_split):
    for demo in office_split[1].demos:
        progress = temporal.potential(demo.observations)
        assert spearmanr(np.arange(len(progress)), progress)[0] > 0.95
        assert np.mean(np.diff(progress) > 0) > 0.8
        assert progress[-1] > 0.9  # the goal


def test_temporal_distance_rewards_a_step_forward_and_penalises_one_back(temporal, office_split):
    demo = office_split[1].demos[0]
    forward = temporal.reward(demo.observations[:-1], demo.observations[1:])
    back = temporal.reward(demo.observations[1:], demo.observations[:-1])
    assert (forward > 0).mean() > 0.8 and (back < 0).mean() > 0.8


def test_subtask_budgets_stay_in_their_stage_and_increase(budgets, office_split):
    bounds = np.concatenate([[0.0], np.cumsum(budgets.budgets)])
    assert len(budgets.budgets) == 3 and np.isclose(bounds[-1], 1.0)
    for demo in office_split[1].demos:
        progress = budgets.potential(demo.observations)
        stages = np.asarray(demo.stages)
        inner = stages < 3
        assert (progress[inner] >= bounds[stages[inner]] - 1e-9).all() and (progress[inner] <= bounds[stages[inner] + 1] + 1e-9).all()
        assert spearmanr(np.arange(len(progress)), progress)[0] > 0.95
        assert progress[-1] == 1.0


def test_a_progress_learner_saves_and_loads_to_the_same_predictions(tmp_path, temporal, budgets, office_split):
    obs = office_split[1].demos[0].observations
    for learner in (temporal, budgets):
        learner.save(tmp_path / f"{learner.kind}.npz")
        back = load_learned(tmp_path / f"{learner.kind}.npz")
        assert type(back) is type(learner)
        np.testing.assert_allclose(back.potential(obs), learner.potential(obs))
