"""Reward vectors as arrays: from results to `(groups, samples, objectives)`, and normalised
one objective at a time.

Shapes: `vectors` is `(groups, samples, objectives)` float64 and `mask` is `(groups, samples)`
bool (a response is scored on every objective or left out). A result whose status is not ok, or
whose vector misses an objective (`None`: a component skipped), is `mask=False`: it is counted,
never read as 0.

Normalising each objective on its own scale before comparing or summing them is the GDPO point
(`shape.normalize_then_sum`) made per objective: `normalize_objectives` applies the group
transforms of `rewardlab.shape` (z, rank, min-max) to each objective; `RunningNormalizer` keeps
a running mean and variance per objective across batches (Welford's update, with Chan et al.'s
merge of a batch), for objectives whose scale only shows over many groups.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rewardlab.core.result import RewardResult, Status
from rewardlab.errors import ArrayError, ConfigError
from rewardlab.shape._arrays import EPS, F64, Bool, check_finite, like, to_mask, to_numpy
from rewardlab.shape.normalize import center, minmax, rank, zscore

__all__ = ["ObjectiveArrays", "RunningNormalizer", "normalize_objectives", "objective_arrays", "vectors_of"]

Method = Literal["z", "center", "rank", "minmax"]
_GROUP_TRANSFORMS = {"z": zscore, "center": center, "rank": rank, "minmax": minmax}


@dataclass(frozen=True)
class ObjectiveArrays:
    """Reward vectors of a batch, grouped.

    Attributes:
        names: the objectives, in the order of the last axis.
        values: `(groups, samples, objectives)`; entries with `mask=False` are NaN.
        mask: `(groups, samples)`, True where the whole vector was computed.
        unscored: how many results were left out (not ok, or a missing objective).
    """

    names: tuple[str, ...]
    values: F64
    mask: Bool
    unscored: int


def vectors_of(results: Sequence[RewardResult], names: Sequence[str] | None = None) -> tuple[tuple[str, ...], F64, Bool]:
    """The flat `(n, objectives)` vectors of `results` and which rows hold a whole vector.

    `names` defaults to the objectives of the first result that has a vector.

    Raises:
        ArrayError: no result carries a vector and no `names` were given, or a vector lacks
            one of `names` entirely (a different spec, not a skipped component).
    """
    if names is None:
        first = next((r.objectives for r in results if r.objectives is not None), None)
        if first is None:
            raise ArrayError("results", "no result carries an objective vector; declare [[reward.objectives]] in the spec")
        names = tuple(first)
    names = tuple(names)
    values = np.full((len(results), len(names)), np.nan)
    valid = np.zeros(len(results), dtype=bool)
    for i, result in enumerate(results):
        vector = result.objectives
        if vector is None or result.status is Status.ERROR:
            continue
        unknown = [n for n in names if n not in vector]
        if unknown:
            raise ArrayError("results", f"row {i} has no objective {', '.join(unknown)} (objectives: {', '.join(vector)})")
        row = [vector[n] for n in names]
        if all(v is not None for v in row):
            values[i] = row
            valid[i] = True
    return names, values, valid


def objective_arrays(
    results: Sequence[RewardResult],
    group_size: int | None = None,
    names: Sequence[str] | None = None,
    *,
    groups: Sequence[Hashable] | None = None,
) -> ObjectiveArrays:
    """`results` as grouped arrays: consecutive runs of `group_size` (TRL's layout), or by a
    group id per row (`groups`, verl's `uid`: any order, groups of any size, padded with
    `mask=False`; groups in first-seen order, rows in their order within a group)."""
    if (group_size is None) == (groups is None):
        raise ConfigError("give exactly one of group_size (consecutive groups) or groups (a group id per row)")
    found, values, valid = vectors_of(results, names)
    k = len(found)
    if group_size is not None:
        if group_size < 1:
            raise ArrayError("group_size", f"must be >= 1, got {group_size}")
        if len(results) % group_size:
            raise ArrayError("results", f"has {len(results)} rows, not a multiple of group_size={group_size}")
        g = len(results) // group_size
        return ObjectiveArrays(found, values.reshape(g, group_size, k), valid.reshape(g, group_size), int((~valid).sum()))
    ids = list(groups or ())
    if len(ids) != len(results):
        raise ArrayError("groups", f"has {len(ids)} ids for {len(results)} results")
    members: dict[Hashable, list[int]] = {}
    for i, key in enumerate(ids):
        members.setdefault(key, []).append(i)
    width = max((len(m) for m in members.values()), default=0)
    packed = np.full((len(members), width, k), np.nan)
    mask = np.zeros((len(members), width), dtype=bool)
    for row, rows in enumerate(members.values()):
        packed[row, : len(rows)] = values[rows]
        mask[row, : len(rows)] = valid[rows]
    return ObjectiveArrays(found, packed, mask, int((~valid).sum()))


def _vectors(vectors: Any, mask: Any) -> tuple[F64, Bool]:
    values = to_numpy(vectors, "vectors", ndim=3)
    valid = to_mask(mask, "mask", values.shape[:2])
    check_finite(values, "vectors", np.repeat(valid[:, :, None], values.shape[2], axis=2))
    return values, valid


def normalize_objectives(vectors: Any, mask: Any = None, *, method: Method = "z") -> Any:
    """Each objective normalised within each group by `rewardlab.shape`'s transform `method`.

    `z` is `shape.zscore`, `center` `shape.center`, `rank` `shape.rank`, `minmax`
    `shape.minmax`, with their rules for constant groups and masked entries (0 for masked).

    Args:
        vectors: `(groups, samples, objectives)`.
        mask: `(groups, samples)` valid entries.
        method: which transform.
    """
    transform = _GROUP_TRANSFORMS.get(method)
    if transform is None:
        raise ConfigError(f"method must be one of {', '.join(_GROUP_TRANSFORMS)}, got {method!r}")
    values, valid = _vectors(vectors, mask)
    out = np.zeros_like(values)
    for k in range(values.shape[2]):  # a handful of objectives; each call is vectorised
        out[:, :, k] = transform(np.where(valid, values[:, :, k], 0.0), valid)
    return like(out, vectors)


class RunningNormalizer:
    """Per-objective running mean and variance across batches; `(x - mean) / (std + eps)`.

    `update` folds in a batch (Chan, Golub and LeVeque's parallel merge of Welford's
    statistics), `normalize` applies the statistics seen so far; `__call__` does both, the
    batch first, as `gymnasium.wrappers.NormalizeReward` does for a scalar.

    Args:
        objectives: the length of each vector.
        eps: added to the std before dividing.
    """

    def __init__(self, objectives: int, *, eps: float = EPS):
        if objectives < 1:
            raise ConfigError(f"objectives must be >= 1, got {objectives}")
        if not eps >= 0:
            raise ConfigError(f"eps must be >= 0, got {eps}")
        self.eps = eps
        self.count = 0
        self.mean = np.zeros(objectives)
        self._m2 = np.zeros(objectives)

    @property
    def std(self) -> F64:
        """The population std of every value seen, per objective (0 before two values)."""
        var = self._m2 / self.count if self.count > 1 else np.zeros_like(self._m2)
        return np.sqrt(var)

    def update(self, vectors: Any, mask: Any = None) -> None:
        """Fold the valid rows of `(n, objectives)` or `(groups, samples, objectives)` in."""
        rows = self._rows(vectors, mask)
        n = rows.shape[0]
        if n == 0:
            return
        batch_mean = rows.mean(axis=0)
        batch_m2 = ((rows - batch_mean) ** 2).sum(axis=0)
        total = self.count + n
        delta = batch_mean - self.mean
        self.mean = self.mean + delta * n / total
        self._m2 = self._m2 + batch_m2 + delta**2 * self.count * n / total
        self.count = total

    def normalize(self, vectors: Any, mask: Any = None) -> Any:
        """`vectors` standardised with the statistics so far (masked entries give 0)."""
        values = to_numpy(vectors, "vectors", ndim=(2, 3))
        self._check_width(values)
        valid = to_mask(mask, "mask", values.shape[:-1])
        scale = self.std + self.eps
        out = (values - self.mean) / np.where(scale > 0, scale, 1.0)  # eps=0 and no spread yet: centre only
        return like(np.where(valid[..., None], out, 0.0), vectors)

    def __call__(self, vectors: Any, mask: Any = None) -> Any:
        self.update(vectors, mask)
        return self.normalize(vectors, mask)

    def _rows(self, vectors: Any, mask: Any) -> F64:
        values = to_numpy(vectors, "vectors", ndim=(2, 3))
        self._check_width(values)
        valid = to_mask(mask, "mask", values.shape[:-1])
        rows = values[valid]
        check_finite(rows, "vectors")
        return rows

    def _check_width(self, values: F64) -> None:
        if values.shape[-1] != self.mean.shape[0]:
            raise ArrayError("vectors", f"has {values.shape[-1]} objectives, the normaliser {self.mean.shape[0]}")
