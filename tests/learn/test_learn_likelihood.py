"""VIPER-style likelihood: expert transitions are likelier than other behaviour's."""

from __future__ import annotations

import numpy as np

from rewardlab.learn import load_learned
from rewardlab.learn.likelihood import TrajectoryLikelihoodReward
from rewardlab.learn.planners import mountain_car_demos, random_rollouts


def test_markov_model_prefers_held_out_expert_steps_to_random_ones(coffee_mail, office_split):
    model = TrajectoryLikelihoodReward.fit(office_split[0], kind="markov")
    held = np.concatenate([model.reward(d.observations[:-1], d.observations[1:]) for d in office_split[1].demos])
    walks = random_rollouts(coffee_mail, 30, steps=30, seed=5)
    rand = np.concatenate([model.reward(d.observations[:-1], d.observations[1:]) for d in walks.demos])
    assert np.median(held) > np.median(rand) + 1.0


def test_gaussian_model_prefers_the_controller_on_mountain_car(tmp_path):
    import gymnasium as gym

    train, held = mountain_car_demos(8, seed=0), mountain_car_demos(2, seed=100)
    model = TrajectoryLikelihoodReward.fit(train, kind="gaussian", components=6, seed=0)
    expert = np.concatenate([model.reward(d.observations[:-1], d.observations[1:]) for d in held.demos])
    env, rng, obs_list = gym.make("MountainCar-v0"), np.random.default_rng(0), []
    obs, _ = env.reset(seed=100)
    for _ in range(150):  # pushing against the velocity: what the expert never does
        nxt, *_ = env.step(0 if obs[1] >= 0 else 2) if rng.random() < 0.9 else env.step(1)
        obs_list.append((obs, nxt))
        obs = nxt
    wrong = model.reward(np.array([o for o, _ in obs_list]), np.array([n for _, n in obs_list]))
    assert np.mean(expert) > np.mean(wrong) + 1.0
    model.save(tmp_path / "viper.npz")
    np.testing.assert_allclose(load_learned(tmp_path / "viper.npz").reward(held.demos[0].observations[:-1],
                                                                           held.demos[0].observations[1:]),
                               model.reward(held.demos[0].observations[:-1], held.demos[0].observations[1:]))  # fmt: skip
