"""Reward machines, guards and the wrapper survive pickling (SubprocVecEnv, checkpoints)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from rewardlab.envs.officeworld import TASK_ORDER, OfficeWorld, office_labels, office_task
from rewardlab.envs.rm import RewardMachine, parse_guard
from rewardlab.envs.rm.wrapper import RewardMachineWrapper


def test_a_guard_with_nested_closures_pickles_and_evaluates_alike() -> None:
    guard = parse_guard("(a | !b) & c & !(d | e)")
    twin = pickle.loads(pickle.dumps(guard))
    for labels in ({"a", "c"}, {"b", "c"}, {"a", "c", "d"}, {"c"}, set()):
        assert twin(frozenset(labels)) == guard(frozenset(labels))
    assert twin.text == guard.text and twin.props == guard.props


def test_a_reward_machine_pickles_and_runs_alike() -> None:
    rm = office_task("coffee_mail")
    rm.step("0", {"e"})  # a filled step cache travels too
    twin = pickle.loads(pickle.dumps(rm))
    assert isinstance(twin, RewardMachine) and twin.to_dict() == rm.to_dict()
    trace = [{"e"}, set(), {"f"}, {"g"}]
    assert [s.reward for s in twin.run(trace)] == [s.reward for s in rm.run(trace)] == [0, 0, 0, 1]


@pytest.mark.parametrize("obs_mode", ["dict", "flat", "onehot", "joint", "none"])
def test_a_wrapper_mid_episode_pickles_and_continues_alike(obs_mode: str) -> None:
    rms = [office_task(t) for t in TASK_ORDER]
    env = RewardMachineWrapper(OfficeWorld(), rms, office_labels, obs_mode=obs_mode, shaping_gamma=0.9)  # type: ignore[arg-type]
    env.reset(seed=0)
    env.reset()  # task 1 (mail)
    for a in (3, 0, 0):  # (1, 1) a, (1, 2), (1, 3): mid-episode
        env.step(a)
    twin = pickle.loads(pickle.dumps(env))
    assert (twin.task, twin.u) == (env.task, env.u) == (1, 0)
    rng = np.random.default_rng(1)
    for _ in range(400):
        a = int(rng.integers(4))
        mine, theirs = env.step(a), twin.step(a)
        if obs_mode == "dict":
            assert mine[0]["rm"] == theirs[0]["rm"]
            np.testing.assert_array_equal(mine[0]["obs"], theirs[0]["obs"])
        else:
            np.testing.assert_array_equal(mine[0], theirs[0])
        assert mine[1:] == theirs[1:]
        if mine[2] or mine[3]:
            assert env.reset()[1] == twin.reset()[1]


@pytest.mark.slow
def test_the_wrapper_runs_in_a_subprocess_vec_env() -> None:
    from stable_baselines3.common.vec_env import SubprocVecEnv

    def make() -> RewardMachineWrapper:
        return RewardMachineWrapper(OfficeWorld(), office_task("coffee"), office_labels, obs_mode="onehot")

    venv = SubprocVecEnv([make, make], start_method="spawn")  # spawn: infos come back by pickle
    try:
        obs = venv.reset()
        assert obs.shape == (2, 12 + 9 + 3)
        obs, _, _, infos = venv.step(np.array([3, 1]))  # left to landmark a; right to (3, 1)
        assert [i["rm/labels"] for i in infos] == [frozenset("a"), frozenset()]
    finally:
        venv.close()
