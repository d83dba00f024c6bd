"""The PEBBLE-style loop inside a real SB3 DQN run: queries, refits, relabels the buffer."""

from __future__ import annotations

import numpy as np
import pytest

sb3 = pytest.importorskip("stable_baselines3")

from stable_baselines3.common.env_util import make_vec_env  # noqa: E402

from rewardlab.envs.pebble import PebbleCallback, relabel_replay_buffer  # noqa: E402
from rewardlab.envs.preferences import PreferenceRewardModel, SyntheticTeacher, preference_grid  # noqa: E402
from rewardlab.envs.vec import LearnedRewardVecWrapper  # noqa: E402
from rewardlab.errors import InputError  # noqa: E402

MDP = preference_grid()
EYE = np.eye(MDP.n_states, dtype=np.float32)


def _vec_features(obs, actions, next_obs):  # type: ignore[no-untyped-def]
    return EYE[np.asarray(next_obs).reshape(-1).astype(np.int64)]  # the cell entered, one-hot


def _run(steps: int, every: int):  # type: ignore[no-untyped-def]
    model = PreferenceRewardModel(MDP.n_states, ensemble=3, seed=0)
    venv = LearnedRewardVecWrapper(make_vec_env(lambda: MDP.to_env(max_episode_steps=30), n_envs=2, seed=0), model,
                                   lambda o, a, o2: _vec_features(o, a, o2))
    agent = sb3.DQN("MlpPolicy", venv, learning_starts=200, buffer_size=10_000, seed=0, device="cpu",
                    policy_kwargs={"net_arch": [16]})
    callback = PebbleCallback(model, SyntheticTeacher(seed=0), _vec_features, every=every, queries=12, horizon=8)
    agent.learn(steps, callback=callback)
    return agent, model, callback


def test_every_round_asks_refits_and_relabels_the_whole_buffer() -> None:
    agent, model, callback = _run(steps=2000, every=500)
    assert callback.rounds == 4 and callback.labels == 48
    buf, rows = agent.replay_buffer, agent.replay_buffer.size()
    # the last round ran on the final step, before SB3 stored that step (row rows-1, rewarded by
    # the model as it was); every earlier row was relabelled with the final model
    want = model.reward(_vec_features(None, None, buf.next_observations[:rows])).reshape(rows, 2)
    relabelled = rows - 1
    np.testing.assert_allclose(buf.rewards[:relabelled], want[:relabelled], rtol=1e-5)
    # the learned reward now ranks cells like the true one (traps below the rest)
    learned = model.reward(EYE)
    assert learned[MDP.reward < 0].mean() < learned[MDP.reward == 0].mean()


def test_relabel_replay_buffer_writes_the_models_rewards() -> None:
    agent, _, _ = _run(steps=400, every=10_000)  # no feedback round: rewards are the initial model's
    other = PreferenceRewardModel(MDP.n_states, ensemble=1)
    other.weights[0] = np.arange(MDP.n_states, dtype=float)
    rows = relabel_replay_buffer(agent.replay_buffer, other, _vec_features)
    cells = agent.replay_buffer.next_observations[:rows, :, 0]
    np.testing.assert_allclose(agent.replay_buffer.rewards[:rows], cells.astype(float))


def test_without_true_rewards_in_info_the_loop_refuses() -> None:
    venv = make_vec_env(lambda: MDP.to_env(max_episode_steps=30), n_envs=1, seed=0)
    agent = sb3.DQN("MlpPolicy", venv, learning_starts=10, buffer_size=1000, seed=0, device="cpu")
    callback = PebbleCallback(PreferenceRewardModel(MDP.n_states), SyntheticTeacher(), _vec_features, every=50)
    with pytest.raises(InputError, match="LearnedRewardVecWrapper"):
        agent.learn(20, callback=callback)
