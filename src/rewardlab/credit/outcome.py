"""Outcome-level advantage estimators: one scalar reward per response in, one advantage out.

Shapes: `rewards` is `(groups, samples)`: row g holds the rewards of the responses sampled for
prompt g. `mask` (same shape, bool) marks entries that hold a score; masked entries (errors,
skips) are excluded from every baseline and statistic and get an advantage of exactly 0.

Documented edge cases, the same for every estimator here:
    * a group with a single valid response has no baseline: advantage 0;
    * a group whose valid rewards are all equal gives exactly 0 (checked with max == min, so no
      float residue such as 1e-17 survives to be divided by a tiny std) — except
      `reinforce_pp(baseline="none")`, whose baseline is the batch mean by design, and
      `reinforce_pp`/`gdpo` with `token_mask`, which subtract the token-weighted batch mean;
    * NaN/inf in a valid entry raises `NonFiniteError`; never propagated;
    * an all-masked batch gives all zeros (no signal, no NaN).

Use `rewardlab.credit.to_tokens` to spread an advantage over a response's tokens.

Checked against verl's, TRL's and OpenRLHF's own advantage code (tests/credit/
test_credit_peers_*.py); where a trainer deliberately differs (a group of one, eps placement,
whitening), docs/credit.md "Checked against the trainers' own code" states the relation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from rewardlab.core.choices import check_choices
from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import (
    EPS,
    F64,
    Bool,
    group_stats,
    grouped,
    like,
    to_mask,
    to_numpy,
    token_mask_of,
)
from rewardlab.shape.normalize import normalize_then_sum

__all__ = [
    "a_hpo",
    "dr_grpo",
    "gdpo",
    "grpo",
    "hpo",
    "reinforce_pp",
    "rloo",
]

Scale = Literal["group", "batch", "none"]


def _batch_std(x: F64, valid: Bool, ddof: int) -> float:
    """The std of every valid entry of the batch: `group_stats` over the batch as one group."""
    kept = x[valid].reshape(1, -1)
    if kept.size <= ddof:
        return 0.0
    return float(group_stats(kept, np.ones_like(kept, dtype=bool), ddof=ddof).std[0, 0])


def _token_counts(token_mask: Any, shape: tuple[int, ...]) -> F64:
    """Tokens per response, `(groups, samples)`, from a `(groups · samples, tokens)` mask.

    Rows of `token_mask` follow the responses row-major, as `to_tokens` spreads them.
    """
    tokens = token_mask_of(token_mask)
    if tokens.shape[0] != int(np.prod(shape)):
        raise ArrayError(
            "token_mask",
            f"has {tokens.shape[0]} rows, but the rewards hold {int(np.prod(shape))} responses "
            f"{shape}; give one row per response, row-major",
        )
    counts: F64 = tokens.sum(axis=1).reshape(shape).astype(np.float64)
    return counts


def _whiten_over_tokens(a: F64, valid: Bool, counts: F64, ddof: int, eps: float) -> F64:
    """`(a − mean) / (std + eps)` with each response weighted by its token count.

    This is the statistic over token-level advantages: when a response's advantage sits on each
    of its tokens, the batch mean and std of all valid tokens weigh a response by its length.
    `ddof` is taken off the token count (verl: 1, OpenRLHF: 0).
    """
    w = np.where(valid, counts, 0.0)
    total = float(w.sum())
    if total <= ddof:
        return np.zeros_like(a)
    x = np.where(valid, a, 0.0)
    mean = float((w * x).sum() / total)
    std = float(np.sqrt((w * (x - mean) ** 2).sum() / (total - ddof)))
    with np.errstate(divide="ignore", invalid="ignore"):  # eps=0 on a constant batch
        out = (x - mean) / (std + eps)
    return np.where(std + eps > 0, out, 0.0)


def grpo(rewards: Any, mask: Any = None, *, scale: Scale = "group", eps: float = EPS, ddof: int = 1) -> Any:
    """GRPO group-relative advantage.

    Shao et al. 2024, "DeepSeekMath" (arXiv:2402.03300), §4.1.2, outcome supervision:

        Â_i = (r_i − mean(r)) / std(r)      (+ eps in the denominator, made explicit here)

    Args:
        rewards: `(groups, samples)`.
        mask: `(groups, samples)` bool, False where a response has no score.
        scale: "group" divides by the group's std (the paper); "batch" by the std of all valid
            rewards in the batch (Liu et al. 2025, "Part I: Tricks or Traps?", arXiv:2508.08221;
            TRL `scale_rewards="batch"`); "none" does not divide (Dr.GRPO).
        eps: added to the std.
        ddof: 1 = unbiased std (`torch.std`, as in TRL and verl), 0 = population std.

    Returns:
        `(groups, samples)` advantages.
    """
    values, valid = grouped(rewards, mask)
    stats = group_stats(values, valid, ddof=ddof)
    adv = values - stats.mean
    with np.errstate(divide="ignore", invalid="ignore"):  # eps=0 on a constant group: masked below
        if scale == "group":
            adv = adv / (stats.std + eps)
        elif scale == "batch":
            adv = adv / (_batch_std(values, valid, ddof) + eps)
        elif scale != "none":
            raise ArrayError("scale", f"unknown scale {scale!r}; use 'group', 'batch' or 'none'")
    return like(np.where(valid & ~stats.constant, adv, 0.0), rewards)


def dr_grpo(rewards: Any, mask: Any = None) -> Any:
    """Dr.GRPO advantage: `Â_i = r_i − mean(r)`, no division by the std.

    Liu et al. 2025, "Understanding R1-Zero-Like Training: A Critical Perspective"
    (arXiv:2503.20783), §3.1: dividing by the group std up-weights near-constant (too easy or
    too hard) prompts, a difficulty bias. Pair it with `length_weights(..., "constant")`.
    """
    return grpo(rewards, mask, scale="none")


def rloo(rewards: Any, mask: Any = None) -> Any:
    """RLOO: leave-one-out baseline, `Â_i = r_i − (1/(n−1)) Σ_{j≠i} r_j = n/(n−1) (r_i − mean)`.

    Ahmadian et al. 2024, "Back to Basics: Revisiting REINFORCE Style Optimization for Learning
    from Human Feedback in LLMs" (arXiv:2402.14740), after Kool et al. 2019. The
    baseline of each sample does not depend on its own reward, so the estimator is unbiased.
    `n` counts valid entries of the group; n = 1 gives 0.
    """
    values, valid = grouped(rewards, mask)
    stats = group_stats(values, valid, ddof=0)
    n = stats.count.astype(np.float64)
    adv = (values - stats.mean) * n / np.maximum(n - 1.0, 1.0)
    return like(np.where(valid & ~stats.constant, adv, 0.0), rewards)


def reinforce_pp(
    rewards: Any,
    mask: Any = None,
    *,
    baseline: Literal["group", "none"] = "group",
    token_mask: Any = None,
    eps: float = EPS,
    ddof: int = 1,
) -> Any:
    """REINFORCE++: global batch normalisation of (optionally group-baselined) rewards.

    Hu et al. 2025, "REINFORCE++: Stabilizing Critic-Free Policy Optimization with Global
    Advantage Normalization" (arXiv:2501.03262v9), global normalisation: `Â = (A − mean_batch(A)) /
    std_batch(A)` with `A = r` ("REINFORCE++", outcome reward, γ = 1, no KL term) or
    `A = r − mean_group(r)` ("REINFORCE++ w/ baseline"). Normalising over the whole batch
    instead of each group avoids GRPO's per-prompt std.

    The paper's batch holds token-level advantages `A_{q,o_t}`, so its mean and std weigh a
    response by its length; verl (`masked_whiten`) and OpenRLHF compute them that way. Pass
    `token_mask` for that statistic. Without it each response counts once (the same numbers
    when all responses have one length and ddof=0), and the group-baselined batch mean is 0 by
    construction, so it is not subtracted: zero-variance groups stay exactly 0. With
    `token_mask` the token-weighted mean generally is not 0 and is subtracted, as the paper says,
    so a zero-variance group gets `−mean/std` like every other response.

    Args:
        rewards: `(groups, samples)`.
        mask: `(groups, samples)` bool, False where a response has no score (advantage 0).
        baseline: "group" subtracts each group's mean first; "none" does not.
        token_mask: `(groups · samples, tokens)` response tokens, one row per response in
            row-major order (as `to_tokens` uses); weighs the batch statistics by length.
        eps: added to the batch std.
        ddof: 1 = unbiased std (verl), 0 = population std (OpenRLHF); over tokens when
            `token_mask` is given.

    Returns:
        `(groups, samples)` advantages; spread them over tokens with `to_tokens`.
    """
    values, valid = grouped(rewards, mask)
    check_choices(reinforce_pp, error=ArrayError, baseline=baseline)
    if not valid.any():
        return like(np.zeros_like(values), rewards)
    if baseline == "group":
        stats = group_stats(values, valid, ddof=0)
        a = np.where(valid & ~stats.constant, values - stats.mean, 0.0)
    else:
        a = np.where(valid, values, 0.0)
    if token_mask is not None:
        adv = _whiten_over_tokens(a, valid, _token_counts(token_mask, values.shape), ddof, eps)
    elif baseline == "group":
        # Group-centred values have batch mean 0 by construction; not subtracting its float
        # residue keeps zero-variance groups at exactly 0.
        adv = a / (_batch_std(a, valid, ddof) + eps)
    else:
        adv = (a - a[valid].mean()) / (_batch_std(a, valid, ddof) + eps)
    return like(np.where(valid, adv, 0.0), rewards)


def gdpo(
    components: Any,
    weights: Sequence[float] | None = None,
    mask: Any = None,
    *,
    token_mask: Any = None,
    eps: float = EPS,
    ddof: int = 1,
) -> Any:
    """GDPO advantage: normalise each reward component per group, sum, then batch-normalise.

    Liu et al. 2026, "GDPO: Group reward-Decoupled Normalization Policy Optimization for
    Multi-reward RL Optimization" (arXiv:2601.05242):

        A_i = Σ_k w_k (r_{i,k} − mean_g(r_k)) / (std_g(r_k) + eps)     (decoupled, per group)
        Â_i = (A_i − mean_batch(A)) / (std_batch(A) + eps)               (keeps the range fixed)

    The batch statistics count each response once (TRL's `normalize_then_sum`); with
    `token_mask` they weigh a response by its token count, as verl's `masked_whiten` does
    (see `reinforce_pp`, which shares that statistic).

    Args:
        components: `(groups, samples, components)` rewards, one column per reward function.
        weights: `(components,)` weights (default all 1).
        mask: `(groups, samples)` valid responses.
        token_mask: `(groups · samples, tokens)` response tokens, one row per response.
    """
    summed = np.asarray(normalize_then_sum(components, weights, mask, eps=eps, ddof=ddof))
    valid = to_mask(mask, "mask", summed.shape)
    if not valid.any():
        return like(summed, components)
    if token_mask is not None:
        adv = _whiten_over_tokens(summed, valid, _token_counts(token_mask, summed.shape), ddof, eps)
    else:
        # Each group's decoupled sum is centred (Σ of z-scores is 0), so the batch mean is 0 by
        # construction: dividing by the batch std alone keeps zero-variance groups at exactly 0.
        adv = summed / (_batch_std(summed, valid, ddof) + eps)
    return like(np.where(valid, adv, 0.0), components)


def hpo(advantages: Any, *, beta: float) -> Any:
    """Hysteretic weighting: negative advantages are scaled by `beta` in [0, 1].

    Sana et al. 2026, "HPO: Hysteretic Policy Optimization for Stable and Efficient Training
    under Sparse-Reward Regime" (arXiv:2605.30201), after hysteretic Q-learning (Matignon et al.
    2007): `Â' = Â if Â ≥ 0 else β·Â`. With sparse rewards, early batches hold many more
    negative than positive advantages; down-weighting them keeps the few successes from being
    drowned. Pair it with mean-length normalisation (`length_weights(..., "mean_length")`).
    """
    if not 0.0 <= beta <= 1.0:
        raise ArrayError("beta", f"must be in [0, 1], got {beta}")
    a = to_numpy(advantages, "advantages")
    return like(np.where(a < 0, beta * a, a), advantages)


def a_hpo(advantages: Any, mask: Any = None, *, min_beta: float = 0.05) -> tuple[Any, float]:
    """Adaptive HPO: the hysteretic weight from the batch's advantage signs.

    Sana et al. 2026 (arXiv:2605.30201) set β from batch-level sign statistics instead of tuning
    it. This implementation uses β = clip(n₊ / n₋, min_beta, 1): the negative updates are
    weighted so that, in count, they balance the positive ones (β = 1 when positives are not
    outnumbered; β = 1 with no negative advantage at all). This is our reading of "batch-level
    advantage-sign statistics"; check the paper's exact rule before relying on it for a
    reproduction.

    Returns:
        (weighted advantages, β).
    """
    a = to_numpy(advantages, "advantages")
    valid = to_mask(mask, "mask", a.shape)
    n_pos = int(((a > 0) & valid).sum())
    n_neg = int(((a < 0) & valid).sum())
    beta = 1.0 if n_neg == 0 else float(np.clip(n_pos / n_neg, min_beta, 1.0))
    return hpo(advantages, beta=beta), beta
