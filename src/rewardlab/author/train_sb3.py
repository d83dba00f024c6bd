"""Fitness by a Stable-Baselines3 training: the same question as `train.train_on_table`, asked
of a deep learner (DQN or PPO on one-hot states) instead of tabular Q-learning.

The candidate's reward table is paid by a small Gymnasium env over the task's tables
(`TableEnv`); the trained policy's action in every state is read off with `model.predict`
and run on the true task by `train.evaluate_greedy`, so the score is the same optimality.
Needs the `rl` extra (stable-baselines3, torch).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rewardlab.author.execute import RewardTable
from rewardlab.author.tasks import FiniteTask
from rewardlab.author.train import Fitness, component_statistics, evaluate_greedy
from rewardlab.errors import ConfigError

__all__ = ["TableEnv", "train_sb3"]


class TableEnv(gym.Env[np.ndarray, int]):
    """A `FiniteTask` as a Gymnasium env that pays `reward` (P, A); observations are one-hot
    states (float32), episodes end on success or failure and are truncated at the task's
    `max_episode_steps`. `visits` counts the (state, action) pairs stepped, `episodes` and
    `wins` the episodes ended and the successes."""

    def __init__(self, task: FiniteTask, reward: np.ndarray):
        P, A = task.shape
        self.task, self.reward = task, reward
        self.observation_space = spaces.Box(0.0, 1.0, shape=(P,), dtype=np.float32)
        self.action_space = spaces.Discrete(A)  # type: ignore[assignment]
        self.visits = np.zeros((P, A))
        self.episodes = self.wins = 0
        self._p, self._t = task.start, 0

    def _obs(self) -> np.ndarray:
        out = np.zeros(self.task.shape[0], dtype=np.float32)
        out[self._p] = 1.0
        return out

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._p, self._t = self.task.start, 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        p, a = self._p, int(action)
        self.visits[p, a] += 1
        nxt = int(self.task.next_state[p, a])
        self._t += 1
        info = {"success": bool(self.task.success[p, a])}
        truncated = self._t >= self.task.max_episode_steps and nxt >= 0
        self.episodes += int(nxt < 0 or truncated)
        self.wins += int(info["success"])
        if nxt >= 0:
            self._p = nxt
        return self._obs(), float(self.reward[p, a]), nxt < 0, truncated, info


def train_sb3(task: FiniteTask, table: RewardTable, *, algo: str = "DQN", steps: int = 20_000, seeds: int = 2,
              seed: int = 0, eval_episodes: int = 5, **algo_kwargs: Any) -> Fitness:  # fmt: skip
    """Train `algo` ("DQN" or "PPO") on the candidate's table for `steps` per seed; the true-task
    `Fitness` of the final deterministic policies (no curve: one checkpoint, at the end)."""
    import stable_baselines3 as sb3

    if algo not in ("DQN", "PPO"):
        raise ConfigError(f"algo must be 'DQN' or 'PPO', got {algo!r}")
    P, A = task.shape
    eye = np.eye(P, dtype=np.float32)
    policies, visits, episodes, wins = [], np.zeros((1, P, A)), 0, 0
    for k in range(seeds):
        env = TableEnv(task, table.total)
        model = getattr(sb3, algo)("MlpPolicy", env, seed=seed + k, verbose=0, device="cpu", **algo_kwargs)
        model.learn(total_timesteps=steps)
        actions, _ = model.predict(eye, deterministic=True)
        policies.append(np.eye(A)[np.asarray(actions, dtype=np.int64)])  # (P, A) one-hot "Q"
        visits[0] += env.visits
        episodes, wins = episodes + env.episodes, wins + env.wins
    optimality, success = evaluate_greedy(task, np.stack(policies), episodes=eval_episodes, rng=np.random.default_rng(seed))
    return Fitness(float(optimality.mean()), float(success.mean()), [float(x) for x in optimality], [float(optimality.mean())],
                   wins / max(episodes, 1), component_statistics(table, visits))  # fmt: skip
