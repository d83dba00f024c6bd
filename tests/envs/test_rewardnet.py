"""`PreferenceRewardNet` inside imitation's own reward pipeline (imitation 1.0.1)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("imitation")
pytest.importorskip("stable_baselines3")

from imitation.rewards.reward_wrapper import RewardVecEnvWrapper
from stable_baselines3.common.env_util import make_vec_env

from rewardlab.envs.preferences import (
    PreferenceDataset,
    PreferenceRewardModel,
    preference_grid,
    random_segments,
)
from rewardlab.envs.rewardnet import PreferenceRewardNet


def _model(hidden: int) -> PreferenceRewardModel:
    mdp = preference_grid()
    rng = np.random.default_rng(0)
    (f1, r1), (f2, r2) = random_segments(mdp, 60, 6, rng), random_segments(mdp, 60, 6, rng)
    model = PreferenceRewardModel(mdp.n_states, hidden=hidden, ensemble=2, seed=0)
    model.fit(PreferenceDataset(f1, f2, (r1.sum(1) > r2.sum(1)).astype(float)), epochs=40)
    return model


@pytest.mark.parametrize("hidden", [0, 16])
def test_imitation_predicts_what_the_model_predicts(hidden: int) -> None:
    mdp, model = preference_grid(), _model(hidden)
    env = mdp.to_env()
    net = PreferenceRewardNet(env.observation_space, env.action_space, model)
    states = np.arange(mdp.n_states)
    got = net.predict_processed(states, np.zeros(mdp.n_states, dtype=np.int64), states, np.zeros(mdp.n_states, dtype=bool))
    np.testing.assert_allclose(got, model.reward(np.eye(mdp.n_states, dtype=np.float32)), rtol=1e-5, atol=1e-6)


def test_imitations_reward_vec_env_wrapper_pays_the_learned_reward() -> None:
    mdp, model = preference_grid(), _model(0)
    venv = make_vec_env(lambda: mdp.to_env(max_episode_steps=20), n_envs=2, seed=0)
    net = PreferenceRewardNet(venv.observation_space, venv.action_space, model)
    wrapped = RewardVecEnvWrapper(venv, net.predict_processed)
    obs = wrapped.reset()
    learned = model.reward(np.eye(mdp.n_states, dtype=np.float32))
    for a in (1, 0, 1, 0):
        obs, rewards, _, infos = wrapped.step(np.array([a, a]))
        np.testing.assert_allclose(rewards, learned[obs], rtol=1e-5)  # the cell entered
        assert [i["original_env_rew"] for i in infos] == [float(mdp.reward[s]) for s in obs]


def test_training_through_the_net_trains_the_shared_members() -> None:
    import torch

    mdp, model = preference_grid(), _model(16)
    env = mdp.to_env()
    net = PreferenceRewardNet(env.observation_space, env.action_space, model)
    before = model.reward(np.eye(mdp.n_states, dtype=np.float32))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    s = torch.eye(mdp.n_states)
    (-net(s, torch.zeros(mdp.n_states, 4), s, torch.zeros(mdp.n_states)).mean()).backward()
    opt.step()
    assert (model.reward(np.eye(mdp.n_states, dtype=np.float32)) > before).mean() > 0.5


def test_training_the_linear_net_trains_the_model_it_saves(tmp_path) -> None:
    import torch

    mdp, model = preference_grid(), _model(0)
    env = mdp.to_env()
    net = PreferenceRewardNet(env.observation_space, env.action_space, model)
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    s = torch.eye(mdp.n_states)
    (-net(s, torch.zeros(mdp.n_states, 4), s, torch.zeros(mdp.n_states))[0]).backward()  # raise the reward of state 0
    opt.step()
    trained = net(s, torch.zeros(mdp.n_states, 4), s, torch.zeros(mdp.n_states)).detach().numpy()
    np.testing.assert_allclose(model.reward(np.eye(mdp.n_states, dtype=np.float32)), trained, rtol=1e-5, atol=1e-6)
    model.save(tmp_path / "m.npz")
    loaded = PreferenceRewardModel.load(tmp_path / "m.npz")
    np.testing.assert_allclose(loaded.reward(np.eye(mdp.n_states, dtype=np.float32)), trained, rtol=1e-5, atol=1e-6)


#: imitation 1.0.1 installed --no-deps next to newer gymnasium/SB3: what imports (docs/envs.md says the same)
WORKING = ["imitation.rewards.reward_nets", "imitation.rewards.reward_wrapper", "imitation.data.rollout",
           "imitation.data.types", "imitation.algorithms.bc", "imitation.algorithms.density",
           "imitation.algorithms.adversarial.gail", "imitation.algorithms.adversarial.airl"]  # fmt: skip
BROKEN = {"imitation.algorithms.dagger": "jsonpickle", "imitation.data.huggingface_utils": "jsonpickle",
          "imitation.policies.serialize": "huggingface_sb3", "imitation.scripts.train_adversarial": "sacred"}  # fmt: skip


@pytest.mark.parametrize("module", WORKING)
def test_the_documented_imitation_modules_import(module: str) -> None:
    import importlib.util

    importlib.import_module(module)


@pytest.mark.parametrize(("module", "missing"), sorted(BROKEN.items()))
def test_the_documented_broken_imitation_modules_miss_their_dependency(module: str, missing: str) -> None:
    import importlib.util

    if importlib.util.find_spec(missing) is not None:
        pytest.skip(f"{missing} is installed here; docs/envs.md lists {module} as missing it in the dev set-up")
    with pytest.raises(ModuleNotFoundError, match=missing):
        importlib.import_module(module)


@pytest.mark.slow
def test_gail_trains_the_learned_reward_through_the_net() -> None:
    from imitation.algorithms.adversarial.gail import GAIL
    from imitation.data import types
    from stable_baselines3 import PPO

    mdp = preference_grid()
    venv = make_vec_env(lambda: mdp.to_env(max_episode_steps=20), n_envs=2, seed=0)
    rng = np.random.default_rng(0)
    cells = rng.integers(0, mdp.n_states, 64)
    demos = types.Transitions(obs=cells, acts=rng.integers(0, 4, 64), next_obs=cells, dones=np.zeros(64, dtype=bool),
                              infos=np.array([{}] * 64))  # fmt: skip
    model = PreferenceRewardModel(mdp.n_states, hidden=0, ensemble=1, seed=0)
    net = PreferenceRewardNet(venv.observation_space, venv.action_space, model)
    before = model.weights.copy()
    learner = PPO("MlpPolicy", venv, n_steps=64, batch_size=32, n_epochs=1, seed=0, verbose=0)
    gail = GAIL(demonstrations=demos, demo_batch_size=32, venv=venv, gen_algo=learner, reward_net=net,
                allow_variable_horizon=True, n_disc_updates_per_round=2)  # fmt: skip
    gail.train(256)
    assert np.abs(model.weights - before).max() > 1e-4  # the discriminator's updates are the model's
