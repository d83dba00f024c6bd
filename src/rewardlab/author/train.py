"""Fitness by training: a short training on a candidate's reward table, scored by the task's
true success.

This is the inner loop of Eureka (Ma et al., "Eureka: Human-Level Reward Design via Coding
Large Language Models", ICLR 2024, sec. 3.2): train with the candidate reward on a small
budget, then measure the task metric, never the candidate's own reward. Here the metric is the
greedy policy's success rate and its *optimality*: over evaluation episodes, the shortest
possible episode length divided by the episode's length on success, 0 on failure; 1.0 means
every episode is optimal (the normalised reward per step of Toro Icarte et al. 2022, sec. 7.1).

`TrainConfig.learner` picks who trains: tabular Q-learning (here), or a Stable-Baselines3 DQN or
PPO on one-hot states (`train_sb3`). Both report through `fitness_from_checkpoints`, so their
records have the same fields and rank the same way.

Tabular Q-learning trains all seeds in lock-step as one batch of lanes (arrays shaped (B, ...)).
Q starts at 0, so a sparse reward gives no signal until an epsilon-greedy walk first succeeds: a
good reward must make learning fast, not just make the optimal policy right.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rewardlab.author.config import TrainConfig
from rewardlab.author.execute import RewardTable
from rewardlab.author.tasks import FiniteTask

__all__ = ["Fitness", "evaluate_greedy", "fitness_from_checkpoints", "merit", "rank", "train_on_table"]


@dataclass(frozen=True)
class Fitness:
    """How agents trained on a candidate did on the true task.

    Attributes:
        learner: who trained (`TrainConfig.learner`).
        optimality: mean over seeds of the final greedy policy's optimality (see module doc).
        success_rate: mean over seeds of its success rate.
        per_seed: final optimality of each seed.
        curve: mean optimality at each checkpoint.
        train_success: fraction of the training episodes (exploration included) that
            succeeded: a denser signal than `optimality` while nothing has been learnt yet.
        components: per component, its mean value per step the agents took, for each
            checkpoint interval (Eureka's reward reflection), and how often it was non-zero.
    """

    optimality: float
    success_rate: float
    per_seed: list[float]
    curve: list[float]
    train_success: float = 0.0
    components: dict[str, dict[str, Any]] = field(default_factory=dict)
    learner: str = "q"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _choose(q: np.ndarray, rng: np.random.Generator, epsilon: float) -> np.ndarray:
    """Epsilon-greedy over the last axis of q (B, A), random tie-break."""
    B, A = q.shape
    noise = rng.random((B, A + 2))
    greedy = np.argmax(np.where(q >= q.max(axis=1, keepdims=True), noise[:, :A], -1.0), axis=1)
    random_a = np.minimum((noise[:, A + 1] * A).astype(np.int64), A - 1)
    chosen: np.ndarray = np.where(noise[:, A] < epsilon, random_a, greedy)
    return chosen


def evaluate_greedy(task: FiniteTask, q: np.ndarray, *, episodes: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(optimality, success rate) per lane of the greedy policies of q (B, P, A)."""
    B = q.shape[0]
    best = task.optimal_steps()
    lanes = np.repeat(np.arange(B), episodes)
    s = np.full(len(lanes), task.start)
    length = np.zeros(len(lanes), dtype=np.int64)
    won = np.zeros(len(lanes), dtype=bool)
    running = np.ones(len(lanes), dtype=bool)
    for t in range(task.max_episode_steps):
        i = np.nonzero(running)[0]
        if i.size == 0:
            break
        a = _choose(q[lanes[i], s[i]], rng, 0.0)
        won[i] = task.success[s[i], a]
        nxt = task.next_state[s[i], a]
        length[i] = t + 1
        running[i] = nxt >= 0
        s[i] = np.where(nxt >= 0, nxt, s[i])
    score = np.where(won, best / np.maximum(length, 1), 0.0).reshape(B, episodes)
    return score.mean(axis=1), won.reshape(B, episodes).mean(axis=1)


def train_on_table(task: FiniteTask, table: RewardTable, config: TrainConfig | None = None) -> Fitness:
    """Train `config.learner` on `table.total` for `config.steps` steps per seed; the true-task
    `Fitness`. The SB3 learners need the sb3 extra (`train_sb3.train_sb3`)."""
    cfg = config or TrainConfig()
    if cfg.learner != "q":
        from rewardlab.author.train_sb3 import train_sb3

        return train_sb3(task, table, cfg)
    return _q_learning(task, table, cfg)


def _q_learning(task: FiniteTask, table: RewardTable, cfg: TrainConfig) -> Fitness:
    """Epsilon-greedy tabular Q-learning on `table.total`, all seeds as lanes of one batch."""
    rng = np.random.default_rng(cfg.seed)
    P, A = task.shape
    B = cfg.seeds
    lanes = np.arange(B)
    q = np.full((B, P, A), float(cfg.q_init))
    s = np.full(B, task.start)
    t_ep = np.zeros(B, dtype=np.int64)
    episodes = wins = 0
    visits = np.zeros((cfg.checkpoints, P, A))
    optimality = np.zeros((cfg.checkpoints, B))
    success = np.zeros(B)
    per_check = cfg.steps // cfg.checkpoints
    for k in range(cfg.checkpoints):
        counts = np.zeros(P * A)
        for _ in range(per_check):
            a = _choose(q[lanes, s], rng, cfg.epsilon)
            s2 = task.next_state[s, a]
            end = s2 < 0
            bootstrap = np.where(end, 0.0, q[lanes, np.maximum(s2, 0)].max(axis=1))
            q[lanes, s, a] += cfg.step_size * (table.total[s, a] + cfg.gamma * bootstrap - q[lanes, s, a])
            counts += np.bincount(s * A + a, minlength=P * A)
            t_ep += 1
            reset = end | (t_ep >= task.max_episode_steps)
            episodes, wins = episodes + int(reset.sum()), wins + int(task.success[s, a].sum())
            s = np.where(reset, task.start, np.maximum(s2, 0))
            t_ep[reset] = 0
        visits[k] = counts.reshape(P, A)
        optimality[k], success = evaluate_greedy(task, q, episodes=cfg.eval_episodes, rng=rng)
    return fitness_from_checkpoints(cfg.learner, table, optimality, success, visits, wins / max(episodes, 1))


def fitness_from_checkpoints(learner: str, table: RewardTable, optimality: np.ndarray, success: np.ndarray,
                             visits: np.ndarray, train_success: float) -> Fitness:  # fmt: skip
    """The `Fitness` of a training, whoever trained: `optimality` (K, B) of each seed's greedy
    policy at each of K checkpoints, `success` (B,) at the last, `visits` (K, P, A) the
    (state, action) pairs stepped in each checkpoint interval over all seeds, `train_success`
    the share of training episodes that succeeded."""
    final = optimality[-1]
    return Fitness(float(final.mean()), float(success.mean()), [float(x) for x in final],
                   [float(row.mean()) for row in optimality], float(train_success), component_statistics(table, visits),
                   learner)  # fmt: skip


def component_statistics(table: RewardTable, visits: np.ndarray) -> dict[str, dict[str, Any]]:
    """Per component: mean value per step taken in each checkpoint interval, overall mean and
    standard deviation, and the fraction of steps where it was non-zero. `visits` (K, P, A)."""
    out: dict[str, dict[str, Any]] = {}
    per_interval = visits.reshape(len(visits), -1)
    total = per_interval.sum(axis=0)
    n = max(total.sum(), 1.0)
    for name, values in table.components.items():
        flat = values.reshape(-1)
        mean = float(total @ flat / n)
        out[name] = {
            "mean_per_step": [round(float(v @ flat / max(v.sum(), 1.0)), 6) for v in per_interval],
            "mean": round(mean, 6),
            "std": round(float(np.sqrt(max(total @ (flat - mean) ** 2 / n, 0.0))), 6),
            "nonzero": round(float(total @ (flat != 0) / n), 4),
        }
    return out


def merit(record: Mapping[str, Any]) -> float:
    """A scored candidate's worth: the lower of its trained agent's true-task optimality and the
    optimality of its own optimal policy (the planning check), when that was measured.

    Training alone is optimistic: a few seeds can stop on the true optimum before they find the
    candidate's own, different one (a reward that pays for each item fetched prefers the nearer
    item first), and longer training would then drift away from the task. A reward is only as
    good as both what is learnt from it and what it asks for.
    """
    trained = float(record["fitness"]["optimality"])
    planned = (record.get("checks") or {}).get("planning_optimality")
    return trained if planned is None else min(trained, float(planned))


def rank(record: Mapping[str, Any]) -> tuple[float, ...]:
    """How scored records compare: `merit`, then true-task optimality, then the success rate of
    the training episodes, then the earlier candidate."""
    fit = record["fitness"]
    return (merit(record), float(fit["optimality"]), float(fit.get("train_success", 0.0)), -record["round"], -record["index"])
