"""An agent learns from a preference-learned reward once its offset is normalised."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.envs.gridworld import q_learning
from rewardlab.envs.preferences import (
    LearnedRewardWrapper,
    PreferenceRewardModel,
    RewardNormalizer,
    learn_grid_reward,
    normalised_policy_return,
    preference_grid,
)
from rewardlab.errors import SpecError


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_q_learning_solves_the_normalised_learned_reward_but_not_the_raw_one(seed: int) -> None:
    mdp = preference_grid()
    learned = learn_grid_reward(mdp, 64, seed=seed)
    assert learned.normalised_return >= 0.9  # value iteration on the learned reward finds the goal
    assert (learned.reward > 0).mean() > 0.5  # dense positive learned rewards: the failure's cause
    raw = normalised_policy_return(mdp, q_learning(mdp, learned.reward, seed=seed))
    fixed = normalised_policy_return(mdp, q_learning(mdp, RewardNormalizer.fit(learned.reward)(learned.reward), seed=seed))
    assert raw < 0.5 and fixed >= 0.9, (raw, fixed)


def test_q_learning_solves_the_true_reward() -> None:
    mdp = preference_grid()
    assert normalised_policy_return(mdp, q_learning(mdp)) == pytest.approx(1.0)


def test_normalizer_modes_and_validation() -> None:
    r = np.array([1.0, 2.0, 3.0, 6.0])
    high = RewardNormalizer.fit(r)
    assert high(r).max() == 0.0 and high(r).std() == pytest.approx(1.0)
    centred = RewardNormalizer.fit(r, mode="zero_mean")
    assert centred(r).mean() == pytest.approx(0.0) and centred(r).std() == pytest.approx(1.0)
    assert RewardNormalizer.fit(np.full(3, 2.0))(np.full(3, 2.0)).tolist() == [0.0, 0.0, 0.0]  # constant: scale 1
    for bad in (np.array([]), np.array([1.0, np.nan])):
        with pytest.raises(SpecError, match="finite"):
            RewardNormalizer.fit(bad)
    with pytest.raises(SpecError, match="mode"):
        RewardNormalizer.fit(r, mode="tanh")


def test_learned_reward_wrapper_applies_the_normalizer() -> None:
    mdp = preference_grid()
    model = PreferenceRewardModel(mdp.n_states, ensemble=1)
    model.weights[0] = np.linspace(0.0, 3.5, mdp.n_states)
    eye = np.eye(mdp.n_states, dtype=np.float32)
    norm = RewardNormalizer.fit(model.weights[0])
    env = LearnedRewardWrapper(mdp.to_env(), model, lambda o, a, o2: eye[o2], normalizer=norm)
    env.reset(seed=0)
    s2, r, *_, info = env.step(1)  # (0, 0) -> (1, 0): cell 1
    assert r == pytest.approx(float(norm(model.weights[0][1:2])[0])) and info["reward/learned"] == r
