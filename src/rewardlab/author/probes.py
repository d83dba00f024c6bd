"""Cheap checks of a candidate reward table, without training.

- **Planning**: the optimal policy of the candidate reward, by value iteration, run on the true
  task. A reward whose own optimum does not solve the task is misspecified however well it
  trains (reward hacking in its plainest form: Skalse et al., "Defining and Characterizing
  Reward Hacking", NeurIPS 2022).
- **Probes**: as the audit probes of `rewardlab.evaluate.audit` do for text rewards, each probe
  changes a successful trajectory in a way that should not earn more, and checks that the
  candidate's discounted return does not rise: `loiter` (the shortest successful path with
  idle steps inserted), `fail` (the shortest path into a failure instead), `idle` (doing
  nothing useful for the whole episode).
- **Preference agreement**: pairs of random trajectory segments labelled by a B-Pref teacher
  (`rewardlab.envs.preferences.SyntheticTeacher`) on the true *regret*: the sum of the optimal
  advantages r + gamma V*(s') - V*(s) (Knox et al., "Models of human preference for learning
  reward functions", 2022); the fraction of pairs the candidate's summed reward orders the
  same way (ties count one half).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rewardlab.author.tasks import FiniteTask
from rewardlab.author.train import evaluate_greedy

__all__ = ["Checks", "PreferencePairs", "preference_agreement", "preference_pairs", "run_checks", "value_iteration"]


def value_iteration(task: FiniteTask, reward: np.ndarray, *, gamma: float = 0.9, iters: int = 2000) -> np.ndarray:
    """Q* (P, A) of `reward` (P, A) on the task's tables; episodes end where next_state is -1."""
    q = np.zeros(task.shape)
    ends = task.next_state < 0
    nxt = np.maximum(task.next_state, 0)
    for _ in range(iters):
        new = reward + gamma * np.where(ends, 0.0, q.max(axis=1)[nxt])
        if np.max(np.abs(new - q)) < 1e-10:
            return new
        q = new
    return q


@dataclass(frozen=True)
class PreferencePairs:
    """Labelled segment pairs: state and action indices (N, H) of both, labels (N,) in {0, 0.5, 1}
    (1 prefers the first), and a mask (N, H) of the steps that happened (a segment can end early)."""

    states1: np.ndarray
    actions1: np.ndarray
    mask1: np.ndarray
    states2: np.ndarray
    actions2: np.ndarray
    mask2: np.ndarray
    labels: np.ndarray


