"""Stable-Baselines3 on an RM-wrapped office world, with counterfactual experiences in the buffer."""

from __future__ import annotations

import numpy as np
import pytest

sb3 = pytest.importorskip("stable_baselines3")

from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402

from rewardlab.envs.officeworld import OfficeWorld, office_labels, office_task  # noqa: E402
from rewardlab.envs.rm.wrapper import RewardMachineWrapper  # noqa: E402


def _rm_wrapper(env) -> RewardMachineWrapper:  # type: ignore[no-untyped-def]
    while not isinstance(env, RewardMachineWrapper):
        env = env.env
    return env


class CounterfactualCallback(BaseCallback):
    """After every env step, add the CRM experiences of every RM state to the replay buffer."""

    def _on_step(self) -> bool:
        rm_env = _rm_wrapper(self.training_env.envs[0])  # type: ignore[attr-defined]
        obs, action, next_obs, labels, terminated = rm_env.last_transition
        batch = rm_env.counterfactual_batch(obs, action, next_obs, labels, env_terminated=terminated)
        for o, o2, a, r, d in zip(batch["obs"], batch["next_obs"], batch["action"], batch["reward"], batch["done"], strict=True):
            self.model.replay_buffer.add(o[None], o2[None], np.array([a]), np.array([r]), np.array([d]), [{}])
        return True


@pytest.mark.slow
def test_dqn_trains_on_wrapped_office_world_with_counterfactuals() -> None:
    env = RewardMachineWrapper(OfficeWorld(max_episode_steps=200), office_task("coffee"), office_labels, obs_mode="onehot")
    model = sb3.DQN("MlpPolicy", env, learning_starts=200, train_freq=4, buffer_size=20_000, seed=0, verbose=0,
                    policy_kwargs={"net_arch": [32]}, device="cpu")
    before = [p.detach().clone() for p in model.policy.q_net.parameters()]
    model.learn(total_timesteps=2000, callback=CounterfactualCallback())
    # 2 live RM states -> 2 counterfactual experiences per step, plus SB3's own transition
    assert model.replay_buffer.size() == 3 * 2000
    stored = model.replay_buffer.observations[: model.replay_buffer.size(), 0, 2:]
    assert set(np.argmax(stored, axis=1).tolist()) == {0, 1}  # both RM states are in the buffer
    after = list(model.policy.q_net.parameters())
    assert any(not np.allclose(b.numpy(), a.detach().numpy()) for b, a in zip(before, after, strict=True))
    obs, _ = env.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(int(action))


@pytest.mark.slow
def test_ppo_runs_on_dict_observations() -> None:
    env = RewardMachineWrapper(OfficeWorld(max_episode_steps=100), office_task("mail"), office_labels, obs_mode="dict")
    model = sb3.PPO("MultiInputPolicy", env, n_steps=256, batch_size=64, n_epochs=1, seed=0, verbose=0, device="cpu")
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
