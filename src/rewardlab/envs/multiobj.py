"""Vector rewards for classic RL: an MO-Gymnasium-style wrapper, a tabular weight sweep, and the
non-Markovian aggregation of objectives with different discounts.

    env = VectorReward(gym.make("CliffWalking-v1"), terms={"steps": lambda t: -1.0}, keep_reward="task")
    env.reward_space          # Box of shape (2,): the env's own reward, then each term
    env.objective_names       # ("task", "steps")

`VectorReward` follows MO-Gymnasium's convention (a `step` reward that is a float32 array and a
`reward_space` Box on the env), so MO-Gymnasium's wrappers (`LinearReward`,
`MORecordEpisodeStatistics`, which read `env.unwrapped.reward_space`) and morl-baselines agents
take it; an env that already returns vectors (deep sea treasure) is passed through with its
objectives named and checked.

`linear_support` sweeps scalarisation weights over two objectives the way Optimistic Linear
Support does (Roijers, Whiteson and Oliehoek 2014, "Linear Support for Multi-Objective
Coordination Graphs", AAMAS): the next weight is where two value vectors found so far
tie, and a new vector is kept when it beats both there. `q_learning_front` runs it with tabular
Q-learning, which finds every point of a front's convex hull (deep sea treasure's front, in
MO-Gymnasium's convex version, is all on it).

`DiscountAggregator`: objectives with their own discounts `γ_i` cannot be aggregated by any
Markovian reward under one discount in a dynamically consistent way (Pitis 2023, "Consistent
Aggregation of Objectives with Diverse Time Preferences Requires Non-Markovian Rewards",
NeurIPS, Theorem 4; its Section 2 counterexample is the "Procrastinator's Peril": play pays
0.5 discounted by 0.5, work pays 0.3 discounted by 0.9, and an agent summing the two plays
today planning to work tomorrow, every day). The escape (Theorem 5, equation 3) discounts each
objective's aggregation weight by its own discount, `w_i(hsa) = w_i(h) γ_i`; Section 4.2 makes
it Markovian with one factor per objective appended to the state,
`y_i ← y_i · γ_i / γ_Σ` from `y_i = 1`, the weights being `w_i · y_i`. The aggregated reward
`R_t = Σ_i w_i y_i(t) r_i(t)` discounted by `γ_Σ` then sums to `Σ_i w_i Σ_t γ_i^t r_i(t)`.
The paper leaves `γ_Σ` open (Remark 4.1) and names the largest `γ_i` as one choice: it is the
default here, which keeps every factor at most 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, SupportsFloat

try:
    import gymnasium as gym
    import numpy as np
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.errors import ConfigError, InputError

__all__ = [
    "DiscountAggregator",
    "HeterogeneousDiscounts",
    "Transition",
    "VectorReward",
    "greedy_return",
    "linear_support",
    "q_learning_front",
    "tabular_q",
]


@dataclass(frozen=True)
class Transition:
    """What a reward term sees: one step of the wrapped env."""

    obs: Any
    action: Any
    reward: Any
    next_obs: Any
    terminated: bool
    info: Mapping[str, Any]


Term = Callable[[Transition], float]


class VectorReward(gym.Wrapper[Any, Any, Any, Any]):
    """An env whose `step` reward is a vector: the env's own reward (a scalar, or the vector of
    an MO env) followed by one entry per named term.

    Args:
        env: the env.
        terms: objective name -> function of the `Transition`.
        keep_reward: the name of the env's own scalar reward in the vector, or None to leave
            it out; for an env that returns vectors, `names` names them instead.
        names: the objectives of an env that already returns vectors (default `r0`, `r1`...).
        low, high: bounds of the terms for `reward_space` (default unbounded).
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        terms: Mapping[str, Term] | None = None,
        *,
        keep_reward: str | None = "reward",
        names: Sequence[str] | None = None,
        low: float = -np.inf,
        high: float = np.inf,
    ):
        super().__init__(env)
        base_space = getattr(env.unwrapped, "reward_space", None)
        self._base_dim = int(base_space.shape[0]) if base_space is not None else (1 if keep_reward else 0)
        if base_space is not None:
            base_names = tuple(names) if names is not None else tuple(f"r{i}" for i in range(self._base_dim))
            if len(base_names) != self._base_dim:
                raise ConfigError(f"names has {len(base_names)} entries for the env's {self._base_dim} objectives")
        else:
            if names is not None:
                raise ConfigError("names are for an env that returns vectors; this one returns a scalar (use keep_reward)")
            base_names = (keep_reward,) if keep_reward else ()
        self._terms = dict(terms or {})
        self.objective_names: tuple[str, ...] = base_names + tuple(self._terms)
        if not self.objective_names:
            raise ConfigError("a vector reward needs at least one objective: keep the env's reward or give terms")
        if len(set(self.objective_names)) != len(self.objective_names):
            raise ConfigError(f"objective names repeat: {self.objective_names}")
        lows = np.concatenate([np.asarray(base_space.low, np.float32) if base_space is not None else np.full(self._base_dim, -np.inf), np.full(len(self._terms), low)])
        highs = np.concatenate([np.asarray(base_space.high, np.float32) if base_space is not None else np.full(self._base_dim, np.inf), np.full(len(self._terms), high)])
        self.reward_space = gym.spaces.Box(lows.astype(np.float32), highs.astype(np.float32), dtype=np.float32)
        self.reward_dim = len(self.objective_names)
        unwrapped = env.unwrapped
        if base_space is None or self._terms:
            # MO-Gymnasium's wrappers read the vector's space from `env.unwrapped`
            unwrapped.reward_space = self.reward_space  # type: ignore[attr-defined]
            unwrapped.reward_dim = self.reward_dim  # type: ignore[attr-defined]
        self._last_obs: Any = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._last_obs = obs
        return obs, info

    def step(self, action: Any) -> tuple[Any, np.ndarray, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        base = np.atleast_1d(np.asarray(reward, dtype=np.float64)) if self._base_dim else np.zeros(0)
        if base.shape != (self._base_dim,):
            raise InputError(f"the env returned a reward of shape {np.asarray(reward).shape}; expected {self._base_dim} objectives")
        step = Transition(self._last_obs, action, reward, obs, bool(terminated), info)
        extra = [float(term(step)) for term in self._terms.values()]
        vector = np.concatenate([base, np.asarray(extra, dtype=np.float64)])
        if not np.isfinite(vector).all():
            bad = [n for n, v in zip(self.objective_names, vector, strict=True) if not np.isfinite(v)]
            raise InputError(f"objective {', '.join(bad)} is not finite at this step")
        self._last_obs = obs
        return obs, vector.astype(np.float32), terminated, truncated, info


def tabular_q(
    env: gym.Env[Any, Any],
    weights: Sequence[float] | np.ndarray,
    *,
    episodes: int = 300,
    gamma: float = 0.99,
    alpha: float = 1.0,
    epsilon: float = 0.0,
    optimism: float | None = None,
    seed: int = 0,
    max_steps: int = 1000,
) -> dict[Any, np.ndarray]:
    """Tabular Q-learning on the scalarised reward `w · r` of a vector-reward env with hashable
    (or array) observations. Q starts at `optimism`, so a greedy learner tries every action
    (optimism in the face of uncertainty); the default is the largest one-step `w · r` the
    env's `reward_space` allows (at least 0), an upper bound of the return for episodic tasks
    whose large rewards come once (a goal, a treasure); pass a larger one otherwise.
    `alpha = 1` is exact for deterministic envs. Returns obs -> Q row."""
    w = np.asarray(weights, dtype=np.float64)
    rng = np.random.default_rng(seed)
    n_actions = int(env.action_space.n)  # type: ignore[attr-defined]
    if optimism is None:
        space = getattr(env.unwrapped, "reward_space", None)
        top = float(np.maximum(w * space.low, w * space.high).sum()) if space is not None and np.isfinite(space.high).all() else 1.0
        optimism = max(top, 0.0)
    q: dict[Any, np.ndarray] = {}

    def row(obs: Any) -> np.ndarray:
        key = _key(obs)
        if key not in q:
            q[key] = np.full(n_actions, optimism, dtype=np.float64)
        return q[key]

    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + episode)
        for _ in range(max_steps):
            values = row(obs)
            if epsilon and rng.random() < epsilon:
                action = int(rng.integers(n_actions))
            else:
                best = np.flatnonzero(values == values.max())  # ties broken at random
                action = int(best[0] if best.size == 1 else best[rng.integers(best.size)])
            nxt, reward, terminated, truncated, _ = env.step(action)
            target = float(w @ np.atleast_1d(np.asarray(reward, dtype=np.float64))) + (0.0 if terminated else gamma * float(row(nxt).max()))
            values[action] += alpha * (target - values[action])
            obs = nxt
            if terminated or truncated:
                break
    return q


