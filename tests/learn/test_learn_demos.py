"""The demonstration format, its loader, and the planners that make demonstrations."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.errors import ArrayError, InputError
from rewardlab.learn.demos import Demo, DemoSet
from rewardlab.learn.planners import (
    mountain_car_demos,
    plan_demos,
    random_rollouts,
    toy_text_tabular,
)


def test_a_demo_set_round_trips_through_its_file(tmp_path, office_demos):
    office_demos.save(tmp_path / "demos.npz")
    back = DemoSet.load(tmp_path / "demos.npz")
    assert (back.env, back.encoding, back.source, len(back)) == (office_demos.env, office_demos.encoding, office_demos.source, 60)
    for a, b in zip(office_demos.demos, back.demos, strict=True):
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.actions, b.actions)
        np.testing.assert_array_equal(a.stages, b.stages)
        assert a.success == b.success


def test_a_file_whose_offsets_disagree_is_an_input_error_naming_it(tmp_path, office_demos):
    office_demos.save(tmp_path / "demos.npz")
    with np.load(tmp_path / "demos.npz") as data:
        arrays = {k: data[k] for k in data.files}
    arrays["obs_offsets"] = arrays["obs_offsets"] + 1
    with open(tmp_path / "bad.npz", "wb") as fh:
        np.savez(fh, **arrays)
    with pytest.raises(InputError, match=r"bad\.npz.*offsets"):
        DemoSet.load(tmp_path / "bad.npz")


def test_a_demo_with_the_wrong_number_of_observations_is_refused():
    with pytest.raises(ArrayError, match="observations"):
        Demo(np.zeros((3, 2)), np.zeros(3, dtype=np.int64), np.zeros(3), True)


def test_office_demos_are_shortest_paths_that_replay_in_the_wrapper(coffee_mail, office_demos):
    from rewardlab.envs.officeworld import OfficeWorld, office_labels, office_task
    from rewardlab.envs.rm.wrapper import RewardMachineWrapper

    first = office_demos.demos[0]  # from the paper's start (2, 1)
    assert len(first) == 29 and first.success and first.rewards.sum() == 1.0  # the known optimum of coffee_mail
    env = RewardMachineWrapper(OfficeWorld(), office_task("coffee_mail"), office_labels, obs_mode="onehot")
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs, first.observations[0])
    for t, a in enumerate(first.actions):
        obs, reward, terminated, _, _ = env.step(int(a))
        np.testing.assert_array_equal(obs, first.observations[t + 1])  # the same encoding as the wrapper
    assert terminated and reward == 1.0
    assert list(np.unique(first.stages)) == [0, 1, 2, 3]


@pytest.mark.parametrize(("env_id", "optimum"), [("FrozenLake-v1", 6), ("CliffWalking-v1", 13)])
def test_toy_text_demos_from_the_start_are_optimal(env_id, optimum):
    demos = plan_demos(toy_text_tabular(env_id), 5, seed=0)
    assert len(demos.demos[0]) == optimum and all(d.success for d in demos.demos)


def test_mountain_car_controller_reaches_the_flag():
    demos = mountain_car_demos(3, seed=0)
    assert all(d.success for d in demos.demos) and all(len(d) < 200 for d in demos.demos)
    assert all(d.observations[-1, 0] >= 0.5 for d in demos.demos)  # the flag's position


def test_random_rollouts_from_every_stage_stop_in_every_stage(coffee_mail):
    walks = random_rollouts(coffee_mail, 100, steps=30, seed=0, every_stage=True)
    reached = {int(np.max(d.stages)) for d in walks.demos if not d.success}
    assert {0, 1, 2} <= reached
