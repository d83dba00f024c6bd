"""Stable-Baselines3 learns office-world tasks through `RewardMachineWrapper`.

Training uses exploring starts (`OfficeWorld(start="random")`) and evaluates the greedy policy
from the paper's start (2, 1); from (2, 1) alone a random walk reaches the office in 0.04% of
episodes, too rarely for epsilon-greedy or on-policy exploration within a test's budget.
"""

from __future__ import annotations

import pytest

sb3 = pytest.importorskip("stable_baselines3")

from stable_baselines3.common.env_util import make_vec_env  # noqa: E402

from rewardlab.envs.officeworld import OfficeWorld, office_labels, office_task  # noqa: E402
from rewardlab.envs.rm.sb3 import CounterfactualReplayBuffer  # noqa: E402
from rewardlab.envs.rm.wrapper import RewardMachineWrapper  # noqa: E402


def _coffee(start: str, *, counterfactuals: bool = False) -> RewardMachineWrapper:
    return RewardMachineWrapper(OfficeWorld(max_episode_steps=50, start=start), office_task("coffee"), office_labels,
                                obs_mode="onehot", counterfactuals=counterfactuals)


def _greedy_return(model, env: RewardMachineWrapper) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    """Return and length of one greedy episode from (2, 1)."""
    obs, _ = env.reset(seed=0)
    total = 0.0
    for t in range(1, 51):
        action, _ = model.predict(obs, deterministic=True)
        obs, r, term, trunc, _ = env.step(int(action))
        total += r
        if term or trunc:
            return total, t
    return total, 50


def _learn_until_solved(model, budget: int, chunk: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Train in chunks until the greedy policy solves coffee from (2, 1): (steps, episode length)."""
    probe = _coffee("paper")
    for steps in range(chunk, budget + 1, chunk):
        model.learn(chunk, reset_num_timesteps=False)
        ret, length = _greedy_return(model, probe)
        if ret == 1.0:
            return steps, length
    return budget + 1, 50


@pytest.mark.slow
def test_dqn_with_counterfactual_experiences_learns_coffee() -> None:
    venv = make_vec_env(lambda: _coffee("random", counterfactuals=True), n_envs=8, seed=0)
    model = sb3.DQN("MlpPolicy", venv, learning_starts=1000, train_freq=1, gradient_steps=1, buffer_size=100_000,
                    exploration_fraction=0.3, exploration_final_eps=0.05, learning_rate=1e-3, target_update_interval=100,
                    gamma=0.9, batch_size=64, replay_buffer_class=CounterfactualReplayBuffer,
                    policy_kwargs={"net_arch": [128]}, seed=0, device="cpu")
    steps, length = _learn_until_solved(model, budget=16_000, chunk=1000)
    assert steps <= 16_000, "DQN + CRM did not solve coffee from (2, 1) within 16k env steps"
    assert length <= 20  # the shortest path from (2, 1) is 15 steps
    # two live RM states (u0, u1): the buffer holds two experiences per env step
    assert model.replay_buffer.size() * 8 == 2 * model.num_timesteps
