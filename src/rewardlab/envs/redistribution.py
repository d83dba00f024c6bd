"""Return decomposition and reward smoothing for delayed rewards.

- `uniform_redistribution`: spread each episode's return evenly over its steps.
- `LeastSquaresRedistribution`: learn per-step rewards r_t = phi(s_t, a_t) . w such that
  sum_t r_t matches the episodic return across episodes (linear least squares, the linear case
  of RUDDER-style return decomposition, Arjona-Medina et al., NeurIPS 2019), then correct each
  episode so its redistributed rewards sum exactly to its return.
- `ModelRedistribution`: the same with a small torch MLP for r_t = f(phi_t).
- `smooth_rewards`: spread every reward over a window of neighbouring steps inside its episode
  with renormalised weights, so the episode sum is preserved exactly.
- `DelayedChain`: a chain MDP whose reward only arrives at the end of the episode, and
  `chain_q_learning`, which shows learned redistribution speeding up tabular Q-learning.

Every function preserves each episode's return; property tests check that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rewardlab._seeding import torch_seeded
from rewardlab.errors import SpecError

__all__ = [
    "DelayedChain",
    "LeastSquaresRedistribution",
    "ModelRedistribution",
    "chain_q_learning",
    "smooth_rewards",
    "uniform_redistribution",
]


def uniform_redistribution(rewards: np.ndarray) -> np.ndarray:
    """Each step gets the episode's return divided by its length. `rewards` (T,) -> (T,)."""
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1 or len(r) == 0:
        raise SpecError(f"expected a non-empty 1-D episode of rewards, got shape {r.shape}")
    return np.full(len(r), r.sum() / len(r))


def smooth_rewards(rewards: np.ndarray, *, window: int = 2, kernel: str = "triangular") -> np.ndarray:
    """Spread each reward over steps t-window..t+window of the same episode.

    Weights are renormalised per source step over the part of the window inside the episode,
    so `smooth_rewards(r).sum() == r.sum()` exactly (up to float rounding).
    """
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1:
        raise SpecError(f"expected a 1-D episode of rewards, got shape {r.shape}")
    if window < 0:
        raise SpecError(f"window must be >= 0, got {window}")
    offsets = np.arange(-window, window + 1)
    if kernel == "triangular":
        w = (window + 1 - np.abs(offsets)).astype(float)
    elif kernel == "uniform":
        w = np.ones(len(offsets))
    else:
        raise SpecError(f"unknown kernel {kernel!r}; use 'triangular' or 'uniform'")
    T = len(r)
    out = np.zeros(T)
    for t in range(T):
        idx = t + offsets
        inside = (idx >= 0) & (idx < T)
        ww = w[inside] / w[inside].sum()
        out[idx[inside]] += r[t] * ww
    return out


@dataclass
class LeastSquaresRedistribution:
    """Linear return decomposition fitted across episodes.

    `fit(features, returns)` with features a list of (T_i, F) arrays (one per episode) solves
    min_w sum_i (sum_t phi_it . w - R_i)^2 + l2 |w|^2. `redistribute(features, ret)` gives
    per-step rewards phi_t . w plus a uniform correction so they sum to `ret` exactly.
    """

    l2: float = 1e-3
    weights: np.ndarray | None = None

    def fit(self, features: Sequence[np.ndarray], returns: Sequence[float]) -> LeastSquaresRedistribution:
        if len(features) != len(returns) or not features:
            raise SpecError(f"need one return per episode, got {len(features)} episodes and {len(returns)} returns")
        X = np.stack([np.asarray(f, dtype=float).sum(axis=0) for f in features])  # (N, F) summed features
        y = np.asarray(returns, dtype=float)
        F = X.shape[1]
        self.weights = np.linalg.solve(X.T @ X + self.l2 * np.eye(F), X.T @ y)
        return self

    def redistribute(self, features: np.ndarray, episode_return: float) -> np.ndarray:
        if self.weights is None:
            raise SpecError("call fit() before redistribute()")
        r = np.asarray(features, dtype=float) @ self.weights
        return r + (episode_return - r.sum()) / len(r)  # type: ignore[no-any-return]


