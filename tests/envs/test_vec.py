"""Batched intrinsic and learned-reward wrappers over real Stable-Baselines3 VecEnvs."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3.common.env_util import make_vec_env

from rewardlab.envs.intrinsic import CountBonus, DecaySchedule
from rewardlab.envs.officeworld import WIDTH, OfficeWorld
from rewardlab.envs.preferences import PreferenceRewardModel
from rewardlab.envs.vec import IntrinsicRewardVecWrapper, LearnedRewardVecWrapper, next_observations
from rewardlab.errors import InputError


def _cells(obs: np.ndarray) -> np.ndarray:
    return (obs[:, 1] * WIDTH + obs[:, 0]).astype(np.int64)


class _CountingBonus(CountBonus):
    """A real count bonus that also records the batch size of every call."""

    def __init__(self) -> None:
        super().__init__(WIDTH * 9)
        self.batches: list[int] = []

    def reward(self, obs, action, next_obs):  # type: ignore[no-untyped-def]
        self.batches.append(len(next_obs))
        return super().reward(obs, action, next_obs)


def test_the_bonus_is_scored_once_per_vec_step_on_every_envs_transition() -> None:
    bonus = _CountingBonus()
    venv = IntrinsicRewardVecWrapper(make_vec_env(lambda: OfficeWorld(max_episode_steps=7), n_envs=3, seed=0), bonus,
                                     schedule=DecaySchedule(start=0.5, decay=1.0), featurize=_cells)
    venv.reset()
    counts = np.zeros(WIDTH * 9)  # the reference: counts of the cells entered so far
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs, rewards, dones, infos = venv.step(rng.integers(0, 4, 3))
        entered = _cells(next_observations(obs, dones, infos))
        np.testing.assert_allclose(rewards, 0.5 / np.sqrt(np.maximum(counts[entered], 1)), rtol=1e-6)
        np.add.at(counts, entered, 1)
        assert all(info["reward/env"] == 0.0 and info["intrinsic/weight"] == 0.5 for info in infos)
    assert bonus.batches == [3] * 20  # batched: one call per VecEnv step, never per env
    np.testing.assert_array_equal(bonus.counts, counts)


def test_the_bonus_sees_the_terminal_observation_not_the_next_episodes_first() -> None:
    bonus = CountBonus(WIDTH * 9)
    venv = IntrinsicRewardVecWrapper(make_vec_env(lambda: OfficeWorld(max_episode_steps=1), n_envs=2, seed=0), bonus,
                                     featurize=_cells)
    venv.reset()
    venv.step(np.array([1, 1]))  # (2, 1) -> (3, 1), then both envs truncate and reset to (2, 1)
    assert bonus.counts[1 * WIDTH + 3] == 2 and bonus.counts[1 * WIDTH + 2] == 0


def test_dict_observations_without_featurize_are_refused() -> None:
    from rewardlab.envs.officeworld import office_labels, office_task
    from rewardlab.envs.rm.wrapper import RewardMachineWrapper

    venv = IntrinsicRewardVecWrapper(make_vec_env(lambda: RewardMachineWrapper(OfficeWorld(), office_task("coffee"), office_labels),
                                                  n_envs=2, seed=0), CountBonus(4))
    venv.reset()
    with pytest.raises(InputError, match="featurize"):
        venv.step(np.array([0, 0]))


def test_the_learned_reward_replaces_the_env_reward_in_one_batched_call() -> None:
    model = PreferenceRewardModel(WIDTH * 9, ensemble=1)
    model.weights[0] = np.arange(WIDTH * 9) / 100.0  # reward = cell index / 100

    def featurize(obs, actions, next_obs):  # type: ignore[no-untyped-def]
        return np.eye(WIDTH * 9, dtype=np.float32)[_cells(next_obs)]

    venv = LearnedRewardVecWrapper(make_vec_env(lambda: OfficeWorld(), n_envs=2, seed=0), model, featurize)
    venv.reset()
    _, rewards, _, infos = venv.step(np.array([1, 0]))  # (3, 1) and (2, 2)
    np.testing.assert_allclose(rewards, [(WIDTH + 3) / 100, (2 * WIDTH + 2) / 100], rtol=1e-6)
    assert [i["reward/env"] for i in infos] == [0.0, 0.0] and infos[0]["reward/learned"] == pytest.approx(0.15)
