"""Finer credit: token-level advantages, sum-preserving redistribution, loss normalisation.

Shapes: `token_mask` is `(batch, tokens)`, True on response tokens (padding and prompt False).
A row with no True token is an *empty* response; documented behaviour:
    * `to_tokens`, `length_weights`: the row gets all zeros (nothing to train on, no NaN);
    * `redistribute*`: raises `ArrayError` if the row carries a non-zero reward, because the
      reward could not be preserved (a zero reward is fine and gives zeros).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import F64, Bool, check_finite, like, to_numpy, token_mask_of

__all__ = [
    "aggregate_tokens",
    "length_weights",
    "redistribute",
    "redistribute_deltas",
    "to_tokens",
]

LengthMode = Literal["per_response", "mean_length", "constant"]


def _per_row(values: Any, name: str, token_mask: Any) -> tuple[F64, Bool]:
    """`values` as `(batch,)` (a `(groups, samples)` array is flattened row-major)."""
    v = to_numpy(values, name, ndim=(1, 2)).reshape(-1)
    valid = token_mask_of(token_mask)
    if valid.shape[0] != v.shape[0]:
        raise ArrayError("token_mask", f"has {valid.shape[0]} rows but {name} has {v.shape[0]} entries")
    return v, valid


def to_tokens(advantages: Any, token_mask: Any) -> Any:
    """Give every response token its response's advantage: `(batch,)` → `(batch, tokens)`.

    `(groups, samples)` advantages are flattened row-major, matching the usual layout where the
    samples of a prompt are consecutive (TRL `num_generations`, verl `rollout.n`).
    """
    adv, valid = _per_row(advantages, "advantages", token_mask)
    check_finite(adv, "advantages")
    return like(np.where(valid, adv[:, None], 0.0), advantages, token_mask)


def redistribute(rewards: Any, weights: Any, token_mask: Any, *, eps: float = 1e-12) -> Any:
    """Spread each sequence reward over its tokens in proportion to non-negative weights.

    `r_t = R · w_t / Σ_{t'} w_{t'}` over valid tokens, so Σ_t r_t = R exactly (up to rounding).
    Weights can be attention mass, saliency, or any importance score (ABC, Chan et al. 2024,
    "Dense Reward for Free in Reinforcement Learning from Human Feedback", arXiv:2402.00782,
    uses the reward model's attention over the response). A row whose weights sum to ≤ eps falls back to uniform.
    For signed per-token scores such as reward-model deltas use `redistribute_deltas`.

    Args:
        rewards: `(batch,)` sequence rewards (or advantages).
        weights: `(batch, tokens)` non-negative weights (masked entries ignored, may be NaN).
        token_mask: `(batch, tokens)` response tokens.
    """
    r, valid = _per_row(rewards, "rewards", token_mask)
    w = to_numpy(weights, "weights", ndim=2)
    if w.shape != valid.shape:
        raise ArrayError("weights", f"must have the shape of token_mask {valid.shape}, got {w.shape}")
    check_finite(r, "rewards")
    check_finite(w, "weights", valid)
    if (w[valid] < 0).any():
        raise ArrayError("weights", "must be non-negative; use redistribute_deltas for signed scores")
    _check_not_lost(r, valid)
    w = np.where(valid, w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    uniform = valid / np.maximum(valid.sum(axis=1, keepdims=True), 1)
    share = np.where(total > eps, w / np.where(total > eps, total, 1.0), uniform)
    return like(r[:, None] * share, rewards, weights)


def redistribute_deltas(rewards: Any, deltas: Any, token_mask: Any) -> Any:
    """Per-token signed scores (e.g. reward-model deltas) corrected so each row sums to R.

    `r_t = d_t + (R − Σ_{t'} d_{t'}) / n`: the shape of the per-token signal is kept and the
    residual is spread evenly over the row's n valid tokens, so Σ_t r_t = R. With prefix
    reward-model scores `d_t = RM(y_≤t) − RM(y_<t)` the residual is `R − RM(y) + RM(∅)`.
    """
    r, valid = _per_row(rewards, "rewards", token_mask)
    d = to_numpy(deltas, "deltas", ndim=2)
    if d.shape != valid.shape:
        raise ArrayError("deltas", f"must have the shape of token_mask {valid.shape}, got {d.shape}")
    check_finite(r, "rewards")
    check_finite(d, "deltas", valid)
    _check_not_lost(r, valid)
    d = np.where(valid, d, 0.0)
    n = np.maximum(valid.sum(axis=1, keepdims=True), 1)
    residual = (r[:, None] - d.sum(axis=1, keepdims=True)) / n
    return like(np.where(valid, d + residual, 0.0), rewards, deltas)


def _check_not_lost(r: F64, valid: Bool) -> None:
    lost = (valid.sum(axis=1) == 0) & (r != 0)
    if lost.any():
        rows = np.flatnonzero(lost)[:5].tolist()
        raise ArrayError(
            "token_mask",
            f"rows {rows} have no response token but a non-zero reward that would be lost; "
            "drop those rows or fix their mask",
        )


def length_weights(token_mask: Any, mode: LengthMode = "per_response", *, max_tokens: int | None = None) -> Any:
    """Per-token loss weights `w` so that `loss = Σ w · per_token_loss` (one choice, named).

    * "per_response" — GRPO (Shao et al. 2024): mean over each response's tokens, then over
      responses: `w = 1 / (B · |o_i|)`. Short responses get larger per-token weight: it
      favours short correct and long wrong answers (Liu et al. 2025, arXiv:2503.20783, §3.1).
    * "mean_length" — every token weighs `1 / (B · mean_i |o_i|) = 1 / Σ_i |o_i|` (DAPO's
      token-level loss, Yu et al. 2025, arXiv:2503.14476; HPO's mean-length normalisation).
    * "constant" — Dr.GRPO: `w = 1 / (B · max_tokens)`, a constant independent of lengths.

    Empty rows get weight 0; an all-empty batch gives all zeros.
    """
    valid = token_mask_of(token_mask)
    b = valid.shape[0]
    lengths = valid.sum(axis=1, keepdims=True)
    if mode == "per_response":
        w = valid / np.maximum(lengths, 1) / max(b, 1)
    elif mode == "mean_length":
        w = valid / max(int(lengths.sum()), 1)
    elif mode == "constant":
        cap = valid.shape[1] if max_tokens is None else max_tokens
        if cap <= 0:
            raise ArrayError("max_tokens", f"must be positive, got {cap}")
        w = valid / (max(b, 1) * cap)
    else:
        raise ArrayError("mode", f"unknown mode {mode!r}; use per_response, mean_length or constant")
    return like(w.astype(np.float64), token_mask)


def aggregate_tokens(values: Any, token_mask: Any, mode: LengthMode = "per_response", *, max_tokens: int | None = None) -> Any:
    """The scalar `Σ w · values` with `length_weights(token_mask, mode)` (a loss reduction)."""
    v = to_numpy(values, "values", ndim=2)
    w = np.asarray(length_weights(token_mask_of(token_mask), mode, max_tokens=max_tokens))
    if v.shape != w.shape:
        raise ArrayError("values", f"must have the shape of token_mask {w.shape}, got {v.shape}")
    check_finite(v, "values", w > 0)
    return float((np.where(w > 0, v, 0.0) * w).sum())
