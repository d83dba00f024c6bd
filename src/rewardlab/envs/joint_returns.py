"""The joint distribution of the returns of several reward sources, learned by distributional TD.

MD3QN (Zhang et al. 2021, "Distributional Reinforcement Learning for Multi-Dimensional Reward
Functions", NeurIPS) models the *joint* return `Z(s) ∈ R^K` of K reward sources as N particles
and fits them to the distributional Bellman target `r + γ Z(s')` by minimising the maximum mean
discrepancy between the particle sets:

    MMD²(Z, Y) = mean_jj' k(z_j, z_j') - 2 mean_jl k(z_j, y_l) + mean_ll' k(y_l, y_l')

with a kernel `k` (here a sum of Gaussian kernels of several bandwidths, so no single length
scale has to fit every state's return spread). Learning the joint distribution (not one
marginal per source) keeps what a sum or a per-source model loses: how the sources co-vary, so
the correlation of, say, a task reward and a cost can be read off the particles.

`JointReturns` is the tabular form: particles per state, one SGD step on the MMD per batch of
transitions from a state (numpy; the target's own term does not depend on the particles and is
dropped). The cross term is linear in the target distribution, so a step on sampled targets is
an unbiased step towards the whole target distribution.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from rewardlab.errors import ConfigError

__all__ = ["JointReturns", "mmd_squared"]


def _kernel(a: np.ndarray, b: np.ndarray, bandwidths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`k(a_j, b_l)` summed over bandwidths `(N, M)`, and `Σ_h k_h / h²` `(N, M)` for its gradient."""
    d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=-1)
    per = np.exp(-d2[None] / (2.0 * bandwidths[:, None, None] ** 2))  # (H, N, M)
    return per.sum(axis=0), (per / bandwidths[:, None, None] ** 2).sum(axis=0)


def mmd_squared(x: np.ndarray, y: np.ndarray, bandwidths: Sequence[float] = (0.5, 1.0, 2.0)) -> float:
    """The (biased, V-statistic) squared MMD between particle sets `x` `(N, K)` and `y` `(M, K)`."""
    h = np.asarray(bandwidths, dtype=np.float64)
    kxx, _ = _kernel(x, x, h)
    kxy, _ = _kernel(x, y, h)
    kyy, _ = _kernel(y, y, h)
    return float(kxx.mean() - 2.0 * kxy.mean() + kyy.mean())


class JointReturns:
    """Tabular MD3QN-style particles of the joint return of K reward sources, per state.

    Args:
        sources: K, the length of each reward vector.
        particles: N, particles per state.
        gamma: discount.
        lr: SGD step on the particles.
        bandwidths: Gaussian kernel bandwidths (MD3QN sums several).
        seed: the particles' initial spread.
    """

    def __init__(
        self,
        sources: int,
        *,
        particles: int = 64,
        gamma: float = 0.9,
        lr: float = 0.5,
        bandwidths: Sequence[float] = (0.5, 1.0, 2.0, 4.0),
        seed: int = 0,
    ):
        if sources < 1 or particles < 2:
            raise ConfigError(f"need sources >= 1 and particles >= 2, got {sources} and {particles}")
        if not 0 <= gamma <= 1 or not lr > 0:
            raise ConfigError(f"need 0 <= gamma <= 1 and lr > 0, got {gamma} and {lr}")
        self.k, self.n, self.gamma, self.lr = sources, particles, gamma, lr
        self.bandwidths = np.asarray(bandwidths, dtype=np.float64)
        if self.bandwidths.ndim != 1 or not (self.bandwidths > 0).all():
            raise ConfigError(f"bandwidths must be positive numbers, got {list(bandwidths)}")
        self._rng = np.random.default_rng(seed)
        self.table: dict[Hashable, np.ndarray] = {}

    def particles(self, state: Hashable) -> np.ndarray:
        """The `(N, K)` particles of `state` (created on first use around 0)."""
        if state not in self.table:
            self.table[state] = self._rng.normal(scale=0.1, size=(self.n, self.k))
        return self.table[state]

    def update(
        self,
        state: Hashable,
        rewards: Sequence[Sequence[float]] | np.ndarray,
        next_states: Sequence[Hashable | None],
    ) -> None:
        """One MMD step of `state`'s particles towards the targets of a batch of transitions
        from it: reward `rewards[b]` and next state `next_states[b]` (None: terminal).

        Each target sample is `r_b + γ z'` with `z'` one particle of `next_states[b]` drawn at
        random: a sample of the same distribution as MD3QN's `r + γ Z(s')`, at O(N·B) cost
        instead of O(N·B·N).
        """
        r = np.asarray(rewards, dtype=np.float64)
        if r.ndim != 2 or r.shape[1] != self.k or r.shape[0] != len(next_states) or r.shape[0] == 0:
            raise ConfigError(f"rewards must be (batch, {self.k}) with one next state per row, got shape {r.shape} and {len(next_states)} next states")
        z = self.particles(state)
        target = r.copy()
        for b, nxt in enumerate(next_states):
            if nxt is not None:
                target[b] += self.gamma * self.particles(nxt)[self._rng.integers(self.n)]
        # d MMD² / d z_j = (2/N²) Σ_j' ∂k(z_j, z_j') - (2/(N M)) Σ_l ∂k(z_j, y_l), ∂k(a, b)/∂a = -k (a - b) / h²
        _, gzz = _kernel(z, z, self.bandwidths)
        _, gzy = _kernel(z, target, self.bandwidths)
        self_term = -(gzz[:, :, None] * (z[:, None, :] - z[None, :, :])).sum(axis=1) * 2.0 / self.n**2
        cross = -(gzy[:, :, None] * (z[:, None, :] - target[None, :, :])).sum(axis=1) * 2.0 / (self.n * target.shape[0])
        self.table[state] = z - self.lr * self.n * (self_term - cross)  # a step per particle: scale by N

    def mean(self, state: Hashable) -> np.ndarray:
        """The mean joint return of `state` `(K,)`."""
        return np.asarray(self.particles(state).mean(axis=0))

    def correlation(self, state: Hashable, i: int = 0, j: int = 1) -> float:
        """The correlation of sources `i` and `j` in `state`'s return distribution."""
        z = self.particles(state)
        return float(np.corrcoef(z[:, i], z[:, j])[0, 1])