def _key(obs: Any) -> Any:
    return tuple(np.asarray(obs).ravel().tolist()) if isinstance(obs, np.ndarray) else obs


def greedy_return(env: gym.Env[Any, Any], q: Mapping[Any, np.ndarray], *, gamma: float = 0.99, max_steps: int = 1000) -> np.ndarray:
    """The discounted vector return of the greedy policy of `q` (first best action) from `reset()`."""
    obs, _ = env.reset(seed=0)
    total: np.ndarray | None = None
    discount = 1.0
    for _ in range(max_steps):
        values = q.get(_key(obs))
        action = int(np.argmax(values)) if values is not None else 0
        obs, reward, terminated, truncated, _ = env.step(action)
        r = np.atleast_1d(np.asarray(reward, dtype=np.float64))
        total = discount * r if total is None else total + discount * r
        discount *= gamma
        if terminated or truncated:
            break
    if total is None:
        raise ConfigError("max_steps must be >= 1")
    return total


def linear_support(solve: Callable[[np.ndarray], np.ndarray], *, max_solves: int = 50, tol: float = 1e-6) -> list[np.ndarray]:
    """The convex coverage set of a two-objective problem by Optimistic Linear Support.

    Args:
        solve: weights `(2,)` on the simplex -> the value vector of a policy optimal for them.
        max_solves: bound on calls of `solve`.
        tol: how much better than the known vectors a new one must be at a corner weight.

    Returns:
        The distinct value vectors found, sorted on the first objective.
    """
    found = [solve(np.array([0.0, 1.0])), solve(np.array([1.0, 0.0]))]
    if any(np.shape(v) != (2,) for v in found):
        raise ConfigError(f"linear_support sweeps two objectives; solve returned vectors of shape {np.shape(found[0])}")
    solves = 2
    pending = [(found[0], found[1])]
    while pending and solves < max_solves:
        a, b = pending.pop()
        w = _corner(a, b)
        if w is None:
            continue
        v = solve(w)
        solves += 1
        if w @ v > max(w @ a, w @ b) + tol:
            found.append(v)
            pending += [(a, v), (v, b)]
    unique: list[np.ndarray] = []
    for v in sorted(found, key=lambda x: (x[0], x[1])):
        if not any(np.allclose(v, u, atol=1e-6) for u in unique):
            unique.append(v)
    return unique


