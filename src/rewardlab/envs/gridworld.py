"""A small deterministic gridworld as tables, with value iteration and a Gymnasium view.

Used by the preference-learning, intrinsic-reward and STARC demonstrations: states are cells
`y * width + x`, actions up/right/down/left, and rewards are a function of the cell entered
(`reward[s']`), so a reward function is a vector and a policy is an array of actions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rewardlab.errors import SpecError

__all__ = ["GridMDP", "policy_value", "q_learning", "value_iteration"]

_DELTA = ((0, 1), (1, 0), (0, -1), (-1, 0))


@dataclass(frozen=True)
class GridMDP:
    """Deterministic grid: `next_state` (S, A); `reward` (S,) paid on entering a cell.

    `terminal` cells end the episode after they are entered.
    """

    width: int
    height: int
    next_state: np.ndarray
    reward: np.ndarray
    start: int = 0
    terminal: frozenset[int] = field(default_factory=frozenset)

    @classmethod
    def make(
        cls,
        width: int,
        height: int,
        *,
        rewards: Mapping[tuple[int, int], float] | None = None,
        walls: Iterable[tuple[int, int]] = (),
        start: tuple[int, int] = (0, 0),
        terminal: Iterable[tuple[int, int]] = (),
    ) -> GridMDP:
        """Build a grid; moving into a wall or off the grid stays in place."""
        if width < 1 or height < 1:
            raise SpecError(f"grid must be at least 1x1, got {width}x{height}")
        blocked = set(walls)
        nxt = np.zeros((width * height, 4), dtype=np.int64)
        for y in range(height):
            for x in range(width):
                for a, (dx, dy) in enumerate(_DELTA):
                    nx, ny = x + dx, y + dy
                    ok = 0 <= nx < width and 0 <= ny < height and (nx, ny) not in blocked
                    nxt[y * width + x, a] = ny * width + nx if ok else y * width + x
        reward = np.zeros(width * height)
        for (x, y), r in (rewards or {}).items():
            reward[y * width + x] = r
        return cls(width, height, nxt, reward, start[1] * width + start[0], frozenset(y * width + x for x, y in terminal))

    @property
    def n_states(self) -> int:
        return self.width * self.height

    def cell(self, s: int) -> tuple[int, int]:
        return s % self.width, s // self.width

    def transition_rewards(self, reward: np.ndarray | None = None) -> np.ndarray:
        """R(s, a) = reward[next_state[s, a]]; shape (S, A)."""
        r = self.reward if reward is None else reward
        return np.asarray(r)[self.next_state]  # type: ignore[no-any-return]

    def done_mask(self) -> np.ndarray:
        """(S, A): True when the move enters a terminal cell."""
        term = np.zeros(self.n_states, dtype=bool)
        term[list(self.terminal)] = True
        return term[self.next_state]  # type: ignore[no-any-return]

    def rollout(self, policy: np.ndarray, *, horizon: int, reward: np.ndarray | None = None) -> float:
        """Undiscounted return of a deterministic policy from `start` over `horizon` steps."""
        r = self.reward if reward is None else reward
        s, total = self.start, 0.0
        for _ in range(horizon):
            s = int(self.next_state[s, policy[s]])
            total += float(r[s])
            if s in self.terminal:
                break
        return total

    def to_env(self, *, max_episode_steps: int = 100) -> Any:
        """A Gymnasium env (Discrete observations) over this grid, paying `reward`."""
        import gymnasium as gym
        from gymnasium import spaces

        mdp = self

        class _GridEnv(gym.Env):
            observation_space = spaces.Discrete(mdp.n_states)
            action_space = spaces.Discrete(4)

            def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
                super().reset(seed=seed)
                self.s, self.t = mdp.start, 0
                return self.s, {}

            def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
                self.s = int(mdp.next_state[self.s, int(action)])
                self.t += 1
                term = self.s in mdp.terminal
                return self.s, float(mdp.reward[self.s]), term, self.t >= max_episode_steps and not term, {}

        return _GridEnv()


def value_iteration(mdp: GridMDP, reward: np.ndarray | None = None, *, gamma: float = 0.95, iters: int = 2000) -> np.ndarray:
    """Q* (S, A) for `reward` (default the grid's own) by value iteration."""
    r = mdp.transition_rewards(reward)
    done = mdp.done_mask()
    q = np.zeros_like(r, dtype=float)
    for _ in range(iters):
        new = r + gamma * np.where(done, 0.0, q.max(axis=1)[mdp.next_state])
        if np.max(np.abs(new - q)) < 1e-10:
            return new
        q = new
    return q


def policy_value(mdp: GridMDP, policy: np.ndarray, reward: np.ndarray | None = None, *, gamma: float = 0.95) -> np.ndarray:
    """V^pi (S,) of a deterministic policy (one action per state) by fixed-point iteration."""
    r = mdp.transition_rewards(reward)
    done = mdp.done_mask()
    idx = np.arange(mdp.n_states)
    v = np.zeros(mdp.n_states)
    for _ in range(5000):
        new = r[idx, policy] + gamma * np.where(done[idx, policy], 0.0, v[mdp.next_state[idx, policy]])
        if np.max(np.abs(new - v)) < 1e-10:
            return new  # type: ignore[no-any-return]
        v = new
    return v


def q_learning(
    mdp: GridMDP,
    reward: np.ndarray | None = None,
    *,
    steps: int = 20_000,
    horizon: int = 50,
    epsilon: float = 0.1,
    alpha: float = 0.5,
    gamma: float = 0.95,
    seed: int = 0,
) -> np.ndarray:
    """Greedy policy (S,) of tabular epsilon-greedy Q-learning on `reward`, Q initialised to 0.

    Episodes start at `mdp.start` and are cut after `horizon` steps (bootstrapping through the
    cut: a time limit, not a terminal state); ties between greedy actions break at random.
    """
    r = mdp.reward if reward is None else np.asarray(reward, dtype=float)
    rng = np.random.default_rng(seed)
    q = np.zeros((mdp.n_states, 4))
    s, t = mdp.start, 0
    for _ in range(steps):
        best = np.flatnonzero(q[s] == q[s].max())
        a = int(rng.integers(4)) if rng.random() < epsilon else int(rng.choice(best))
        s2 = int(mdp.next_state[s, a])
        target = r[s2] + (0.0 if s2 in mdp.terminal else gamma * q[s2].max())
        q[s, a] += alpha * (target - q[s, a])
        s, t = s2, t + 1
        if s2 in mdp.terminal or t >= horizon:
            s, t = mdp.start, 0
    return q.argmax(axis=1)  # type: ignore[no-any-return]
