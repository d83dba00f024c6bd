"""Process rewards: aggregate step scores, and the transforms that keep a PRM from being hacked.

Shapes: `steps` is `(batch, steps)` — one row per response, one column per reasoning step — and
`step_mask` (same shape, default all True) marks the real steps. Ragged rows must be masked as
a prefix (valid steps first). Masked entries may hold NaN and always come back as 0.

Why the transforms exist (Gao et al. 2024, "On Designing Effective RL Reward at Training Time
for LLM Reasoning", arXiv:2410.15115): summing a learned PRM's step rewards lets a policy farm
reward by writing many cheap "good-looking" steps. *Clip* bounds every step reward above by 0
so more steps never add reward; *Delta* makes the return from any step telescope to a single
PRM score, so the total cannot grow with length. PURE (Cheng et al. 2025, "Stop Summation:
Min-Form Credit Assignment Is All Process Reward Model Needs for Reasoning", arXiv:2504.15275)
replaces the sum with a minimum over future steps.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import F64, Bool, check_finite, like, prefix_mask, to_mask, to_numpy

__all__ = [
    "aggregate_steps",
    "clip_steps",
    "clipped_linear",
    "couple",
    "delta_steps",
    "gate_process",
    "min_form",
    "par",
]

Aggregation = Literal["min", "product", "mean", "last", "sum"]


def _steps(steps: Any, step_mask: Any) -> tuple[F64, Bool]:
    values = to_numpy(steps, "steps", ndim=2)
    valid = to_mask(step_mask, "step_mask", values.shape)
    prefix_mask(valid, "step_mask")
    check_finite(values, "steps", valid)
    return values, valid


def aggregate_steps(steps: Any, step_mask: Any = None, *, how: Aggregation = "min", empty: float | None = None) -> Any:
    """One score per response from its step scores: min, product, mean, last or sum.

    `min` is the usual PRM aggregation for best-of-N (Lightman et al. 2023, "Let's Verify Step by
    Step"); `product` treats steps as independent probabilities of being correct; `last` trusts
    the final step. A response with no valid step has no defined min/product/mean/last: it
    raises `ArrayError` unless `empty` gives the value to use (sum of nothing is 0 regardless).

    Returns:
        `(batch,)` aggregated scores.
    """
    values, valid = _steps(steps, step_mask)
    count = valid.sum(axis=1)
    if how == "sum":
        return like(np.where(valid, values, 0.0).sum(axis=1), steps)
    if (count == 0).any() and empty is None:
        rows = np.flatnonzero(count == 0)[:5].tolist()
        raise ArrayError("step_mask", f"rows {rows} have no valid step; give them one or pass empty=<value>")
    if how == "min":
        out = np.where(valid, values, np.inf).min(axis=1)
    elif how == "product":
        out = np.where(valid, values, 1.0).prod(axis=1)
    elif how == "mean":
        out = np.where(valid, values, 0.0).sum(axis=1) / np.maximum(count, 1)
    elif how == "last":
        out = values[np.arange(len(values)), np.maximum(count - 1, 0)]
    else:
        raise ArrayError("how", f"unknown aggregation {how!r}; use min, product, mean, last or sum")
    return like(np.where(count == 0, empty if empty is not None else 0.0, out), steps)


def clip_steps(steps: Any, step_mask: Any = None, *, eta: float = 0.0) -> Any:
    """Clip mechanism: `r_clip = min(r - η, 0)` per step (Gao et al. 2024, arXiv:2410.15115, §4).

    Every step reward is ≤ 0, so the return of a trajectory is bounded above by 0 and adding
    steps can never increase it. `eta` is the threshold above which a step counts as fine.
    """
    values, valid = _steps(steps, step_mask)
    return like(np.where(valid, np.minimum(values - eta, 0.0), 0.0), steps)


def delta_steps(steps: Any, step_mask: Any = None) -> Any:
    """Delta mechanism: `r_k - r_{k+1}` for every step but the last, which keeps `r_K`.

    Gao et al. 2024 (arXiv:2410.15115, §4): the return from step k telescopes,
    Σ_{j≥k} δ_j = r_k, so it is one PRM score however many steps follow.
    """
    values, valid = _steps(steps, step_mask)
    x = np.where(valid, values, 0.0)
    nxt = np.zeros_like(x)
    nxt[:, :-1] = x[:, 1:]  # masked entries are 0, so the last valid step keeps r_K
    return like(np.where(valid, x - nxt, 0.0), steps)


def min_form(steps: Any, step_mask: Any = None) -> Any:
    """Min-form credit: the value of step k is `min_{j≥k} r_j` (PURE, arXiv:2504.15275).

    The return of a step is its worst future step rather than a sum, so a long run of good
    steps cannot hide one bad step and the value cannot grow with length.
    """
    values, valid = _steps(steps, step_mask)
    x = np.where(valid, values, np.inf)[:, ::-1]
    future_min = np.minimum.accumulate(x, axis=1)[:, ::-1]
    return like(np.where(valid, future_min, 0.0), steps)


def gate_process(steps: Any, correct: Any, step_mask: Any = None, *, keep_penalties: bool = True) -> Any:
    """Correctness-gated process reward: a wrong final answer earns no process bonus.

    For responses whose outcome is wrong, positive step rewards become 0 (negative ones stay
    if `keep_penalties`, else they become 0 too); correct responses keep their step rewards.
    This is the gating used to stop a policy from collecting PRM reward on wrong answers
    (e.g. PRIME, Cui et al. 2025, and outcome-gated PRM rewards in Gao et al. 2024).

    Args:
        steps: `(batch, steps)` step rewards.
        correct: `(batch,)` outcome verdict (bool or 0/1).
    """
    values, valid = _steps(steps, step_mask)
    ok = to_mask(correct, "correct", (values.shape[0],))[:, None]
    wrong = np.minimum(values, 0.0) if keep_penalties else np.zeros_like(values)
    return like(np.where(valid, np.where(ok, values, wrong), 0.0), steps, correct)


def couple(outcome: Any, process: Any) -> Any:
    """Multiplicative coupling `outcome × process` of two `(batch,)` scores.

    With a 0/1 outcome this is a hard gate; with a graded outcome it scales the process score
    so neither term can be maximised alone.
    """
    o = to_numpy(outcome, "outcome", ndim=1)
    p = to_numpy(process, "process", ndim=1)
    if o.shape != p.shape:
        raise ArrayError("process", f"must have the shape of outcome {o.shape}, got {p.shape}")
    check_finite(o, "outcome")
    check_finite(p, "process")
    return like(o * p, outcome, process)


def par(rewards: Any, reference_rewards: Any) -> Any:
    """PAR: sigmoid of the reward centred on reference responses' rewards.

    Fu et al. 2025, "Reward Shaping to Mitigate Reward Hacking in RLHF" (arXiv:2502.18770),
    Preference As Reward: `r_PAR = (1/M) Σ_m σ(r - r_ref_m)`. Bounded in (0, 1), steepest at the
    reference, and saturating above it, so pushing the raw reward ever higher stops paying.

    Args:
        rewards: `(batch,)` policy-response rewards.
        reference_rewards: `(batch,)` or `(batch, M)` rewards of reference responses.
    """
    r = to_numpy(rewards, "rewards", ndim=1)
    ref = to_numpy(reference_rewards, "reference_rewards", ndim=(1, 2))
    ref = ref[:, None] if ref.ndim == 1 else ref
    if ref.shape[0] != r.shape[0]:
        raise ArrayError("reference_rewards", f"need {r.shape[0]} rows like rewards, got {ref.shape[0]}")
    check_finite(r, "rewards")
    check_finite(ref, "reference_rewards")
    z = r[:, None] - ref
    sig = np.exp(-np.logaddexp(0.0, -z))  # σ(z) without overflow for large |z|
    return like(sig.mean(axis=1), rewards)


def clipped_linear(x: Any, *, lo: float, hi: float, out_lo: float = 0.0, out_hi: float = 1.0) -> Any:
    """Map `[lo, hi]` linearly onto `[out_lo, out_hi]`, clipping outside (e.g. a length budget)."""
    if not hi > lo:
        raise ArrayError("lo/hi", f"need hi > lo, got lo={lo}, hi={hi}")
    v = to_numpy(x, "x")
    check_finite(v, "x")
    t = np.clip((v - lo) / (hi - lo), 0.0, 1.0)
    return like(out_lo + t * (out_hi - out_lo), x)