def _corner(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """The weight `(λ, 1-λ)` at which `a` and `b` score the same, if it is inside the simplex."""
    d0, d1 = a[0] - b[0], a[1] - b[1]
    if np.isclose(d0 - d1, 0.0):
        return None
    lam = d1 / (d1 - d0)
    return np.array([lam, 1.0 - lam]) if 0.0 < lam < 1.0 else None


def q_learning_front(
    make_env: Callable[[], gym.Env[Any, Any]],
    *,
    gamma: float = 0.99,
    episodes: int = 300,
    max_solves: int = 50,
    optimism: float | None = None,
) -> list[np.ndarray]:
    """The front a tabular Q-learner finds with an Optimistic Linear Support weight sweep
    (`linear_support` over `tabular_q` and `greedy_return` on a two-objective env)."""

    def solve(w: np.ndarray) -> np.ndarray:
        env = make_env()
        try:
            return greedy_return(env, tabular_q(env, w, episodes=episodes, gamma=gamma, optimism=optimism), gamma=gamma)
        finally:
            env.close()

    return linear_support(solve, max_solves=max_solves)


class DiscountAggregator:
    """Pitis's non-Markovian aggregation of objectives with their own discounts.

    The aggregation's state is one factor per objective (Pitis 2023, Section 4.2): `factors`
    start at 1 with each episode; each step returns `R_t = Σ_i w_i y_i(t) r_i(t)` and then sets
    `y_i(t+1) = y_i(t) · γ_i / γ_Σ`. Keep one aggregator per episode (`reset` at its start)
    and give the learner `factors` as part of its observation: the reward is Markovian in
    (observation, factors), not in the observation.

    `history` is the paper's "historical discounting" (Section 5.2), `η` in
    `y_i ← η · y_i · γ_i / γ_Σ + (1 - η)`: an exponential moving average toward the starting
    preferences (the paper's `w_i^n`, here constant, so its weight `w_i · y_i` moves toward
    `w_i`), so the first step's preferences stop ruling forever. `η = 1` (the default) is the
    dynamically consistent aggregation; `η = 0` makes every step decide on its own.

    Args:
        weights: each objective's weight `w_i` at the start of an episode.
        gammas: each objective's own discount `γ_i`.
        gamma: the discount `γ_Σ` of the aggregated return (default the largest `gammas`).
        history: `η` in [0, 1].
    """

    def __init__(self, weights: Sequence[float], gammas: Sequence[float], gamma: float | None = None, *, history: float = 1.0):
        self.initial = np.asarray(weights, dtype=np.float64)
        self.gammas = np.asarray(gammas, dtype=np.float64)
        if self.initial.shape != self.gammas.shape or self.initial.ndim != 1:
            raise ConfigError(f"weights and gammas need one entry per objective, got {self.initial.shape} and {self.gammas.shape}")
        if not ((self.gammas > 0) & (self.gammas <= 1)).all():
            raise ConfigError(f"every discount must be in (0, 1], got {self.gammas.tolist()}")
        self.gamma = float(self.gammas.max() if gamma is None else gamma)
        if not 0 < self.gamma <= 1:
            raise ConfigError(f"gamma must be in (0, 1], got {self.gamma}")
        if not 0 <= history <= 1:
            raise ConfigError(f"history (η) must be in [0, 1], got {history}")
        self.history = float(history)
        self.factors = np.ones_like(self.initial)

    @property
    def state(self) -> np.ndarray:
        """The current aggregation weights `w_i · y_i`."""
        return self.initial * self.factors

    def reset(self) -> np.ndarray:
        """Back to factors of 1 (a new episode); returns the starting weights."""
        self.factors = np.ones_like(self.initial)
        return self.state

    def __call__(self, vector: Sequence[SupportsFloat] | np.ndarray) -> float:
        """The aggregated reward of one step's vector; advances the factors."""
        r = np.asarray(vector, dtype=np.float64)
        if r.shape != self.factors.shape:
            raise ConfigError(f"the reward vector has shape {r.shape}, the aggregator {self.factors.shape}")
        out = float(self.state @ r)
        self.factors = self.history * self.factors * self.gammas / self.gamma + (1.0 - self.history)
        return out


class HeterogeneousDiscounts(gym.Wrapper[Any, Any, Any, Any]):
    """A vector-reward env as a scalar-reward env whose objectives keep their own discounts
    (Pitis 2023's state expansion, `DiscountAggregator`): the reward is `R_t` and the
    observation is `(obs, factors)`, the env's observation with the aggregator's current
    factors `y_i` (rounded to 12 digits, so a tabular learner can key on them), which makes
    `R_t` Markovian again. Train with discount `gamma` (the aggregator's `γ_Σ`).

    Args:
        env: an env whose `step` reward is a vector (`VectorReward`, an MO-Gymnasium env).
        weights, gammas, gamma, history: as `DiscountAggregator`.
    """

    def __init__(self, env: gym.Env[Any, Any], weights: Sequence[float], gammas: Sequence[float], gamma: float | None = None,
                 *, history: float = 1.0):  # fmt: skip
        super().__init__(env)
        self.aggregator = DiscountAggregator(weights, gammas, gamma, history=history)
        self.gamma = self.aggregator.gamma
        k = self.aggregator.state.shape[0]
        self.observation_space = gym.spaces.Tuple((env.observation_space, gym.spaces.Box(0.0, np.inf, (k,), np.float64)))

    def _observe(self, obs: Any) -> tuple[Any, tuple[float, ...]]:
        return obs, tuple(round(float(y), 12) for y in self.aggregator.factors)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.aggregator.reset()
        return self._observe(obs), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        aggregated = self.aggregator(np.atleast_1d(np.asarray(reward, dtype=np.float64)))
        return self._observe(obs), aggregated, terminated, truncated, {**info, "vector_reward": reward}
