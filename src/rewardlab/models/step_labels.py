"""Step-label estimators: label reasoning steps without humans, from sampled continuations.

The common input: for each step t of a solution (t = 0..T-1), k continuations were sampled from
the prefix ending at step t and `successes[t]` of them reached a correct final answer. Arrays
are numpy, shape (T,) per solution (use them row by row, or broadcast over (N, T)).

These are pure functions (no model, no sampling); `prm.train_prm` trains on what they return.
`BUFFER` (-1) marks a step deliberately left unlabelled: `prm` masks it out of the loss.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import ConfigError

__all__ = [
    "BUFFER",
    "beta_binomial_belief",
    "consensus_filter",
    "mc_hard_labels",
    "mc_soft_labels",
    "outcome_pseudo_labels",
    "progress_labels",
    "soft_values",
    "td_lambda_targets",
]

BUFFER = -1.0
F64 = NDArray[np.float64]


def _counts(successes: Any, totals: Any) -> tuple[F64, F64]:
    s = np.asarray(successes, dtype=np.float64)
    n = np.broadcast_to(np.asarray(totals, dtype=np.float64), s.shape)
    if (n <= 0).any() or (s < 0).any() or (s > n).any():
        raise ConfigError("need 0 <= successes <= totals and totals >= 1 for every step")
    return s, n


def mc_hard_labels(successes: Any, totals: Any) -> F64:
    """1 if any continuation from the step succeeds, else 0: Math-Shepherd's hard estimate
    (Wang et al. 2024, "Math-Shepherd", eq. 1): a step is good if it *can* still reach the answer."""
    s, _ = _counts(successes, totals)
    return (s > 0).astype(np.float64)


def mc_soft_labels(successes: Any, totals: Any) -> F64:
    """The share of continuations that succeed: Math-Shepherd's soft estimate (eq. 2)."""
    s, n = _counts(successes, totals)
    return s / n


def beta_binomial_belief(successes: Any, totals: Any, *, prior: tuple[float, float] = (1.0, 1.0)) -> tuple[F64, F64]:
    """Posterior mean and reliability of the step's success probability under a Beta prior.

    With prior Beta(a, b) and s successes of n, the posterior is Beta(a + s, b + n − s)
    (conjugacy); its mean is (a + s)/(a + b + n). Reliability is 1 − sd_post/sd_prior in [0, 1):
    0 for no evidence, towards 1 as n grows — use it to weight soft labels (few rollouts, low
    weight) instead of trusting 1/2 from two samples as much as 50/100.
    """
    a, b = prior
    if a <= 0 or b <= 0:
        raise ConfigError(f"Beta prior parameters must be > 0, got {prior}")
    s, n = _counts(successes, totals)
    pa, pb = a + s, b + n - s
    mean = pa / (pa + pb)
    var_post = pa * pb / ((pa + pb) ** 2 * (pa + pb + 1))
    var_prior = a * b / ((a + b) ** 2 * (a + b + 1))
    return mean, 1.0 - np.sqrt(var_post / var_prior)


def td_lambda_targets(values: Any, outcome: float, *, lam: float = 0.9, gamma: float = 1.0) -> F64:
    """λ-return targets for step values (Sutton & Barto 2018, eq. 12.3, recursive form).

    `values[t]` estimates the success probability after step t (e.g. MC soft labels); the final
    `outcome` (1 correct, 0 wrong) is the value after the last step. Backwards:

        G_{T-1} = outcome,   G_t = γ·((1 − λ)·V_{t+1} + λ·G_{t+1})

    λ = 1 gives the outcome for every step (pure Monte Carlo); λ = 0 gives one-step bootstrap
    targets V_{t+1}.
    """
    if not 0.0 <= lam <= 1.0 or not 0.0 < gamma <= 1.0:
        raise ConfigError(f"need 0 <= lam <= 1 and 0 < gamma <= 1, got lam={lam}, gamma={gamma}")
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise ConfigError("values must be a non-empty 1-D array of step values")
    g = np.empty_like(v)
    g[-1] = outcome
    for t in range(len(v) - 2, -1, -1):
        g[t] = gamma * ((1.0 - lam) * v[t + 1] + lam * g[t + 1])
    return g


def soft_values(outcomes: Any, *, beta: float = 1.0) -> F64:
    """Entropy-regularised step value: β·log mean_k exp(r_k/β) over sampled continuation
    outcomes r_k (Zhang et al. 2024, "Entropy-Regularized Process Reward Model", eq. 6).

    β → 0 gives the max (optimistic, like the hard label); β → ∞ the mean (the soft label).

    Args:
        outcomes: (..., K) rewards of the K continuations of each step.
    """
    if beta <= 0:
        raise ConfigError(f"beta must be > 0, got {beta}")
    r = np.asarray(outcomes, dtype=np.float64) / beta
    top = r.max(axis=-1, keepdims=True)  # log-mean-exp, shifted for stability
    return np.asarray(beta * (top[..., 0] + np.log(np.exp(r - top).mean(axis=-1))), dtype=np.float64)


def progress_labels(values: Any, *, initial: float) -> F64:
    """Progress of each step: value after it minus value before it (Setlur et al. 2024,
    "Rewarding Progress", process advantage A_t = V_t − V_{t−1}); `initial` is V before step 0
    (the success rate from the bare prompt)."""
    v = np.asarray(values, dtype=np.float64)
    return np.diff(v, prepend=initial)


def outcome_pseudo_labels(outcome: bool, n_steps: int, *, values: Any = None, margin: float = 0.5) -> F64:
    """Every step takes the final outcome as its label, except steps the evidence contradicts.

    Outcome supervision alone labels the good early steps of a failed solution as bad. When
    step `values` (e.g. MC soft labels) are given, a step whose value is further than `margin`
    from the outcome goes to the `BUFFER` class (left out of the loss) rather than being taught
    the wrong label.
    """
    labels = np.full(n_steps, 1.0 if outcome else 0.0)
    if values is not None:
        v = np.asarray(values, dtype=np.float64)
        if v.shape != (n_steps,):
            raise ConfigError(f"values must have shape ({n_steps},), got {v.shape}")
        labels[np.abs(v - labels) > margin] = BUFFER
    return labels


def consensus_filter(*labels: Any, threshold: float = 0.5) -> NDArray[np.bool_]:
    """Steps on which every estimator agrees after thresholding at `threshold` (Zhang et al.
    2025, "The Lessons of Developing Process Reward Models", consensus filtering of MC labels
    against a judge). Returns a mask; train only on the True steps. `BUFFER` never agrees."""
    if len(labels) < 2:
        raise ConfigError("consensus needs at least two label arrays")
    arrays = [np.asarray(x, dtype=np.float64) for x in labels]
    if len({a.shape for a in arrays}) != 1:
        raise ConfigError(f"label arrays differ in shape: {[a.shape for a in arrays]}")
    hard = [a >= threshold for a in arrays]
    agree = np.logical_and.reduce([h == hard[0] for h in hard])
    return np.asarray(agree & np.logical_and.reduce([a != BUFFER for a in arrays]), dtype=np.bool_)
