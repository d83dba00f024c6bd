"""Keeping a group reward's groups whole when a batch is cut into pieces.

A group reward (`rewardlab.core.group_keys`: majority vote, consensus, adaptive rubric weights)
scores each sample against the other members of its group, so every piece a runner hands to a
worker, a Ray task, a transaction or a request must hold whole groups; a group split across
two pieces is scored twice on parts of itself, and nothing says so.

A *unit* is the smallest set of samples that must stay together: the samples linked by sharing
a group id under any of the reward's keys (a composite with a `group` component and a `prompt`
component links both ways). A sample without a group under any key is a unit of its own; the
reward reports it (`invalid_input`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

from rewardlab.core import GroupKey, Sample
from rewardlab.core.reward import group_id
from rewardlab.errors import RunnerError

__all__ = ["pack_units", "scatter", "split_at_units", "units_of", "whole_groups_within"]

T = TypeVar("T")


def units_of(
    samples: Sequence[Any], keys: Collection[GroupKey], *, id_of: Callable[[Any, GroupKey], str | None] | None = None
) -> list[list[int]]:
    """Positions of `samples` in units (see the module doc), each unit in input order, units in
    the order of their first member. Without keys every sample is its own unit.

    `id_of(item, key)` gives an item's group id (default: `core.reward.group_id` for a `Sample`, None
    for anything else, e.g. the `RewardResult` of a row that could not be read: a unit of its own).
    """
    id_of = id_of or _sample_group
    parent = list(range(len(samples)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]  # path halving
            i = parent[i]
        return i

    for key in keys:
        first: dict[str, int] = {}
        for i, sample in enumerate(samples):
            gid = id_of(sample, key)
            if gid is None:
                continue
            j = first.setdefault(gid, i)
            a, b = root(i), root(j)
            if a != b:
                parent[max(a, b)] = min(a, b)  # the root is the earliest member
    units: dict[int, list[int]] = {}
    for i in range(len(samples)):
        units.setdefault(root(i), []).append(i)
    return list(units.values())


def _sample_group(item: Any, key: GroupKey) -> str | None:
    return group_id(item, key) if isinstance(item, Sample) else None


def pack_units(units: Sequence[list[int]], size: int) -> list[list[int]]:
    """Whole units packed, in order, into pieces of at most `size` positions; a unit larger
    than `size` is a piece of its own (it cannot be cut)."""
    pieces: list[list[int]] = []
    current: list[int] = []
    for unit in units:
        if current and len(current) + len(unit) > size:
            pieces.append(current)
            current = []
        current.extend(unit)
    if current:
        pieces.append(current)
    return pieces


def split_at_units(samples: Sequence[Sample], keys: Collection[GroupKey], size: int) -> list[list[int]]:
    """Positions of `samples` in pieces of about `size` that never cut a unit."""
    return pack_units(units_of(samples, keys), max(1, size))


def whole_groups_within(
    samples: Sequence[Any], keys: Collection[GroupKey], limit: int | None, ordinals: Sequence[int] | None = None
) -> list[int]:
    """The positions `--limit N` keeps for a group reward, in input order: every unit (see the
    module doc) with a member among the first `limit` input rows, with all its members, even
    those after row `limit`; a unit whose first member comes after row `limit` is left out.
    So no group is scored on a part of itself, and the output may hold more than `limit` rows.

    `ordinals[i]` is position i's input row (0-based; default `i`; rows exploded from one input
    row share it). `limit=None` keeps everything.
    """
    if limit is None:
        return list(range(len(samples)))
    ordinals = ordinals if ordinals is not None else range(len(samples))
    kept = [unit for unit in units_of(samples, keys) if ordinals[unit[0]] < limit]  # unit[0]: its first row
    return sorted(i for unit in kept for i in unit)


def scatter(pieces: Sequence[Sequence[int]], outputs: Sequence[Sequence[T]], n: int) -> list[T]:
    """The outputs of `pieces` (one per position, in piece order) back in input order."""
    out: list[T | None] = [None] * n
    for piece, values in zip(pieces, outputs, strict=True):
        for i, value in zip(piece, values, strict=True):
            out[i] = value
    missing = [i for i, v in enumerate(out) if v is None]
    if missing:
        raise RunnerError(f"positions {missing[:5]} got no output (internal error: pieces must cover every position)")
    return out  # type: ignore[return-value]
