"""Per-group normalisation of rewards: z-score, mean-only, rank, min-max, HERO, GDPO-style.

Shapes: `rewards` is `(groups, samples)` — one row per prompt, one column per sampled response —
and `mask` (same shape, bool, default all True) marks which entries hold a score. Entries with
`mask=False` (errors, skips) are left out of every statistic and come back as exactly 0, so an
unscorable response never moves the policy and never shifts its group's baseline.

Degenerate groups (documented, tested):
    * a group with one valid entry, or all valid entries equal, carries no signal: `zscore` and
      `center` give exactly 0 (not a rounding residue), `rank` and `minmax` give 0.5;
    * NaN/inf in a valid entry raises `NonFiniteError` naming the argument.

All arithmetic is float64; torch tensors come back as torch tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import (
    EPS,
    F64,
    check_finite,
    group_stats,
    grouped,
    like,
    to_mask,
    to_numpy,
)

__all__ = ["center", "hero", "minmax", "normalize_then_sum", "rank", "zscore"]


def zscore(rewards: Any, mask: Any = None, *, eps: float = EPS, ddof: int = 1) -> Any:
    """`(r - mean_g) / (std_g + eps)` within each group; constant groups give exactly 0.

    Args:
        rewards: `(groups, samples)` scores.
        mask: `(groups, samples)` bool, False for entries without a score.
        eps: added to the std before dividing (explicit, never hidden).
        ddof: 1 for the unbiased std (what `torch.std` in TRL and verl uses), 0 for population.
    """
    values, valid = grouped(rewards, mask)
    stats = group_stats(values, valid, ddof=ddof)
    with np.errstate(divide="ignore", invalid="ignore"):  # eps=0 on a constant group: masked below
        out = (values - stats.mean) / (stats.std + eps)
    return like(np.where(valid & ~stats.constant, out, 0.0), rewards)


def center(rewards: Any, mask: Any = None) -> Any:
    """`r - mean_g` within each group (mean-only normalisation); constant groups give 0."""
    values, valid = grouped(rewards, mask)
    stats = group_stats(values, valid, ddof=0)
    return like(np.where(valid & ~stats.constant, values - stats.mean, 0.0), rewards)


def rank(rewards: Any, mask: Any = None) -> Any:
    """Average rank within each group scaled to [0, 1] (ties share their mean rank).

    Rank normalisation ignores the scale of a reward model entirely, which is what makes it
    robust to outliers. Constant groups give 0.5 everywhere; masked entries give 0.
    """
    values, valid = grouped(rewards, mask)
    x = np.where(valid, values, 0.0)
    pair = valid[:, None, :]  # (groups, 1, samples): compare each entry with every valid other
    below = ((x[:, None, :] < x[:, :, None]) & pair).sum(axis=2)
    equal = ((x[:, None, :] == x[:, :, None]) & pair).sum(axis=2)  # includes itself
    avg_rank = below + (equal - 1) / 2.0  # 0-based average rank
    count = valid.sum(axis=1, keepdims=True)
    scaled = np.where(count > 1, avg_rank / np.maximum(count - 1, 1), 0.5)
    stats = group_stats(values, valid)
    scaled = np.where(stats.constant, 0.5, scaled)
    return like(np.where(valid, scaled, 0.0), rewards)


def minmax(rewards: Any, mask: Any = None) -> Any:
    """`(r - min_g) / (max_g - min_g)` within each group; constant groups give 0.5."""
    values, valid = grouped(rewards, mask)
    return like(_minmax(values, valid), rewards)


def _minmax(values: F64, valid: np.ndarray) -> F64:
    stats = group_stats(values, valid)
    lo, span = stats.low, stats.high - stats.low
    degenerate = ~(span > 0)  # also covers groups with no valid entry (inf - inf = nan)
    out = np.where(degenerate, 0.5, (values - np.where(degenerate, 0.0, lo)) / np.where(degenerate, 1.0, span))
    return np.where(valid, out, 0.0)


def hero(
    correct: Any,
    scores: Any,
    mask: Any = None,
    *,
    alpha: float = 0.1,
    beta: float = 0.1,
) -> Any:
    """HERO stratified normalisation: model scores min-max-normalised inside verifier strata.

    HERO (Hybrid Ensemble Reward Optimization; "Hybrid Reinforcement: When Reward Is Sparse,
    It's Better to Be Dense", Meta FAIR 2025), stratified normalisation:

        r̂ = -α + 2α · (s - min s) / (max s - min s)           if the verifier says wrong
        r̂ = (1 - β) + 2β · (s - min s) / (max s - min s)      if the verifier says correct

    with min/max taken over the same stratum (correct or wrong) of the same group. Wrong
    responses land in [-α, α], correct ones in [1-β, 1+β]; `α + β < 1` makes the ranges
    disjoint, so every correct response ranks above every incorrect one. A stratum with one
    member or equal scores sits at its midpoint (0 or 1): the verifier reward itself.

    Args:
        correct: `(groups, samples)` verifier outcome (bool or 0/1).
        scores: `(groups, samples)` reward-model scores.
        mask: valid entries; masked entries come back as 0.
        alpha: half-width of the band for wrong responses.
        beta: half-width of the band for correct responses.
    """
    if not (alpha >= 0 and beta >= 0 and alpha + beta < 1):
        raise ArrayError("alpha/beta", f"need alpha, beta >= 0 and alpha + beta < 1, got {alpha}, {beta}")
    values, valid = grouped(scores, mask, name="scores")
    ok = to_mask(correct, "correct", values.shape)
    low = _minmax(values, valid & ~ok)  # wrong stratum -> [0, 1]
    high = _minmax(values, valid & ok)
    out = np.where(ok, (1.0 - beta) + 2.0 * beta * high, -alpha + 2.0 * alpha * low)
    return like(np.where(valid, out, 0.0), scores, correct)


def normalize_then_sum(
    components: Any,
    weights: Sequence[float] | None = None,
    mask: Any = None,
    *,
    eps: float = EPS,
    ddof: int = 1,
) -> Any:
    """GDPO-style decoupled normalisation: z-score each reward component per group, then sum.

    GDPO (Liu et al. 2026, "Group reward-Decoupled Normalization Policy Optimization",
    arXiv:2601.05242): summing components *before* normalising collapses distinct reward
    combinations (format 1 + correct 0 vs format 0 + correct 1) into the same advantage;
    normalising each component inside the group first keeps them apart:

        r̃_i = Σ_k w_k · (r_{i,k} - mean_g(r_k)) / (std_g(r_k) + eps)

    A component that is constant inside a group contributes exactly 0 to that group.

    Args:
        components: `(groups, samples, components)` scores.
        weights: one weight per component (default all 1).
        mask: `(groups, samples)` valid entries (a response is scored on all components or none).
    """
    values = to_numpy(components, "components", ndim=3)
    g, s, k = values.shape
    valid = to_mask(mask, "mask", (g, s))
    check_finite(values, "components", np.repeat(valid[:, :, None], k, axis=2))
    w = np.ones(k) if weights is None else to_numpy(weights, "weights", ndim=1)
    if w.shape != (k,):
        raise ArrayError("weights", f"need one weight per component ({k}), got {w.shape[0]}")
    check_finite(w, "weights")
    total = np.zeros((g, s))
    for j in range(k):  # k is small (a handful of reward functions); each step is vectorised
        stats = group_stats(values[:, :, j], valid, ddof=ddof)
        with np.errstate(divide="ignore", invalid="ignore"):  # constant groups are masked below
            z = (values[:, :, j] - stats.mean) / (stats.std + eps)
        total += w[j] * np.where(stats.constant, 0.0, z)
    return like(np.where(valid, total, 0.0), components)
