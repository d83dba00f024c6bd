"""Finite tasks: the enumerated transitions agree with the environments they come from."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.author import gym_task_env, office_task_env, task_by_name
from rewardlab.envs.officeworld import OfficeWorld, office_labels, office_task
from rewardlab.envs.rm.wrapper import RewardMachineWrapper
from rewardlab.errors import SpecError


def test_office_transitions_replay_the_gymnasium_env_with_its_reward_machine(office):
    """Walk the real OfficeWorld + RewardMachineWrapper with random actions and check that the
    task's tables predict every step: next state, success (reward 1), failure (decoration)."""
    env = RewardMachineWrapper(OfficeWorld(), office_task("coffee_mail"), office_labels, obs_mode="none")
    rng = np.random.default_rng(0)
    _P, A = office.shape
    checked = 0
    for episode in range(30):
        env.reset(seed=episode)
        p = office.start
        for _ in range(200):
            a = int(rng.integers(A))
            obs, reward, terminated, _truncated, _info = env.step(a)
            seen = office.transitions[p * A + a]
            assert (seen[2]["x"], seen[2]["y"]) == (int(obs[0]), int(obs[1]))
            assert office.success[p, a] == (reward == 1.0)
            assert (office.next_state[p, a] < 0) == terminated
            checked += 1
            if terminated:
                break
            p = int(office.next_state[p, a])
    assert checked > 500


def test_office_obs_shows_what_was_collected(office):
    P, _A = office.shape
    stages = {t[0]["stage"]: (t[0]["has_coffee"], t[0]["has_mail"]) for t in office.transitions}
    assert stages == {0: (False, False), 1: (False, True), 2: (True, False), 3: (True, True)}
    assert office.optimal_steps() == 29 and P == 4 * 108


def test_every_office_task_builds():
    for name in ("coffee", "mail", "patrol"):
        task = office_task_env(name)
        assert task.optimal_steps() > 0 and task.success.any()


def test_grid_maze_has_a_goal_and_a_trap(maze):
    assert maze.success.sum() > 0 and maze.failed.sum() > 0
    assert maze.optimal_steps() == 12


def test_frozen_lake_goal_and_holes():
    task = task_by_name("gym/FrozenLake-v1")
    assert task.shape == (16, 4) and task.optimal_steps() == 6
    assert task.success.sum() == 1 and task.failed.sum() > 0
    assert task.transitions[0][0] == {"state": 0, "x": 0, "y": 0}


def test_cliff_walking_is_a_task():
    assert task_by_name("gym/CliffWalking-v1").optimal_steps() == 13


def test_a_slippery_env_is_refused():
    with pytest.raises(SpecError, match="stochastic"):
        gym_task_env("FrozenLake-v1", is_slippery=True)


def test_an_unknown_task_names_the_known_ones():
    with pytest.raises(SpecError, match="office/coffee_mail"):
        task_by_name("atari/pong")


@pytest.mark.parametrize(("name", "actions", "words"), [
    ("gym/FrozenLake-v1", ("left", "down", "right", "up"), "without falling into a hole"),
    ("gym/CliffWalking-v1", ("up", "right", "down", "left"), "without stepping off the cliff"),
])  # fmt: skip
def test_gym_tasks_have_a_goal_and_named_actions(name, actions, words):
    task = task_by_name(name)
    assert task.actions == actions and words in task.goal
    assert f"Task: {task.goal}." in task.description and "0 = " + actions[0] in task.description


def test_every_task_states_its_goal():
    assert task_by_name("office/coffee").goal == "bring coffee to the office"
    assert task_by_name("grid/maze").goal == "reach a goal cell (6, 6) without entering a trap"
