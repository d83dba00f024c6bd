"""Fitness by a Stable-Baselines3 training: the same question as tabular Q-learning, asked of
a deep learner, DQN or PPO on one-hot states; `train.train_on_table` comes here when
`TrainConfig.learner` is "dqn" or "ppo", inside the authoring loop as anywhere else.

The candidate's reward table is paid by a small Gymnasium env over the task's tables
(`TableEnv`). At each checkpoint the policy's action in every state is read off with
`model.predict` and run on the true task by `train.evaluate_greedy`, so the score is the same
optimality, and the record is built by the same `train.fitness_from_checkpoints`. Needs the
`sb3` extra (stable-baselines3, torch).
"""

from __future__ import annotations

import copy
from typing import Any

try:
    import gymnasium as gym
    import numpy as np
    from gymnasium import spaces
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.author.config import TrainConfig
from rewardlab.author.execute import RewardTable
from rewardlab.author.tasks import FiniteTask
from rewardlab.author.train import Fitness, evaluate_greedy, fitness_from_checkpoints
from rewardlab.errors import ConfigError

__all__ = ["SMALL_TASK_SETTINGS", "TableEnv", "train_sb3"]

#: SB3 settings for tasks of tens to hundreds of one-hot states and budgets of a few thousand
#: steps, where the library's defaults (made for runs of millions of steps) learn little: DQN
#: updates its target network every 100 steps, not 10,000, and takes two gradient steps per four
#: env steps; PPO updates every 128 steps, not 2,048, ten epochs each. A key given to `train_sb3`
#: overrides these.
SMALL_TASK_SETTINGS: dict[str, dict[str, Any]] = {
    "dqn": {"buffer_size": 50_000, "learning_starts": 200, "batch_size": 64, "train_freq": 4, "gradient_steps": 2,
            "target_update_interval": 100, "exploration_fraction": 0.3, "policy_kwargs": {"net_arch": [64, 64]}},
    "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 10, "ent_coef": 0.0, "policy_kwargs": {"net_arch": [64, 64]}},
}


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


def train_sb3(task: FiniteTask, table: RewardTable, config: TrainConfig | None = None, **algo_kwargs: Any) -> Fitness:
    """Train `config.learner` ("dqn" or "ppo"; default dqn) on the candidate's table for
    `config.steps` per seed, one seed after the other; the true-task `Fitness` of the
    deterministic policies at each of `config.checkpoints`.

    `config` gives the budget, seeds, step size (`TrainConfig.step_size`), discount and, for DQN,
    the final exploration rate; `algo_kwargs` go to the algorithm's constructor over
    `SMALL_TASK_SETTINGS`. Torch runs on one CPU thread meanwhile: the networks are tiny, and
    more threads only contend with the sandbox and other work.
    """
    cfg = config or TrainConfig(learner="dqn")
    if cfg.learner not in SMALL_TASK_SETTINGS:
        raise ConfigError(f"train_sb3 trains learner dqn or ppo, got {cfg.learner!r} (q is train.train_on_table)")
    try:
        import stable_baselines3 as sb3
        import torch
    except ImportError as exc:
        raise ConfigError(f"learner {cfg.learner!r} needs stable-baselines3: pip install 'rewardlab[sb3]'") from exc
    settings = SMALL_TASK_SETTINGS[cfg.learner] | {"learning_rate": cfg.step_size, "gamma": cfg.gamma}
    if cfg.learner == "dqn":
        settings["exploration_final_eps"] = cfg.epsilon
    settings = copy.deepcopy(settings | algo_kwargs)  # SB3 may write into policy_kwargs
    P, A = task.shape
    optimality, success = np.zeros((cfg.checkpoints, cfg.seeds)), np.zeros(cfg.seeds)
    visits = np.zeros((cfg.checkpoints, P, A))
    episodes = wins = 0
    rng = np.random.default_rng(cfg.seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for lane in range(cfg.seeds):
            env = TableEnv(task, table.total)
            model = getattr(sb3, cfg.learner.upper())("MlpPolicy", env, seed=cfg.seed + lane, verbose=0, device="cpu", **settings)
            for k, (policy, seen) in enumerate(_train_with_checkpoints(model, env, cfg.steps, cfg.checkpoints)):
                score, won = evaluate_greedy(task, policy[None], episodes=cfg.eval_episodes, rng=rng)
                optimality[k, lane], success[lane] = score[0], won[0]
                visits[k] += seen
            episodes, wins = episodes + env.episodes, wins + env.wins
    finally:
        torch.set_num_threads(threads)
    return fitness_from_checkpoints(cfg.learner, table, optimality, success, visits, wins / max(episodes, 1))


def _train_with_checkpoints(model: Any, env: TableEnv, steps: int, checkpoints: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Train `model` for `steps` env steps; every `steps // checkpoints` steps, take its
    deterministic policy as a one-hot "Q" (P, A) and the (state, action) visits since the last
    checkpoint. Training stops at the last checkpoint, so PPO does not finish its rollout."""
    P, A = env.task.shape
    every, eye = steps // checkpoints, np.eye(P, dtype=np.float32)
    taken: list[tuple[np.ndarray, np.ndarray]] = []
    last = np.zeros((P, A))

    def on_step(_locals: dict[str, Any], _globals: dict[str, Any]) -> bool:  # SB3 wraps it in a ConvertCallback
        nonlocal last
        if model.num_timesteps % every == 0:
            actions, _ = model.predict(eye, deterministic=True)
            taken.append((np.eye(A)[np.asarray(actions, dtype=np.int64)], env.visits - last))
            last = env.visits.copy()
        return len(taken) < checkpoints  # False ends `learn`

    model.learn(total_timesteps=steps, callback=on_step)
    return taken
