"""Where candidate scores come from: any `Reward`, stored scores, or per-step PRM scores.

Scores are `(problems, n)` float64 with NaN where no score exists. A reward that returned an
`error` (or `skipped`) result gives NaN, never 0, and `RewardScores.errors` counts it, so a
selector can never pick a candidate on a score that was not computed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from rewardlab.core import Reward, RewardResult, Sample, Status
from rewardlab.errors import ArrayError
from rewardlab.select.options import WeightMap

__all__ = ["RewardScores", "score_candidates", "step_scores", "to_weights"]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class RewardScores:
    """Scores of every candidate by one reward.

    Attributes:
        scores: `(problems, n_max)`, NaN for padding and for results that are not `ok`.
        errors: how many candidates got an `error` result (their kinds in `error_kinds`).
        skipped: how many got a `skipped` result.
        error_kinds: error kind -> count.
    """

    scores: F64
    errors: int
    skipped: int
    error_kinds: dict[str, int]


def score_candidates(
    reward: Reward, candidates: Sequence[Sequence[Sample]], *, score: Callable[[list[Sample]], list[RewardResult]] | None = None
) -> RewardScores:
    """Score every candidate of every problem with `reward` in one `score_batch` call, or one
    call of `score` (e.g. `evaluate._scoring.scorer`'s, which reports progress).

    Examples:
        >>> from rewardlab.core import Sample, reward
        >>> @reward(range=(0, 1), register=False)
        ... def longer(sample):
        ...     return min(len(sample.response) / 10, 1.0)
        >>> score_candidates(longer, [[Sample(response="ab"), Sample(response="abcd")]]).scores.tolist()
        [[0.2, 0.4]]
    """
    flat = [s for row in candidates for s in row]
    results = (score or reward.score_batch)(flat) if flat else []
    if len(results) != len(flat):
        raise ArrayError("reward", f"{reward.name} returned {len(results)} results for {len(flat)} samples")
    width = max((len(row) for row in candidates), default=0)
    out = np.full((len(candidates), width), np.nan)
    kinds: dict[str, int] = {}
    skipped = 0
    i = 0
    for p, row in enumerate(candidates):
        for j in range(len(row)):
            result = results[i]
            i += 1
            if result.status is Status.OK and result.score is not None:
                out[p, j] = result.score
            elif result.status is Status.SKIPPED:
                skipped += 1
            else:
                kind = result.error.kind.value if result.error is not None else "unknown"
                kinds[kind] = kinds.get(kind, 0) + 1
    return RewardScores(out, sum(kinds.values()), skipped, kinds)


def to_weights(scores: Any, how: WeightMap = "sigmoid", *, temperature: float = 1.0) -> F64:
    """Non-negative vote weights from scores (NaN stays NaN: the candidate does not vote).

    `sigmoid` reads a reward-model logit as a probability of being correct; `exp` gives
    `exp(score / temperature)`, a per-problem softmax up to a constant (so the vote is the
    same); `raw` keeps scores that are already probabilities (checked to be >= 0).
    """
    s = np.asarray(scores, dtype=np.float64)
    if temperature <= 0:
        raise ArrayError("temperature", f"must be > 0, got {temperature}")
    if how == "sigmoid":
        return 0.5 * (1.0 + np.tanh(0.5 * s / temperature))  # overflow-free logistic
    if how == "exp":
        top = np.where(np.isnan(s), -np.inf, s).max(axis=-1, keepdims=True, initial=-np.inf)
        with np.errstate(invalid="ignore"):
            weights: F64 = np.exp((s - top) / temperature)  # shifted by the row's max: no overflow
        return weights
    if how == "raw":
        if (s[~np.isnan(s)] < 0).any():
            raise ArrayError("scores", "hold negative values; use how='sigmoid' for logits")
        return s
    raise ArrayError("how", f"must be 'raw', 'sigmoid' or 'exp', got {how!r}")


def step_scores(steps: Any, step_mask: Any = None, *, how: Literal["min", "product", "mean", "last"] = "min") -> F64:
    """`(problems, n)` candidate scores from `(problems, n, steps)` PRM step scores.

    Aggregation is `shape.aggregate_steps` (min: Lightman et al. 2023; product; mean; last).
    A candidate with no valid step gets NaN (no score), not 0.
    """
    from rewardlab.shape import aggregate_steps

    values = np.asarray(steps, dtype=np.float64)
    if values.ndim != 3:
        raise ArrayError("steps", f"must be (problems, candidates, steps), got shape {values.shape}")
    problems, n, width = values.shape
    mask = np.ones(values.shape, dtype=bool) if step_mask is None else np.asarray(step_mask, dtype=bool)
    if mask.shape != values.shape:
        raise ArrayError("step_mask", f"has shape {mask.shape}, expected {values.shape}")
    flat_mask = mask.reshape(problems * n, width)
    out = aggregate_steps(values.reshape(problems * n, width), flat_mask, how=how, empty=np.nan)
    return np.asarray(out, dtype=np.float64).reshape(problems, n)
