"""From what trainers hand you to `(groups, samples)` arrays and back.

* TRL keeps the `num_generations` samples of a prompt consecutive: `by_size(flat, G)`.
* verl passes a flat batch plus `index` (a prompt uid per row, in any order): `pack(flat, index)`
  builds a padded `(groups, max_samples)` array with a mask, and `Packed.unpack` scatters a
  result back to the original row order.
* rewardlab's own `RewardResult`s: `from_results` keeps errors and skips as `mask=False`
  (never as a silent 0) and counts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewardlab.core.result import RewardResult, Status
from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import F64, Bool, check_finite, like, to_numpy, token_mask_of

__all__ = [
    "OUTCOME_ESTIMATORS",
    "GroupedAdvantages",
    "Packed",
    "advantages_by_group",
    "by_size",
    "from_results",
    "pack",
    "steps_from_results",
]


def by_size(flat: Any, group_size: int) -> Any:
    """Reshape a flat `(batch,)` array whose groups are consecutive into `(groups, group_size)`."""
    if group_size < 1:
        raise ArrayError("group_size", f"must be >= 1, got {group_size}")
    v = to_numpy(flat, "flat", ndim=1)
    if v.shape[0] % group_size:
        raise ArrayError("flat", f"has {v.shape[0]} entries, not a multiple of group_size={group_size}")
    return like(v.reshape(-1, group_size), flat)


@dataclass(frozen=True)
class Packed:
    """A flat batch regrouped by prompt id.

    Attributes:
        values: `(groups, max_samples)` float64; padding is NaN (and masked).
        mask: `(groups, max_samples)` True on real entries.
        rows, cols: where each original row went, so `values[rows, cols] == flat`.
        keys: the group id of each row of `values`, in first-seen order.
    """

    values: F64
    mask: Bool
    rows: np.ndarray
    cols: np.ndarray
    keys: list[Any]

    def unpack(self, grouped: Any) -> Any:
        """Scatter a `(groups, max_samples)` result back to the original `(batch,)` order."""
        g = to_numpy(grouped, "grouped", ndim=2)
        if g.shape != self.values.shape:
            raise ArrayError("grouped", f"must have shape {self.values.shape}, got {g.shape}")
        return like(g[self.rows, self.cols], grouped)

    def pack_tokens(self, token_mask: Any) -> Bool:
        """Reorder a flat batch's `(batch, tokens)` mask to the grouped rows, row-major.

        Returns `(groups · max_samples, tokens)`: row `g · max_samples + j` is the token mask of
        `values[g, j]` (all False on padding), the layout `reinforce_pp(token_mask=...)` and
        `gdpo(token_mask=...)` read.
        """
        tokens = token_mask_of(token_mask)
        if tokens.shape[0] != self.rows.shape[0]:
            raise ArrayError("token_mask", f"needs one row per batch row ({self.rows.shape[0]}), got {tokens.shape[0]}")
        width = self.values.shape[1]
        out = np.zeros((self.values.size, tokens.shape[1]), dtype=bool)
        out[self.rows * width + self.cols] = tokens
        return out


def pack(flat: Any, index: Sequence[Any] | np.ndarray, mask: Any = None) -> Packed:
    """Group a flat batch by `index` (verl's `index`/uid array; any hashable ids).

    Vectorised: ids are factorised once with `np.unique`, and a stable sort gives each row its
    column inside its group. `mask` (batch,) marks rows without a score (kept out of stats).
    """
    v = to_numpy(flat, "flat", ndim=1)
    ids = np.asarray(index, dtype=object) if not isinstance(index, np.ndarray) else index
    if ids.shape != v.shape:
        raise ArrayError("index", f"needs one id per row ({v.shape[0]}), got shape {ids.shape}")
    ok = np.ones(v.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    check_finite(v, "flat", ok)
    keys, first, inverse = np.unique(ids.astype(str) if ids.dtype == object else ids, return_index=True, return_inverse=True)
    order_of_key = np.argsort(np.argsort(first, kind="stable"), kind="stable")  # first-seen order
    rows = order_of_key[inverse]
    order = np.argsort(rows, kind="stable")
    sizes = np.bincount(rows, minlength=len(keys))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    cols = np.empty_like(rows)
    cols[order] = np.arange(len(rows)) - np.repeat(starts, sizes)
    values = np.full((len(keys), int(sizes.max(initial=0))), np.nan)
    grid_mask = np.zeros(values.shape, dtype=bool)
    values[rows, cols] = v
    grid_mask[rows, cols] = ok
    seen = [ids[i] for i in np.sort(first)]
    return Packed(values=values, mask=grid_mask, rows=rows, cols=cols, keys=seen)


def from_results(results: Sequence[RewardResult], group_size: int) -> tuple[F64, Bool, dict[str, int]]:
    """`(groups, group_size)` scores and mask from consecutive `RewardResult`s.

    Returns:
        (scores, mask, counts): scores are NaN where the result is not `ok`, mask is False
        there, and counts gives how many results were ok / error / skipped, so a report can say
        how much of the batch carried no signal.
    """
    if group_size < 1 or len(results) % group_size:
        raise ArrayError("results", f"{len(results)} results do not split into groups of {group_size}")
    scores = np.array([r.score if r.status is Status.OK else np.nan for r in results], dtype=np.float64)
    ok = np.array([r.status is Status.OK for r in results], dtype=bool)
    counts = {s.value: sum(r.status is s for r in results) for s in Status}
    return scores.reshape(-1, group_size), ok.reshape(-1, group_size), counts



def steps_from_results(results: Sequence[RewardResult]) -> tuple[F64, Bool]:
    """Process rewards (`RewardResult.steps`) as a padded `(batch, max_steps)` array + prefix mask.

    A result that is not `ok`, or carries no steps, becomes an all-False row (NaN values): it is
    kept in place, so row i is still sample i, and nothing is turned into a 0.
    """
    width = max((len(r.steps) for r in results if r.status is Status.OK and r.steps), default=0)
    steps = np.full((len(results), width), np.nan)
    mask = np.zeros((len(results), width), dtype=bool)
    for i, result in enumerate(results):
        if result.status is Status.OK and result.steps:
            n = len(result.steps)
            steps[i, :n] = result.steps
            mask[i, :n] = True
    return steps, mask

#: estimators `advantages_by_group` (and `rewardlab advantages`) can apply by name
OUTCOME_ESTIMATORS = ("grpo", "dr_grpo", "rloo", "reinforce_pp")


@dataclass(frozen=True)
class GroupedAdvantages:
    """Advantages of a flat batch grouped by prompt id, with what carried no signal.

    Attributes:
        advantages: `(batch,)` in the input's row order; NaN where the row had no score.
        groups: number of distinct group ids.
        zero_variance_groups: groups whose valid scores are all equal (or that have < 2).
        unscored_rows: rows excluded because they had no score (errors, skips).
    """

    advantages: F64
    groups: int
    zero_variance_groups: int
    unscored_rows: int


def advantages_by_group(
    scores: Any,
    group_ids: Sequence[Any] | np.ndarray,
    mask: Any = None,
    *,
    estimator: str = "grpo",
) -> GroupedAdvantages:
    """Group a flat batch by id, apply an outcome estimator, and return it in row order.

    Args:
        scores: `(batch,)` rewards; entries with `mask=False` may be NaN.
        group_ids: `(batch,)` prompt ids (any hashable), rows of a group in any order.
        mask: `(batch,)` rows that hold a score.
        estimator: one of `OUTCOME_ESTIMATORS`.
    """
    from rewardlab.credit import outcome
    from rewardlab.shape.zero_variance import zero_variance

    if estimator not in OUTCOME_ESTIMATORS:
        raise ArrayError("estimator", f"unknown {estimator!r}; choose from {', '.join(OUTCOME_ESTIMATORS)}")
    flat = to_numpy(scores, "scores", ndim=1)
    ok = np.ones(flat.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if ok.shape != flat.shape:
        raise ArrayError("mask", f"needs one entry per row ({flat.shape[0]}), got shape {ok.shape}")
    packed = pack(flat, group_ids, ok)
    adv = np.asarray(getattr(outcome, estimator)(packed.values, packed.mask))
    out = np.where(ok, packed.unpack(adv), np.nan)
    flat_groups = np.asarray(zero_variance(packed.values, packed.mask))
    return GroupedAdvantages(
        advantages=out,
        groups=len(packed.keys),
        zero_variance_groups=int(flat_groups.sum()),
        unscored_rows=int((~ok).sum()),
    )