def _segments(task: FiniteTask, n: int, horizon: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    P, A = task.shape
    s = rng.integers(P, size=n)
    states, actions, mask = np.zeros((n, horizon), dtype=np.int64), np.zeros((n, horizon), dtype=np.int64), np.zeros((n, horizon), dtype=bool)
    alive = np.ones(n, dtype=bool)
    for t in range(horizon):
        a = rng.integers(A, size=n)
        states[:, t], actions[:, t], mask[:, t] = s, a, alive
        nxt = task.next_state[s, a]
        alive &= nxt >= 0
        s = np.where(nxt >= 0, nxt, s)
    return states, actions, mask


def preference_pairs(task: FiniteTask, *, n: int = 300, horizon: int = 10, gamma: float = 0.9, seed: int = 0,
                     teacher: Any = None) -> PreferencePairs:  # fmt: skip
    """`n` pairs of random segments labelled by `teacher` (default: the oracle B-Pref teacher)
    on the true regret of each step (see the module docstring)."""
    from rewardlab.envs.preferences import SyntheticTeacher

    rng = np.random.default_rng(seed)
    q = value_iteration(task, task.true_reward(), gamma=gamma)
    advantage = q - q.max(axis=1, keepdims=True)  # (P, A): 0 for optimal actions, < 0 otherwise
    s1, a1, m1 = _segments(task, n, horizon, rng)
    s2, a2, m2 = _segments(task, n, horizon, rng)
    teacher = teacher or SyntheticTeacher(seed=seed)
    labels = teacher.label(advantage[s1, a1] * m1, advantage[s2, a2] * m2)
    return PreferencePairs(s1, a1, m1, s2, a2, m2, labels)


def preference_agreement(reward: np.ndarray, pairs: PreferencePairs) -> float:
    """Fraction of answered, non-tied pairs whose order the summed `reward` (P, A) gets right;
    a tie of the candidate counts one half."""
    r1 = (reward[pairs.states1, pairs.actions1] * pairs.mask1).sum(axis=1)
    r2 = (reward[pairs.states2, pairs.actions2] * pairs.mask2).sum(axis=1)
    keep = np.isfinite(pairs.labels) & (pairs.labels != 0.5)
    if not keep.any():
        return float("nan")
    said = np.where(np.isclose(r1, r2), 0.5, (r1 > r2).astype(float))[keep]
    return float(np.mean(np.where(said == 0.5, 0.5, said == pairs.labels[keep])))


@dataclass(frozen=True)
class Checks:
    """The cheap checks of one candidate (`to_dict` is what the loop records)."""

    planning_optimality: float
    probes: list[dict[str, Any]]
    preference_agreement: float

    def to_dict(self) -> dict[str, Any]:
        agreement = None if np.isnan(self.preference_agreement) else round(self.preference_agreement, 4)
        return {"planning_optimality": round(self.planning_optimality, 4), "probes": self.probes,
                "preference_agreement": agreement}  # fmt: skip


def _path(task: FiniteTask, q: np.ndarray, goal: np.ndarray) -> list[tuple[int, int]]:
    """The greedy path of q (first best action) from the start until an episode end in `goal`."""
    s, steps = task.start, []
    for _ in range(task.max_episode_steps):
        a = int(np.argmax(q[s]))
        steps.append((s, a))
        if goal[s, a] or task.next_state[s, a] < 0:
            break
        s = int(task.next_state[s, a])
    return steps


def _discounted(reward: np.ndarray, steps: list[tuple[int, int]], gamma: float) -> float:
    return float(sum(gamma**t * reward[s, a] for t, (s, a) in enumerate(steps)))


def _loitered(task: FiniteTask, steps: list[tuple[int, int]], extra: int) -> list[tuple[int, int]] | None:
    """`steps` with `extra` idle moves (a move that stays in place) before the last step."""
    for i, (s, _) in enumerate(steps):
        idle = [a for a in range(task.shape[1]) if task.next_state[s, a] == s]
        if idle:
            return steps[:i] + [(s, idle[0])] * extra + steps[i:]
    return None


def run_checks(task: FiniteTask, reward: np.ndarray, pairs: PreferencePairs | None = None, *, gamma: float = 0.9,
               seed: int = 0) -> Checks:  # fmt: skip
    """Planning, probes and preference agreement of the reward table `reward` (P, A)."""
    rng = np.random.default_rng(seed)
    q = value_iteration(task, reward, gamma=gamma)
    planning, _ = evaluate_greedy(task, q[None], episodes=5, rng=rng)
    true_q = value_iteration(task, task.true_reward(), gamma=gamma)
    best = _path(task, true_q, task.success)
    base = _discounted(reward, best, gamma)
    probes = []
    variants: dict[str, list[tuple[int, int]] | None] = {"loiter": _loitered(task, best, 10)}
    if task.failed.any():
        variants["fail"] = _path(task, value_iteration(task, task.failed.astype(float), gamma=gamma), task.failed)
    idled = _loitered(task, best, task.max_episode_steps)
    variants["idle"] = idled[: task.max_episode_steps - 1] if idled is not None else None  # never finishes
    for name, steps in variants.items():
        if steps is None:
            continue
        got = _discounted(reward, steps, gamma)
        probes.append({"name": name, "passed": bool(got < base - 1e-9), "return": round(got, 6), "success_return": round(base, 6)})
    agreement = preference_agreement(reward, pairs) if pairs is not None else float("nan")
    return Checks(float(planning[0]), probes, agreement)
