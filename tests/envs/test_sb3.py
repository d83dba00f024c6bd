"""Stable-Baselines3 learns office-world `coffee` through `RewardMachineWrapper`.

Every run is scored the same way: the greedy policy must finish the task from the paper's start
(2, 1) within 50 steps (the shortest path is 15). Two things decide whether a small budget is
enough (`bench/RESULTS.md`, "SB3 on office-world coffee: observation code and exploration"):

- the observation code: PPO learns from `obs_mode="joint"` (one unit per cell) and not, within
  the same budget, from the factored `"onehot"` code (x, y and RM state units);
- exploration from the fixed start: a uniformly random walk from (2, 1) finishes coffee within
  50 steps in 0.007% of episodes (computed exactly below), 100x less often than from a random
  empty cell. DQN's epsilon-greedy exploration needs exploring starts
  (`OfficeWorld(start="random")`) or a count bonus (`IntrinsicRewardVecWrapper`; it solved seed 0
  within 20k steps, not every seed: `bench_envs.py sb3-start`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

sb3 = pytest.importorskip("stable_baselines3")

from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402

from rewardlab.envs.intrinsic import CountBonus, DecaySchedule  # noqa: E402
from rewardlab.envs.officeworld import (  # noqa: E402
    EMPTY_CELLS,
    OFFICE_ALPHABET,
    START,
    OfficeWorld,
    cell_index,
    office_labels,
    office_task,
    office_transitions,
)
from rewardlab.envs.rm.sb3 import CounterfactualReplayBuffer  # noqa: E402
from rewardlab.envs.rm.wrapper import RewardMachineWrapper  # noqa: E402
from rewardlab.envs.vec import IntrinsicRewardVecWrapper  # noqa: E402


def _coffee(start: str, obs_mode: str = "onehot", *, counterfactuals: bool = False) -> RewardMachineWrapper:
    return RewardMachineWrapper(OfficeWorld(max_episode_steps=50, start=start), office_task("coffee"), office_labels,
                                obs_mode=obs_mode, counterfactuals=counterfactuals)  # type: ignore[arg-type]


def _greedy_episode(model: Any, env: RewardMachineWrapper) -> tuple[float, int]:
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


class _StopWhenSolved(BaseCallback):
    """Every `every` env steps, runs the greedy policy from (2, 1); stops training once it solves coffee.

    One `learn` call with this callback trains exactly as `learn(budget)` does (exploration
    schedules included) up to the step where the task is first solved.
    """

    def __init__(self, probe: RewardMachineWrapper, every: int):
        super().__init__()
        self.probe, self.every, self.solved_at, self.length = probe, every, None, 50
        self._next = every

    def _on_step(self) -> bool:
        if self.num_timesteps < self._next:
            return True
        self._next += self.every
        ret, length = _greedy_episode(self.model, self.probe)
        if ret == 1.0:
            self.solved_at, self.length = self.num_timesteps, length
            return False
        return True


def _learn_until_solved(model: Any, obs_mode: str, budget: int, every: int) -> tuple[int | None, int]:
    """Train until the greedy policy solves coffee from (2, 1): (env steps or None, episode length)."""
    stop = _StopWhenSolved(_coffee("paper", obs_mode), every)
    model.learn(budget, callback=stop)
    return stop.solved_at, stop.length


def _random_walk_success(start: np.ndarray, horizon: int) -> float:
    """Probability that uniformly random actions finish coffee within `horizon` steps from `start`
    (a distribution over cells), by dynamic programming on (cell, RM state): exact, no sampling."""
    nxt, label = office_transitions()
    props = [OFFICE_ALPHABET[i] for i in label]
    decoration = np.array(["n" in p for p in props])
    coffee, office = np.array(["f" in p for p in props]), np.array(["g" in p for p in props])
    before, holding = np.asarray(start, dtype=np.float64), np.zeros(len(nxt))  # RM states 0 and 1
    success = 0.0
    for _ in range(horizon):
        new_before, new_holding = np.zeros_like(before), np.zeros_like(holding)
        for a in range(4):  # each action with probability 1/4; entering a decoration rejects
            to = nxt[:, a]
            alive = ~decoration[to]
            np.add.at(new_before, to[alive & ~coffee[to]], before[alive & ~coffee[to]] / 4)
            np.add.at(new_holding, to[alive & coffee[to]], before[alive & coffee[to]] / 4)
            success += holding[alive & office[to]].sum() / 4
            np.add.at(new_holding, to[alive & ~office[to]], holding[alive & ~office[to]] / 4)
        before, holding = new_before, new_holding
    return success


def test_a_random_walk_from_the_paper_start_almost_never_finishes_coffee() -> None:
    fixed = np.zeros(len(office_transitions()[0]))
    fixed[cell_index(*START)] = 1.0
    anywhere = np.zeros_like(fixed)
    anywhere[EMPTY_CELLS] = 1.0 / len(EMPTY_CELLS)
    from_start, from_anywhere = _random_walk_success(fixed, 50), _random_walk_success(anywhere, 50)
    assert from_start == pytest.approx(7.32e-5, rel=0.01)  # 1 episode in ~13,700
    assert from_anywhere == pytest.approx(7.19e-3, rel=0.01)  # exploring starts: ~100x more often
    assert _random_walk_success(fixed, 1000) < 6e-4  # the paper's 1,000-step limit barely helps


@pytest.mark.slow
def test_ppo_learns_coffee_from_the_joint_observation_code() -> None:
    venv = make_vec_env(lambda: _coffee("random", "joint"), n_envs=8, seed=0)
    model = sb3.PPO("MlpPolicy", venv, n_steps=128, batch_size=256, n_epochs=4, gamma=0.95, ent_coef=0.01,
                    learning_rate=1e-3, policy_kwargs={"net_arch": [64]}, seed=0, device="cpu")
    steps, length = _learn_until_solved(model, "joint", budget=64_000, every=8192)
    assert steps is not None, "PPO did not solve coffee from (2, 1) within 64k env steps"
    assert length <= 20


@pytest.mark.slow
def test_dqn_learns_coffee_from_the_paper_start_with_a_count_bonus() -> None:
    # the paper's fixed start: no exploring starts; the bonus 0.2 / sqrt(N(cell, RM state)) over the
    # VecEnv's joint codes (`state_index`) makes epsilon-greedy DQN find the office
    venv = make_vec_env(lambda: _coffee("paper", "joint"), n_envs=8, seed=0)
    codec = _coffee("paper", "joint").codec
    venv = IntrinsicRewardVecWrapper(venv, CountBonus(codec.n_states, scale=0.2),  # type: ignore[attr-defined]
                                     schedule=DecaySchedule(steps=20_000), featurize=codec.state_index)  # type: ignore[attr-defined]
    model = sb3.DQN("MlpPolicy", venv, learning_starts=1000, train_freq=1, gradient_steps=1, buffer_size=100_000,
                    exploration_fraction=0.3, exploration_final_eps=0.05, learning_rate=1e-3, target_update_interval=100,
                    gamma=0.9, batch_size=64, policy_kwargs={"net_arch": [128]}, seed=0, device="cpu")
    steps, length = _learn_until_solved(model, "joint", budget=20_000, every=2000)
    assert steps is not None, "DQN + count bonus did not solve coffee from (2, 1) within 20k env steps"
    assert length <= 20


@pytest.mark.slow
def test_dqn_with_counterfactual_experiences_learns_coffee() -> None:
    venv = make_vec_env(lambda: _coffee("random", counterfactuals=True), n_envs=8, seed=0)
    model = sb3.DQN("MlpPolicy", venv, learning_starts=1000, train_freq=1, gradient_steps=1, buffer_size=100_000,
                    exploration_fraction=0.3, exploration_final_eps=0.05, learning_rate=1e-3, target_update_interval=100,
                    gamma=0.9, batch_size=64, replay_buffer_class=CounterfactualReplayBuffer,
                    policy_kwargs={"net_arch": [128]}, seed=0, device="cpu")
    steps, length = _learn_until_solved(model, "onehot", budget=16_000, every=1000)
    assert steps is not None, "DQN + CRM did not solve coffee from (2, 1) within 16k env steps"
    assert length <= 20  # the shortest path from (2, 1) is 15 steps
    # two live RM states (u0, u1): the buffer holds two experiences per env step (but the last:
    # SB3 stops before storing the step on which the callback stops training)
    assert model.replay_buffer.size() * 8 == 2 * (model.num_timesteps - 8)
