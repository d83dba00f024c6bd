"""Gymnasium's and Stable-Baselines3's own env checkers on every wrapper mode."""

from __future__ import annotations

import itertools
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from rewardlab.envs.officeworld import TASK_ORDER, OfficeWorld, office_labels, office_task
from rewardlab.envs.rm import RewardMachine
from rewardlab.envs.rm.wrapper import RewardMachineWrapper
from rewardlab.errors import SpecError

OFFICE_CASES = list(itertools.product(("dict", "flat", "onehot", "joint", "none"), (1, 4), ("cycle", "random"), ("rm", "sum")))


def _office(obs_mode: str, n_tasks: int, schedule: str = "cycle", reward_mode: str = "rm") -> RewardMachineWrapper:
    rms = [office_task(t) for t in TASK_ORDER[:n_tasks]]
    return RewardMachineWrapper(OfficeWorld(max_episode_steps=50), rms, office_labels, obs_mode=obs_mode,  # type: ignore[arg-type]
                                task_schedule=schedule, reward_mode=reward_mode, shaping_gamma=0.9)  # type: ignore[arg-type]


def _gym_check(env: gym.Env) -> list[str]:  # type: ignore[type-arg]
    """Run Gymnasium's checker; return its warnings except the note that env is a wrapper."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    return [str(w.message) for w in caught if "different from the unwrapped version" not in str(w.message)]


@pytest.mark.parametrize(("obs_mode", "n_tasks", "schedule", "reward_mode"), OFFICE_CASES)
def test_gymnasium_check_env_passes_on_office_world(obs_mode: str, n_tasks: int, schedule: str, reward_mode: str) -> None:
    assert _gym_check(_office(obs_mode, n_tasks, schedule, reward_mode)) == []


@pytest.mark.parametrize(("obs_mode", "n_tasks", "schedule", "reward_mode"), OFFICE_CASES)
def test_sb3_check_env_passes_on_office_world(obs_mode: str, n_tasks: int, schedule: str, reward_mode: str) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any SB3 warning (unbounded Box, shared obs...) fails the test
        sb3_check_env(_office(obs_mode, n_tasks, schedule, reward_mode), warn=True)


_LEFT, _NONE = frozenset({"left"}), frozenset()


def _cartpole(obs_mode: str) -> RewardMachineWrapper:
    rm = RewardMachine([{"from": "0", "to": "1", "guard": "left", "reward": 1}], initial="0", accepting=["1"])
    return RewardMachineWrapper(gym.make("CartPole-v1"), rm, lambda o, a, o2, i: _LEFT if o2[0] < -0.1 else _NONE,
                                obs_mode=obs_mode)  # type: ignore[arg-type]


@pytest.mark.parametrize("obs_mode", ["dict", "flat", "none"])
def test_both_checkers_pass_on_a_continuous_env(obs_mode: str) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    own = set(_gym_check(gym.make("CartPole-v1")))  # CartPole's velocities are unbounded: its own warnings
    assert set(_gym_check(_cartpole(obs_mode))) <= own
    sb3_check_env(_cartpole(obs_mode), warn=True)


@pytest.mark.parametrize("obs_mode", ["onehot", "joint"])
def test_one_hot_modes_refuse_a_continuous_space(obs_mode: str) -> None:
    with pytest.raises(SpecError, match="obs_mode='flat'"):
        _cartpole(obs_mode)


def test_joint_refuses_a_space_with_too_many_values() -> None:
    rm = RewardMachine([{"from": "0", "to": "1", "guard": "left", "reward": 1}], initial="0", accepting=["1"])
    big = gym.wrappers.TransformObservation(
        OfficeWorld(), lambda o: o, gym.spaces.MultiDiscrete([200, 200]))  # 40,000 values
    with pytest.raises(SpecError, match="obs_mode='onehot'"):
        RewardMachineWrapper(big, rm, lambda o, a, o2, i: _NONE, obs_mode="joint")


def test_reset_seed_restarts_the_task_cycle() -> None:
    env = _office("dict", 4)
    tasks = [env.reset(seed=3)[1]["rm/task"], env.reset()[1]["rm/task"], env.reset()[1]["rm/task"]]
    assert tasks == [0, 1, 2]
    assert env.reset(seed=3)[1]["rm/task"] == 0  # the cycle starts again, as the seed says


def test_reset_seed_fixes_the_random_task_sequence() -> None:
    env = _office("dict", 4, "random")
    first = [env.reset(seed=11)[1]["rm/task"]] + [env.reset()[1]["rm/task"] for _ in range(15)]
    again = [env.reset(seed=11)[1]["rm/task"]] + [env.reset()[1]["rm/task"] for _ in range(15)]
    assert first == again and len(set(first)) > 1


@pytest.mark.parametrize("obs_mode", ["flat", "onehot", "joint"])
def test_reset_and_step_observations_never_share_memory(obs_mode: str) -> None:
    env = _office(obs_mode, 1)
    seen = [env.reset(seed=0)[0]]
    for a in (0, 2, 0, 2, 1, 3):  # back and forth: the same cells and RM state again
        seen.append(env.step(a)[0])
    for a, b in itertools.combinations(seen, 2):
        assert not np.shares_memory(a, b)
    first = seen[0].copy()
    seen[0][:] = 7.0  # callers may write into what they were given; the next reset is unchanged
    np.testing.assert_array_equal(env.reset(seed=0)[0], first)


@pytest.mark.parametrize("obs_mode", ["flat", "onehot", "joint"])
def test_box_observations_are_bounded_and_inside_their_space(obs_mode: str) -> None:
    env = _office(obs_mode, 4)
    space = env.observation_space
    assert isinstance(space, gym.spaces.Box) and space.is_bounded()
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(300):
        assert space.contains(obs)
        obs, _, term, trunc, _ = env.step(int(rng.integers(4)))
        if term or trunc:
            obs, _ = env.reset()
