"""Step- and segment-level credit: process-reward advantages, SPO segments, GAE.

Shapes: steps are `(groups, samples, steps)` or `(batch, steps)` with a step mask that is a
prefix per row (valid steps first); tokens are `(batch, tokens)` with a token mask. A step
covers the tokens after the previous step's end up to and including its own end
(`step_ends[k]`, a token index), which is how PRM data marks steps (a separator token).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import (
    EPS,
    F64,
    Bool,
    check_finite,
    like,
    prefix_mask,
    to_mask,
    to_numpy,
    token_mask_of,
)

__all__ = ["gae", "process_advantages", "segment_advantages", "steps_to_tokens"]


def process_advantages(step_rewards: Any, step_mask: Any = None, *, eps: float = EPS, ddof: int = 1) -> Any:
    """GRPO with process supervision: normalise step rewards per group, then sum the future.

    Shao et al. 2024, "DeepSeekMath" (arXiv:2402.03300), §4.1.3: with R the set of all step
    rewards of all G responses of a prompt, `r̃ = (r − mean(R)) / std(R)`, and the advantage of
    step k of response i is `Σ_{j ≥ k} r̃_i^j` (reward-to-go of normalised step rewards).

    Args:
        step_rewards: `(groups, samples, steps)`.
        step_mask: same shape, prefix per response; masked entries may be NaN and give 0.
        eps: added to the group std. A group whose valid step rewards are all equal gives 0.

    Returns:
        `(groups, samples, steps)` step advantages; `steps_to_tokens` maps them to tokens.
    """
    r = to_numpy(step_rewards, "step_rewards", ndim=3)
    valid = to_mask(step_mask, "step_mask", r.shape)
    prefix_mask(valid, "step_mask")
    check_finite(r, "step_rewards", valid)
    g = r.shape[0]
    flat = r.reshape(g, -1)
    flat_valid = valid.reshape(g, -1)
    count = flat_valid.sum(axis=1)
    mean = np.where(flat_valid, flat, 0.0).sum(axis=1) / np.maximum(count, 1)
    dev = np.where(flat_valid, flat - mean[:, None], 0.0)
    std = np.sqrt((dev * dev).sum(axis=1) / np.maximum(count - ddof, 1))
    hi = np.where(flat_valid, flat, -np.inf).max(axis=1)
    lo = np.where(flat_valid, flat, np.inf).min(axis=1)
    constant = (count < 2) | (hi == lo)
    with np.errstate(divide="ignore", invalid="ignore"):  # eps=0 on a constant group: masked below
        norm = np.where(valid, (r - mean[:, None, None]) / (std[:, None, None] + eps), 0.0)
    to_go = np.cumsum(norm[..., ::-1], axis=-1)[..., ::-1]
    return like(np.where(valid & ~constant[:, None, None], to_go, 0.0), step_rewards)


def steps_to_tokens(step_values: Any, step_ends: Any, token_mask: Any, step_mask: Any = None) -> Any:
    """Give each token the value of the step (or segment) that contains it.

    Args:
        step_values: `(batch, steps)` (a `(groups, samples, steps)` array is flattened).
        step_ends: `(batch, steps)` index of each step's last token, increasing along valid steps.
        token_mask: `(batch, tokens)` response tokens.
        step_mask: `(batch, steps)` valid steps (prefix); default all.

    Returns:
        `(batch, tokens)`; a token after the last valid step's end belongs to no step and gets 0,
        as do masked tokens.
    """
    v = to_numpy(step_values, "step_values", ndim=(2, 3))
    v = v.reshape(-1, v.shape[-1])
    ends = to_numpy(step_ends, "step_ends", ndim=(2, 3)).reshape(v.shape)
    tok = token_mask_of(token_mask)
    steps_ok = to_mask(None if step_mask is None else np.asarray(step_mask).reshape(v.shape), "step_mask", v.shape)
    prefix_mask(steps_ok, "step_mask")
    if tok.shape[0] != v.shape[0]:
        raise ArrayError("token_mask", f"has {tok.shape[0]} rows but step_values has {v.shape[0]}")
    check_finite(v, "step_values", steps_ok)
    check_finite(ends, "step_ends", steps_ok)
    big = np.iinfo(np.int64).max  # invalid steps sort last, so searchsorted never picks them
    e = np.where(steps_ok, np.where(steps_ok, ends, 0).astype(np.int64), big)
    if (np.diff(e, axis=1)[steps_ok[:, 1:]] <= 0).any():
        raise ArrayError("step_ends", "must be strictly increasing along each row's valid steps")
    positions = np.arange(tok.shape[1])
    # index of the step containing token t = number of steps that end before t (searchsorted).
    owner = np.stack([np.searchsorted(row, positions, side="left") for row in e])
    n_steps = steps_ok.sum(axis=1, keepdims=True)
    inside = owner < n_steps
    picked = np.take_along_axis(v, np.minimum(owner, v.shape[1] - 1), axis=1)
    return like(np.where(tok & inside, picked, 0.0), step_values, token_mask)


def segment_advantages(values: Any, valid: Any = None) -> Any:
    """SPO segment advantages from Monte-Carlo values at cut points: `A_k = V(c_{k+1}) − V(c_k)`.

    Guo et al. 2025, "Segment Policy Optimization: Effective Segment-Level Credit Assignment in
    RL for Large Language Models" (arXiv:2505.23564): cut a response into segments, estimate
    the value at each cut point by Monte-Carlo rollouts from that prefix (the mean reward of the
    rollouts, e.g. `rollout_rewards.mean(-1)`), and credit each segment with the change in value
    it caused. `V(c_0)` is the value of the prompt, the last value the response's own reward,
    so the advantages of a response sum to `R − V(c_0)` (telescoping).

    Args:
        values: `(batch, cuts)` values at cut points `c_0 … c_K` (K segments).
        valid: `(batch, cuts)` prefix mask for ragged numbers of cuts.

    Returns:
        `(batch, cuts − 1)` segment advantages (0 where the segment does not exist).
    """
    v = to_numpy(values, "values", ndim=2)
    ok = to_mask(valid, "valid", v.shape)
    prefix_mask(ok, "valid")
    check_finite(v, "values", ok)
    if v.shape[1] < 2:
        raise ArrayError("values", f"need at least 2 cut points (start and end), got {v.shape[1]}")
    both = ok[:, 1:] & ok[:, :-1]
    return like(np.where(both, np.where(ok, v, 0.0)[:, 1:] - np.where(ok, v, 0.0)[:, :-1], 0.0), values)


def gae(
    rewards: Any,
    values: Any,
    token_mask: Any,
    *,
    gamma: float = 1.0,
    lam: float = 0.95,
    last_values: Any = None,
) -> tuple[Any, Any]:
    """Generalised Advantage Estimation for when a critic exists.

    Schulman et al. 2016, "High-Dimensional Continuous Control Using Generalized Advantage
    Estimation" (arXiv:1506.02438), eqs. 11-16:

        δ_t = r_t + γ V(s_{t+1}) − V(s_t),      Â_t = Σ_l (γλ)^l δ_{t+l}

    Masked tokens are skipped (the recursion carries through them, as verl does for interleaved
    observation tokens). After the last token the value is `last_values` (a truncated response)
    or 0 (a finished one). `Â` is returned as defined, not whitened: verl and OpenRLHF whiten
    it over the batch's tokens afterwards (a PPO convention), and their returns equal these.

    Vectorised over batch *and* time: valid tokens are first packed to the left of each row
    (stable, so order is kept), then `Â_t = Σ_k c^(k−t) δ_k` with `c = γλ` is a reverse cumulative
    sum of `c^k δ_k` divided by `c^t`, done in chunks short enough that `c^k` never underflows,
    with the tail carried between chunks. Checked against the step-by-step recursion in tests.

    Args:
        rewards: `(batch, tokens)` per-token rewards (an outcome reward sits on the last token).
        values: `(batch, tokens)` critic values V(s_t).
        token_mask: `(batch, tokens)`.
        gamma, lam: discount and GAE λ in [0, 1].
        last_values: `(batch,)` bootstrap value after the final token (default 0).

    Returns:
        (advantages, returns), both `(batch, tokens)`, 0 on masked tokens; `returns = Â + V`.
    """
    r = to_numpy(rewards, "rewards", ndim=2)
    v = to_numpy(values, "values", ndim=2)
    if v.shape != r.shape:
        raise ArrayError("values", f"must have the shape of rewards {r.shape}, got {v.shape}")
    m = to_mask(token_mask, "token_mask", r.shape)
    check_finite(r, "rewards", m)
    check_finite(v, "values", m)
    if not (0.0 <= gamma <= 1.0 and 0.0 <= lam <= 1.0):
        raise ArrayError("gamma/lam", f"must be in [0, 1], got gamma={gamma}, lam={lam}")
    next_value = np.zeros(r.shape[0]) if last_values is None else to_numpy(last_values, "last_values", ndim=1)
    if next_value.shape != (r.shape[0],):
        raise ArrayError("last_values", f"need one value per row ({r.shape[0]}), got {next_value.shape}")
    check_finite(next_value, "last_values")
    adv = _gae_packed(r, v, m, next_value, gamma, gamma * lam)
    returns = np.where(m, adv + v, 0.0)
    return like(adv, rewards, values), like(returns, rewards, values)


def _gae_packed(r: F64, v: F64, m: Bool, last_value: F64, gamma: float, c: float) -> F64:
    b, t = r.shape
    rows = np.arange(b)[:, None]
    is_prefix = not (m[:, 1:] & ~m[:, :-1]).any()  # the usual right-padded layout: no packing
    order = None if is_prefix else np.argsort(~m, axis=1, kind="stable")  # valid tokens first
    rp, vp = (r, v) if order is None else (r[rows, order], v[rows, order])
    n = m.sum(axis=1)
    live = np.arange(t)[None, :] < n[:, None]  # packed mask: a prefix
    v_next = np.empty_like(vp)
    v_next[:, :-1] = vp[:, 1:]
    v_next[:, -1] = 0.0
    last = np.arange(t)[None, :] == (n - 1)[:, None]
    v_next = np.where(last, last_value[:, None], v_next)
    delta = np.where(live, rp + gamma * v_next - vp, 0.0)
    packed = np.where(live, _discounted_reverse_cumsum(delta, c), 0.0)
    if order is None:
        return packed
    out = np.zeros_like(r)
    out[rows, order] = packed
    return out


def _discounted_reverse_cumsum(delta: F64, c: float) -> F64:
    """`y_t = Σ_{k≥t} c^(k−t) δ_k` along axis 1, vectorised, in chunks where c^k cannot underflow.

    Works on the time-reversed copy (contiguous, so numpy's cumsum runs at full speed), where
    it is a forward discounted sum `y_s = Σ_{j≤s} c^(s−j) D_j`; within a chunk [a, e) this is
    `(Σ_{a≤j≤s} c^(e−1−j) D_j) / c^(e−1−s)` plus the carried `c^(s−a+1) y_{a−1}`.
    """
    t = delta.shape[1]
    if c == 0.0:
        return delta.copy()
    chunk = t if c >= 1.0 else max(1, min(t, int(280.0 / -np.log10(c))))  # c**chunk >= 1e-280
    rev = np.ascontiguousarray(delta[:, ::-1])
    out = np.empty_like(rev)
    carry = np.zeros(rev.shape[0])
    for a in range(0, t, chunk):
        e = min(t, a + chunk)
        w = c ** np.arange(e - 1 - a, -1, -1, dtype=np.float64)  # c^(e−1−j) for j = a … e−1
        y = np.cumsum(rev[:, a:e] * w, axis=1) / w
        y += carry[:, None] * c ** np.arange(1, e - a + 1, dtype=np.float64)
        out[:, a:e] = y
        carry = y[:, -1]
    return out[:, ::-1]
