"""Per-turn credit for agent trajectories: turn rewards → turn advantages → tokens of each assistant turn.

Shapes: `turn_rewards` is `(groups, samples, turns)` (or `(samples, turns)`: one group), padded
to the longest trajectory, with `turn_mask` True on the turns a trajectory has (a prefix per row).
`token_turn` is `(batch, tokens)` of ints: the assistant turn a token belongs to, −1 for every
token the policy did not write (prompt, user and tool-result tokens, padding); `turn_index`
builds it from the response/action mask trainers keep (verl's agent loop and OpenRLHF's agent
executor mark tool-result tokens 0 there), each run of policy tokens being one turn.

The estimator is turn-level GRPO (the multi-turn credit of MT-GRPO, Zeng et al. 2025,
"Reinforcing Multi-Turn Reasoning in LLM Agents via Turn-Level Credit Assignment"): the
reward-to-go of turn t,

    G_t = Σ_{k ≥ t} γ^{k−t} r_k,

minus a baseline over the trajectories of the same group: ``"turn"`` (the mean of G_t over the
group's trajectories that reach turn t), ``"episode"`` (the group mean of G_0, GRPO's baseline),
or ``"none"``; with ``scale=True`` divided by the group's standard deviation of the same
quantity (+ eps). Every token of turn t gets A_t; tool-result tokens get 0 and mask False.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rewardlab.errors import ArrayError, ConfigError
from rewardlab.shape._arrays import F64, Bool, check_finite, like, prefix_mask, to_mask, to_numpy

__all__ = ["turn_advantages", "turn_index", "turn_returns", "turns_to_tokens"]

Baseline = Literal["turn", "episode", "none"]


def _turns(turn_rewards: Any, turn_mask: Any) -> tuple[F64, Bool]:
    r = to_numpy(turn_rewards, "turn_rewards", ndim=(2, 3))
    if r.ndim == 2:
        r = r[None]
    m = to_mask(turn_mask if turn_mask is None else np.asarray(turn_mask).reshape(r.shape), "turn_mask", r.shape)
    prefix_mask(m, "turn_mask")
    check_finite(r, "turn_rewards", m)
    return np.where(m, r, 0.0), m


def turn_returns(turn_rewards: Any, turn_mask: Any = None, *, gamma: float = 1.0) -> Any:
    """Reward-to-go per turn, G_t = Σ_{k≥t} γ^{k−t} r_k, same shape as `turn_rewards` (0 on padding)."""
    if not 0.0 <= gamma <= 1.0:
        raise ConfigError(f"gamma must be in [0, 1], got {gamma}")
    r, m = _turns(turn_rewards, turn_mask)
    out = np.zeros_like(r)
    running = np.zeros(r.shape[:-1])
    for t in range(r.shape[-1] - 1, -1, -1):
        running = r[..., t] + gamma * running
        out[..., t] = running
    out = np.where(m, out, 0.0)
    return like(out.reshape(np.shape(to_numpy(turn_rewards, "turn_rewards"))), turn_rewards)


def turn_advantages(turn_rewards: Any, turn_mask: Any = None, *, gamma: float = 1.0, baseline: Baseline = "turn",
                    scale: bool = False, eps: float = 1e-6) -> Any:  # fmt: skip
    """Turn-level advantages (module docstring); same shape as `turn_rewards`, 0 on padding."""
    if baseline not in ("turn", "episode", "none"):
        raise ConfigError(f"baseline must be 'turn', 'episode' or 'none', got {baseline!r}")
    shape = np.shape(to_numpy(turn_rewards, "turn_rewards"))
    _, m = _turns(turn_rewards, turn_mask)
    g = np.asarray(turn_returns(to_numpy(turn_rewards, "turn_rewards"), m.reshape(shape), gamma=gamma), dtype=np.float64).reshape(m.shape)
    if baseline == "none":
        adv = g
    elif baseline == "episode":
        first, has = g[..., 0], m[..., 0]  # (groups, samples)
        n = np.maximum(has.sum(axis=1, keepdims=True), 1)
        mean = np.where(has, first, 0.0).sum(axis=1, keepdims=True) / n
        adv = g - mean[..., None]
        if scale:
            std = np.sqrt((np.where(has, first - mean, 0.0) ** 2).sum(axis=1, keepdims=True) / n)
            adv = adv / (std[..., None] + eps)
    else:
        n = np.maximum(m.sum(axis=1, keepdims=True), 1)  # (groups, 1, turns): trajectories reaching turn t
        mean = np.where(m, g, 0.0).sum(axis=1, keepdims=True) / n
        adv = g - mean
        if scale:
            std = np.sqrt((np.where(m, g - mean, 0.0) ** 2).sum(axis=1, keepdims=True) / n)
            adv = adv / (std + eps)
    return like(np.where(m, adv, 0.0).reshape(shape), turn_rewards)


def turn_index(response_mask: Any) -> np.ndarray:
    """`(batch, tokens)` turn numbers from a policy-token mask: each run of True is the next turn
    (0, 1, ...); False tokens (tool results, padding) get −1."""
    mask = to_mask(response_mask, "response_mask", np.shape(np.asarray(response_mask)))
    if mask.ndim != 2:
        raise ArrayError("response_mask", f"must have 2 axes (batch, tokens), got shape {mask.shape}")
    starts = mask & ~np.concatenate([np.zeros((mask.shape[0], 1), dtype=bool), mask[:, :-1]], axis=1)
    numbers = np.cumsum(starts, axis=1) - 1
    return np.where(mask, numbers, -1)


def turns_to_tokens(turn_values: Any, token_turn: Any) -> tuple[Any, np.ndarray]:
    """Each token its turn's value: `(batch, turns)` values and `(batch, tokens)` turn numbers →
    (`(batch, tokens)` values, 0 where `token_turn` is −1; the mask of policy tokens)."""
    values = to_numpy(turn_values, "turn_values", ndim=(2, 3))
    values = values.reshape(-1, values.shape[-1])
    index = np.asarray(token_turn)
    if index.ndim != 2 or index.shape[0] != values.shape[0]:
        raise ArrayError("token_turn", f"must be (batch, tokens) with {values.shape[0]} rows, got shape {index.shape}")
    if not np.issubdtype(index.dtype, np.integer):
        raise ArrayError("token_turn", f"must hold integers (turn numbers, -1 for other tokens), got {index.dtype}")
    if (index >= values.shape[1]).any() or (index < -1).any():
        row = int(np.argwhere((index >= values.shape[1]) | (index < -1))[0][0])
        raise ArrayError("token_turn", f"row {row} names a turn outside 0..{values.shape[1] - 1} (or below -1)")
    mask = index >= 0
    out = np.where(mask, np.take_along_axis(values, np.maximum(index, 0), axis=1), 0.0)
    return like(out, turn_values), mask
