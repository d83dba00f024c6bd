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
    assert s2 == 1
    assert r == pytest.approx(float(norm(model.weights[0][1:2])[0])) and info["reward/learned"] == r


def test_segments_from_any_env_train_a_reward_that_ranks_like_the_true_one() -> None:
    from rewardlab.envs.preferences import PreferenceDataset, SyntheticTeacher, collect_segments

    mdp = preference_grid()
    eye = np.eye(mdp.n_states, dtype=np.float32)
    env = mdp.to_env(max_episode_steps=40)
    f1, r1 = collect_segments(env, 150, 8, lambda o, a, o2: eye[o2], seed=0)
    f2, r2 = collect_segments(env, 150, 8, lambda o, a, o2: eye[o2], seed=1)
    assert f1.shape == (150, 8, mdp.n_states) and r1.shape == (150, 8)
    np.testing.assert_array_equal(r1, (f1 @ mdp.reward))  # the env's reward for the cell entered
    model = PreferenceRewardModel(mdp.n_states, ensemble=1)
    model.fit(PreferenceDataset(f1, f2, SyntheticTeacher().label(r1, r2)))
    learned = model.reward(eye)
    visited = f1.sum((0, 1)) + f2.sum((0, 1)) > 0
    traps = visited & (mdp.reward < 0)
    assert learned[traps].max() < np.median(learned[visited & (mdp.reward == 0)])  # traps learned as bad


def test_segments_follow_a_policy_or_an_sb3_model() -> None:
    from rewardlab.envs.preferences import collect_segments

    mdp = preference_grid()
    env = mdp.to_env(max_episode_steps=40)
    feats, _ = collect_segments(env, 3, 5, lambda o, a, o2: np.array([a], dtype=np.float32), policy=lambda obs: 1)
    assert (feats == 1).all()  # every step took action 1

    sb3 = pytest.importorskip("stable_baselines3")
    model = sb3.PPO("MlpPolicy", env, n_steps=64, seed=0, device="cpu")  # an (untrained) agent's rollouts
    feats, rewards = collect_segments(env, 4, 5, lambda o, a, o2: np.array([a], dtype=np.float32), policy=model)
    assert feats.shape == (4, 5, 1) and set(np.unique(feats)) <= {0.0, 1.0, 2.0, 3.0} and rewards.shape == (4, 5)
    with pytest.raises(SpecError, match="horizon"):
        collect_segments(env, 1, 0, lambda o, a, o2: np.zeros(1))


@pytest.mark.slow
def test_sb3_dqn_reaches_90_percent_of_optimal_on_a_normalised_preference_learned_reward() -> None:
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.callbacks import BaseCallback

    mdp = preference_grid()
    learned = learn_grid_reward(mdp, 64, seed=0).reward  # 64 synthetic preference labels over segment pairs
    model = PreferenceRewardModel(mdp.n_states, ensemble=1)
    model.weights[0] = learned  # the learned per-cell reward as a linear model over one-hot cells
    eye = np.eye(mdp.n_states, dtype=np.float32)
    env = LearnedRewardWrapper(mdp.to_env(max_episode_steps=50), model, lambda o, a, o2: eye[o2],
                               normalizer=RewardNormalizer.fit(learned))
    env.reset(seed=0)
    assert max(env.step(a)[1] for a in (1, 0, 1, 0)) <= 0.0  # normalised: the agent sees rewards <= 0
    agent = sb3.DQN("MlpPolicy", env, learning_starts=500, train_freq=4, buffer_size=50_000, exploration_fraction=0.5,
                    exploration_final_eps=0.05, learning_rate=1e-3, target_update_interval=250, gamma=0.95,
                    batch_size=64, policy_kwargs={"net_arch": [64]}, seed=0, device="cpu")
    returns: list[float] = []

    class StopAtNinetyPercent(BaseCallback):
        """Every 2,000 steps: the true normalised return of the greedy policy; stop at >= 0.9."""

        def _on_step(self) -> bool:
            if self.num_timesteps % 2000:
                return True
            policy = self.model.predict(np.arange(mdp.n_states), deterministic=True)[0]
            returns.append(normalised_policy_return(mdp, policy))
            return returns[-1] < 0.9

    # one learn() call over the whole budget: epsilon decays over its first half (15k steps)
    agent.learn(30_000, callback=StopAtNinetyPercent())
    assert returns and returns[-1] >= 0.9, returns  # judged on the true reward, which the agent never saw
