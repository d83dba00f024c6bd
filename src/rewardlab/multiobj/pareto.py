"""Pareto tools on groups of reward vectors: fronts, crowding, selection, advantages, hypervolume.

Every objective is *maximised* (they are rewards; negate a cost in the objective's formula).
`a` dominates `b` when `a >= b` on every objective and `a > b` on one. Equal vectors do not
dominate each other, so duplicates of a front point are on the front too.

Shapes: a group function takes `vectors` `(groups, samples, objectives)` and `mask`
`(groups, samples)` (entries without a whole vector are `False`: never selected, advantage 0);
the set functions (`pareto_ranks`, `hypervolume`) take the `(n, objectives)` points of one set.

Non-dominated sorting and the hypervolume are moocore's (C; pymoo's own `NonDominatedSorting`
calls it), imported on first use: without the `multiobj` extra they raise `DependencyError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rewardlab._lazy import require
from rewardlab.errors import ArrayError, ConfigError
from rewardlab.multiobj.vectors import Method, _vectors, normalize_objectives
from rewardlab.shape._arrays import F64, Bool, check_finite, like, to_mask, to_numpy
from rewardlab.shape.normalize import zscore

__all__ = [
    "ParetoAdvantages",
    "crowding_distance",
    "group_hypervolumes",
    "hypervolume",
    "pareto_advantages",
    "pareto_front",
    "pareto_ranks",
    "pareto_select",
]


def _points(points: Any, mask: Any, name: str = "points") -> tuple[F64, Bool]:
    values = to_numpy(points, name, ndim=2)
    valid = to_mask(mask, "mask", values.shape[:1])
    check_finite(values, name, np.repeat(valid[:, None], values.shape[1], axis=1))
    return values, valid


def pareto_ranks(points: Any, mask: Any = None) -> np.ndarray:
    """The front of each point, 0 for the non-dominated ones (moocore's `pareto_rank`), -1
    where `mask` is False. `points` is `(n, objectives)`; every objective is maximised."""
    return _ranks(*_points(points, mask))


def _ranks(values: F64, valid: Bool) -> np.ndarray:
    """`pareto_ranks` of checked arrays (the group functions check a whole batch once, then call
    this per group: checking each group again cost more than moocore's sort of it)."""
    out = np.full(values.shape[0], -1, dtype=np.int64)
    # moocore minimises; its `maximise=True` negates a copy more slowly than numpy does here
    if valid.all():
        out[:] = _moocore().pareto_rank(-values)
    elif valid.any():
        out[valid] = _moocore().pareto_rank(-values[valid])
    return out


def _moocore() -> Any:
    return require("moocore", needed_by="rewardlab.multiobj")


def pareto_front(points: Any, mask: Any = None) -> F64:
    """The distinct non-dominated points of a set, sorted on the first objective (then the next)."""
    values, valid = _points(points, mask)
    ranks = pareto_ranks(values, valid)
    front = np.unique(values[ranks == 0], axis=0)
    return front[np.lexsort(front.T[::-1])] if front.size else front


def _crowding(front: F64) -> F64:
    """NSGA-II crowding distance of the points of one front (Deb et al. 2002, "A fast and
    elitist multiobjective genetic algorithm: NSGA-II", its density estimate): per objective, the
    normalised gap between each point's two neighbours; the extremes are infinite."""
    n, k = front.shape
    if n <= 2:
        return np.full(n, np.inf)
    distance = np.zeros(n)
    for j in range(k):
        order = np.argsort(front[:, j], kind="mergesort")
        column = front[order, j]
        span = column[-1] - column[0]
        distance[order[0]] = distance[order[-1]] = np.inf
        if span > 0:  # an objective on which the whole front agrees says nothing about spacing
            distance[order[1:-1]] += (column[2:] - column[:-2]) / span
    return distance


def crowding_distance(vectors: Any, mask: Any = None) -> Any:
    """Crowding distance of each sample within its front of its group (`inf` at the extremes
    of a front, 0 where masked). Larger is lonelier: NSGA-II's tie-breaker inside a front."""
    values, valid = _vectors(vectors, mask)
    out = np.zeros(values.shape[:2])
    for g in range(values.shape[0]):
        idx = np.flatnonzero(valid[g])
        if idx.size == 0:
            continue
        ranks = _ranks(values[g, idx], np.ones(idx.size, dtype=bool))
        for r in np.unique(ranks):
            members = idx[ranks == r]
            out[g, members] = _crowding(values[g, members])
    return like(out, vectors)


def group_ranks(values: F64, valid: Bool) -> np.ndarray:
    """`(groups, samples)` front index within each group, -1 where masked."""
    ranks = np.full(values.shape[:2], -1, dtype=np.int64)
    for g in range(values.shape[0]):
        ranks[g] = _ranks(values[g], valid[g])
    return ranks


def pareto_select(vectors: Any, mask: Any = None) -> Any:
    """Parrot's batch-wise Pareto-optimal selection, per group: True exactly on the samples no
    other valid sample of the group dominates (Lee et al. 2024, "Parrot: Pareto-optimal
    Multi-Reward Reinforcement Learning Framework for Text-to-Image Generation",
    arXiv:2401.05675: the policy gradient is taken over the non-dominated set of each batch only).

    Args:
        vectors: `(groups, samples, objectives)`, every objective maximised.
        mask: `(groups, samples)` valid entries; masked ones are never selected.

    Returns:
        `(groups, samples)` bool.
    """
    values, valid = _vectors(vectors, mask)
    return group_ranks(values, valid) == 0


@dataclass(frozen=True)
class ParetoAdvantages:
    """Advantages and which samples carry them.

    Attributes:
        advantages: `(groups, samples)`; 0 where `selected` is False.
        selected: `(groups, samples)` bool: the samples the update uses.
        ranks: `(groups, samples)` front index within the group (-1 masked).
    """

    advantages: Any
    selected: Any
    ranks: np.ndarray


def pareto_advantages(
    vectors: Any,
    mask: Any = None,
    *,
    method: Literal["parrot", "nsga"] = "parrot",
    weights: Any = None,
    normalize: Method = "z",
) -> ParetoAdvantages:
    """Per-group advantages from reward vectors, by Pareto dominance.

    `parrot` (Lee et al. 2024, batch-wise Pareto-optimal selection): each objective is normalised within the group
    (`normalize`, so no objective wins by scale), summed with `weights` (default equal), and
    z-scored within the group as GRPO does; only the non-dominated samples keep their
    advantage, the dominated ones get 0 (no gradient: Parrot updates on the Pareto set only).

    `nsga`: every valid sample is ordered as NSGA-II orders a population (front index first,
    then larger crowding distance first: the crowded-comparison operator of Deb et al. 2002) and its advantage is the z-score of that order within the group; no objective
    weights enter.

    Args:
        vectors: `(groups, samples, objectives)`.
        mask: `(groups, samples)` valid entries (advantage 0, never selected).
        method: `parrot` or `nsga`.
        weights: `(objectives,)` for `parrot`.
        normalize: the per-objective group transform for `parrot` (`normalize_objectives`).
    """
    values, valid = _vectors(vectors, mask)
    ranks = group_ranks(values, valid)
    if method == "parrot":
        k = values.shape[2]
        w = np.ones(k) if weights is None else to_numpy(weights, "weights", ndim=1)
        if w.shape != (k,):
            raise ArrayError("weights", f"need one weight per objective ({k}), got {w.shape[0]}")
        check_finite(w, "weights")
        total = np.asarray(normalize_objectives(values, valid, method=normalize)) @ w
        selected = ranks == 0
        advantages = np.where(selected, np.asarray(zscore(total, valid)), 0.0)
    elif method == "nsga":
        if weights is not None:
            raise ConfigError("method='nsga' uses no objective weights; pass weights only with method='parrot'")
        crowd = np.asarray(crowding_distance(values, valid))
        # crowded comparison as one number: the front first, crowding breaks ties inside it
        order = np.where(valid, -ranks.astype(np.float64), 0.0)
        within = np.asarray(_tie_break(crowd, ranks, valid))
        selected = valid
        advantages = np.asarray(zscore(order + 0.5 * within, valid))
    else:
        raise ConfigError(f"method must be 'parrot' or 'nsga', got {method!r}")
    return ParetoAdvantages(like(advantages, vectors), like(selected, vectors), ranks)


def _tie_break(crowd: F64, ranks: np.ndarray, valid: Bool) -> F64:
    """Within each front of each group, the crowding order scaled to [0, 1] (1 = loneliest)."""
    out = np.zeros(crowd.shape)
    for g in range(crowd.shape[0]):
        for r in np.unique(ranks[g][valid[g]]):
            members = np.flatnonzero((ranks[g] == r) & valid[g])
            if members.size > 1:
                c = np.nan_to_num(crowd[g, members], posinf=np.finfo(np.float64).max)
                order = np.argsort(np.argsort(c, kind="mergesort"), kind="mergesort")
                out[g, members] = order / (members.size - 1)
            else:
                out[g, members] = 1.0
    return out


def hypervolume(points: Any, ref: Any, mask: Any = None) -> float:
    """The volume dominated by `points` (`(n, objectives)`, maximised) and bounded below by
    `ref` (moocore's `hypervolume`); points not above `ref` on every objective add nothing."""
    values, valid = _points(points, mask)
    return _hypervolume(values, valid, _reference(ref, values.shape[1]))


def group_hypervolumes(vectors: Any, ref: Any, mask: Any = None) -> np.ndarray:
    """`hypervolume` of each group's valid samples: `(groups,)` from `vectors`
    `(groups, samples, objectives)` (the arrays are checked once, not per group)."""
    values, valid = _vectors(vectors, mask)
    reference = _reference(ref, values.shape[2])
    return np.array([_hypervolume(values[g], valid[g], reference) for g in range(values.shape[0])])


def _reference(ref: Any, objectives: int) -> F64:
    if objectives == 0:
        raise ArrayError("points", "need at least one objective: a volume has a dimension per objective")
    reference = to_numpy(ref, "ref", ndim=1)
    if reference.shape != (objectives,):
        raise ArrayError("ref", f"needs one coordinate per objective ({objectives}), got {reference.shape[0]}")
    check_finite(reference, "ref")
    return reference


def _hypervolume(values: F64, valid: Bool, reference: F64) -> float:
    kept = values if valid.all() else values[valid]
    if kept.shape[0] == 0:
        return 0.0
    # minimised, as moocore computes it; it leaves out the points that do not strictly dominate
    # the reference point itself (they bound no volume)
    return float(_moocore().hypervolume(-kept, ref=-reference))
