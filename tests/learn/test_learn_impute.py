"""Reward imputation: rewards imputed from 1% labels correlate with the true ones on unlabelled data."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.errors import ConfigError
from rewardlab.learn import load_learned
from rewardlab.learn.impute import RewardImputer
from rewardlab.learn.planners import toy_text_tabular


def cliff_transitions(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(obs (x, y), actions, next_obs, rewards) of n uniformly drawn CliffWalking transitions."""
    task = toy_text_tabular("CliffWalking-v1")
    rng = np.random.default_rng(seed)
    s, a = rng.choice(task.starts, n), rng.integers(0, 4, n)
    s2 = np.where(task.next_state[s, a] >= 0, task.next_state[s, a], 47)  # the goal cell ends the episode
    xy = lambda p: np.stack([p % 12 / 11, p // 12 / 3], axis=1)  # noqa: E731
    return xy(s), a, xy(s2), task.reward[s, a]


@pytest.mark.parametrize("method", ["knn", "mlp"])
def test_imputed_rewards_correlate_with_the_true_ones_on_unlabelled_transitions(method):
    obs, acts, nxt, rewards = cliff_transitions(20_000, seed=0)
    labelled = np.random.default_rng(1).choice(len(obs), 200, replace=False)  # 1%
    model = RewardImputer.fit(obs, acts, nxt, rewards, labelled, n_actions=4, method=method, epochs=150)
    unlabelled = np.setdiff1d(np.arange(len(obs)), labelled)
    predicted = model.predict(obs[unlabelled], acts[unlabelled], nxt[unlabelled])
    assert np.corrcoef(predicted, rewards[unlabelled])[0, 1] > 0.8
    filled = model.impute(obs, acts, nxt, rewards, labelled)
    np.testing.assert_array_equal(filled[labelled], rewards[labelled])  # known labels are kept


def test_an_imputer_saves_and_predicts_the_same(tmp_path):
    obs, acts, nxt, rewards = cliff_transitions(2_000, seed=2)
    model = RewardImputer.fit(obs, acts, nxt, rewards, np.arange(100), n_actions=4)
    model.save(tmp_path / "imputer.npz")
    np.testing.assert_array_equal(load_learned(tmp_path / "imputer.npz").reward(obs, nxt, acts), model.reward(obs, nxt, acts))


def test_observations_must_be_rows_of_features():
    from rewardlab.errors import ArrayError

    with pytest.raises(ArrayError, match="obs"):
        RewardImputer.fit(np.zeros(10), np.zeros(10, dtype=int), np.zeros(10), np.zeros(10), np.arange(5), n_actions=1)


def test_an_imputer_fit_on_actions_needs_them():
    obs, acts, nxt, rewards = cliff_transitions(200, seed=3)
    model = RewardImputer.fit(obs, acts, nxt, rewards, np.arange(50), n_actions=4)
    with pytest.raises(ConfigError, match="actions"):
        model.reward(obs, nxt)