class ModelRedistribution:
    """Return decomposition with a small torch MLP: r_t = f(phi_t), trained so that
    sum_t f(phi_t) matches each episode's return (squared error, Adam); `redistribute` adds the
    same uniform correction as `LeastSquaresRedistribution`, so episode sums are exact.

    Args:
        n_features: size of phi_t.
        hidden: width of the 2-layer MLP.
        epochs, lr: full-batch Adam steps and learning rate per `fit`.
        seed: torch seed.
    """

    def __init__(self, n_features: int, *, hidden: int = 32, epochs: int = 300, lr: float = 1e-2, seed: int = 0):
        import torch
        from torch import nn

        self.torch = torch
        with torch_seeded(seed):  # seeded initial weights without resetting the caller's generator
            self.net = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.epochs, self.lr = epochs, lr

    def fit(self, features: Sequence[np.ndarray], returns: Sequence[float]) -> ModelRedistribution:
        if len(features) != len(returns) or not features:
            raise SpecError(f"need one return per episode, got {len(features)} episodes and {len(returns)} returns")
        torch = self.torch
        lengths = [len(f) for f in features]
        x = torch.as_tensor(np.concatenate([np.asarray(f, dtype=np.float32) for f in features]))
        episode = torch.as_tensor(np.repeat(np.arange(len(features)), lengths))
        y = torch.as_tensor(np.asarray(returns, dtype=np.float32))
        opt = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        for _ in range(self.epochs):
            opt.zero_grad()
            per_step = self.net(x).squeeze(-1)
            sums = torch.zeros(len(features)).index_add(0, episode, per_step)  # sum_t f(phi_t) per episode
            ((sums - y) ** 2).mean().backward()
            opt.step()
        return self

    def step_rewards(self, features: np.ndarray) -> np.ndarray:
        """f(phi_t) for every step, without the sum-preserving correction."""
        with self.torch.no_grad():
            return self.net(self.torch.as_tensor(np.asarray(features, dtype=np.float32))).squeeze(-1).numpy().astype(float)  # type: ignore[no-any-return]

    def redistribute(self, features: np.ndarray, episode_return: float) -> np.ndarray:
        r = self.step_rewards(features)
        return r + (episode_return - r.sum()) / len(r)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class DelayedChain:
    """A chain of `n` states; action 1 moves right, action 0 moves left (to 0 at the left end).

    Each step right earns a hidden reward of 1; the agent sees nothing until the episode ends
    after `horizon` steps, when it receives the sum (a fully delayed reward).
    """

    n: int = 10
    horizon: int = 20

    def step(self, s: int, a: int) -> tuple[int, float]:
        """Next state and the *hidden* immediate reward."""
        if a == 1:
            return min(s + 1, self.n - 1), 1.0
        return max(s - 1, 0), 0.0


def chain_q_learning(
    chain: DelayedChain,
    *,
    episodes: int = 200,
    mode: str = "delayed",
    seed: int = 0,
    lr: float = 0.5,
    epsilon: float = 0.2,
    gamma: float = 0.5,  # short horizon on purpose: a delayed reward must be redistributed to count
) -> np.ndarray:
    """Tabular one-step Q-learning on the delayed chain; returns the (hidden) return per episode.

    After each episode the agent turns its observed rewards into per-step rewards by `mode`
    and replays the episode forward with one-step Q-learning updates:

    - `"delayed"`: the return at the last step, 0 elsewhere (credit travels back one step per
      replay, so learning is slow);
    - `"uniform"`: `uniform_redistribution` (every action gets the same share: no credit);
    - `"least_squares"`: `LeastSquaresRedistribution` refitted on all episodes so far, with
      one-hot (state, action) features (credit lands on the actions that earned it).
    """
    if mode not in ("delayed", "uniform", "least_squares"):
        raise SpecError(f"unknown mode {mode!r}; use delayed, uniform or least_squares")
    rng = np.random.default_rng(seed)
    Q = np.zeros((chain.n, 2))
    out = np.zeros(episodes)
    feats: list[np.ndarray] = []
    returns: list[float] = []
    model = LeastSquaresRedistribution()
    for ep in range(episodes):
        s, traj, total = 0, [], 0.0
        for _ in range(chain.horizon):
            a = int(rng.integers(2)) if rng.random() < epsilon else int(rng.choice(np.flatnonzero(Q[s] == Q[s].max())))
            s2, hidden = chain.step(s, a)
            traj.append((s, a, s2))
            total += hidden
            s = s2
        delayed = np.zeros(chain.horizon)
        delayed[-1] = total
        phi = np.zeros((chain.horizon, chain.n * 2))
        phi[np.arange(chain.horizon), [s * 2 + a for s, a, _ in traj]] = 1.0
        feats.append(phi)
        returns.append(total)
        if mode == "delayed":
            rewards = delayed
        elif mode == "uniform":
            rewards = uniform_redistribution(delayed)
        else:
            rewards = model.fit(feats, returns).redistribute(phi, total)
        for t, (s, a, s2) in enumerate(traj):
            last = t == chain.horizon - 1
            Q[s, a] += lr * (rewards[t] + (0.0 if last else gamma * Q[s2].max()) - Q[s, a])
        out[ep] = total
    return out
