"""Input checks shared by the metric functions: arrays of the right shape, or a typed error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np

from rewardlab.errors import InputError

#: What metric functions accept: a list/tuple of numbers or a numpy array.
Numbers: TypeAlias = Sequence[float] | np.ndarray


def as_1d(values: Numbers, what: str, *, where: str) -> np.ndarray:
    """`values` as a 1-D float array with only finite entries, else `InputError` naming `what`."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise InputError(f"{what} must be a 1-D sequence of numbers, got shape {array.shape}", source=where)
    if array.size and not np.all(np.isfinite(array)):
        bad = int(np.flatnonzero(~np.isfinite(array))[0])
        raise InputError(
            f"{what}[{bad}] is {array[bad]}; drop or fix non-finite scores before computing metrics "
            "(error results are counted separately, never as a number)",
            source=where,
        )
    return array


def same_length(where: str, **arrays: np.ndarray) -> int:
    """The common length of `arrays`, else `InputError` listing each length."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise InputError(f"inputs must have the same length, got {shown}", source=where)
    return next(iter(lengths.values()), 0)


def non_empty(n: int, where: str) -> None:
    if n == 0:
        raise InputError("no items to evaluate; pass at least one", source=where)


def as_binary(values: Numbers, what: str, *, where: str) -> np.ndarray:
    """0/1 labels as a bool array; anything other than 0, 1, True, False is an `InputError`."""
    array = as_1d(values, what, where=where)
    if not np.all((array == 0) | (array == 1)):
        bad = int(np.flatnonzero((array != 0) & (array != 1))[0])
        raise InputError(f"{what}[{bad}] is {array[bad]}; expected a 0/1 label", source=where)
    return array.astype(bool)
