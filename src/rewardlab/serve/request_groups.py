"""Requests of whole groups: how the clients cut a group reward's batch (`rewardlab.runner.groups`).

A group reward's server scores the groups of one request, so the client sends every group in
one request, and halves a request the server refuses as too large only between groups.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from rewardlab.core import GroupKey, Sample
from rewardlab.core.reward import group_id
from rewardlab.core.sample import text_of
from rewardlab.errors import GroupSplitError, ServerError
from rewardlab.runner.groups import units_of

__all__ = ["group_pieces", "halves", "rows_of"]


def _group_of(sample: Sample | Mapping[str, Any], key: GroupKey) -> str | None:
    if isinstance(sample, Sample):
        return group_id(sample, key)
    if key == "group":
        value = sample.get("group")
        return None if value is None else str(value)
    return text_of(sample.get("prompt"))


def group_pieces(samples: Sequence[Sample | Mapping[str, Any]], keys: Collection[GroupKey], size: int) -> list[list[list[int]]]:
    """Requests of whole groups: per request, its groups (lists of positions), about `size` samples."""
    pieces: list[list[list[int]]] = [[]]
    count = 0
    for unit in units_of(samples, keys, id_of=_group_of):
        if pieces[-1] and count + len(unit) > size:
            pieces.append([])
            count = 0
        pieces[-1].append(unit)
        count += len(unit)
    return [p for p in pieces if p]


def halves(units: list[list[int]], exc: ServerError) -> tuple[list[list[int]], list[list[int]]]:
    """A refused request of whole groups in two; one group that is too large cannot be cut."""
    if len(units) == 1:
        raise GroupSplitError(
            f"a group of {len(units[0])} samples is more than the server takes in one request ({exc.code}: {exc}); "
            "a group reward must see a whole group in one request: raise the server's limits (--max-samples, "
            "--max-queue) or make the groups smaller"
        ) from exc
    return units[: len(units) // 2], units[len(units) // 2 :]


def rows_of(units: list[list[int]]) -> list[int]:
    """The positions of `units`, in order."""
    return [i for unit in units for i in unit]
