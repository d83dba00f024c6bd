"""Answer equivalence classes for votes: `answer_classes(answers, equivalence=...)`.

A vote counts answers, so candidates whose answers mean the same must share a class. Three
notions of "the same":

- `"exact"`: equal strings;
- `"normalized"`: equal after `verify.text.normalize_text` (NFKC, case-folded, whitespace
  collapsed);
- `"math"`: equivalent under `verify.math.check` (`\\frac{1}{2}`, `0.5` and `\\dfrac12` are one
  class). Exactly equal strings are grouped first (vectorised); only the distinct answers of a
  problem are then compared, each against the first-seen member of every class so far, which
  is passed as the `reference` (it fixes the precision a decimal must have). An undecided
  verdict never merges two classes.

Class ids are `(problems, n)` int64 in order of first appearance within each problem (so the
first-seen answer wins a tie under `ties="first"`); `-1` marks a missing answer or padding.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import ArrayError

__all__ = ["Equivalence", "answer_classes", "pad_answers", "renumber_classes"]

Equivalence = Literal["exact", "normalized", "math"]
I64 = NDArray[np.int64]


def pad_answers(answers: Sequence[Sequence[str | None]]) -> tuple[NDArray[np.object_], NDArray[np.bool_]]:
    """Ragged answer lists as a `(problems, n_max)` object array (None-padded) and its mask."""
    lengths = np.fromiter(map(len, answers), dtype=np.int64, count=len(answers))
    width = int(lengths.max(initial=0))
    flat = np.fromiter(chain.from_iterable(answers), dtype=object, count=int(lengths.sum()))
    if (lengths == width).all():
        out = flat.reshape(len(answers), width)
    else:
        out = np.full((len(answers), width), None, dtype=object)
        out[np.arange(width)[None, :] < lengths[:, None]] = flat  # row-major, as chained
    return out, np.asarray(out != None, dtype=bool)  # noqa: E711 (elementwise)


def _first_appearance_ids(keys: I64, present: NDArray[np.bool_]) -> I64:
    """Per-row class ids numbered by first appearance, from integer keys `(P, n)`.

    Row-wise stable sort (no global `np.unique`): equal keys become adjacent with their first
    column leading; a group's id is the number of groups whose first column comes earlier.
    """
    n = keys.shape[1]
    if n == 0:
        return np.full(keys.shape, -1, dtype=np.int64)
    sentinel = np.iinfo(np.int64).max  # absent entries sort last and never start a class
    k = np.where(present, keys, sentinel)
    order = np.argsort(k, axis=1, kind="stable")
    ordered = np.take_along_axis(k, order, axis=1)
    starts = np.ones(ordered.shape, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    starts &= ordered != sentinel
    # the sorted position where each position's group starts, then that start's column
    start_pos = np.maximum.accumulate(np.where(starts, np.arange(n), 0), axis=1)
    first_col = np.take_along_axis(order, start_pos, axis=1)
    is_first = np.zeros(keys.shape, dtype=bool)
    np.put_along_axis(is_first, order, starts, axis=1)
    rank = np.cumsum(is_first, axis=1) - 1  # id of a class, at its first column
    ids_sorted = np.take_along_axis(rank, first_col, axis=1)
    out = np.empty(keys.shape, dtype=np.int64)
    np.put_along_axis(out, order, ids_sorted, axis=1)
    return np.where(present, out, -1)


def renumber_classes(classes: NDArray[np.int64]) -> I64:
    """Class ids renumbered `0..k-1` by first appearance in each row (-1 stays -1); used after
    taking a subset of candidates, whose ids may exceed the subset's width."""
    c = np.asarray(classes, dtype=np.int64)
    return _first_appearance_ids(np.maximum(c, 0), c >= 0)


def _factorize(values: Sequence[object]) -> tuple[I64, list[object]]:
    """Integer codes of `values` (equal values, equal codes) and the distinct values in
    first-seen order: one dict look-up per value, no sort of the strings."""
    distinct = list(dict.fromkeys(values))
    index = {v: i for i, v in enumerate(distinct)}
    codes = np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
    return codes, distinct


def _string_keys(padded: NDArray[np.object_], present: NDArray[np.bool_], equivalence: Equivalence) -> I64:
    """Integer keys per answer: equal keys, equal (exact or normalised) answers. Normalisation
    runs once per distinct string, not once per candidate."""
    values = padded[present].tolist()
    codes, distinct = _factorize(values)
    if not all(type(v) is str for v in distinct):  # 1, 1.0 and True share a dict key; their strings differ
        codes, distinct = _factorize(list(map(str, values)))
    if equivalence == "normalized" and distinct:
        from rewardlab.verify.text import normalize_text

        canonical, _ = _factorize([normalize_text(str(a)) for a in distinct])
        codes = canonical[codes]
    keys = np.zeros(padded.shape, dtype=np.int64)
    keys[present] = codes
    return keys


def _merge_math(classes: I64, padded: NDArray[np.object_], options: object | None) -> I64:
    """Merge exact-string classes whose answers `verify.math.check` finds equivalent."""
    from rewardlab.verify.math import check

    out = classes.copy()
    for row in np.flatnonzero(classes.max(axis=1, initial=-1) >= 1):  # problems with >1 string
        ids = classes[row]
        firsts = [int(np.argmax(ids == k)) for k in range(int(ids.max()) + 1)]
        reps: list[str] = []  # first-seen answer of each merged class
        mapping: list[int] = []
        for col in firsts:
            answer = str(padded[row, col])
            target = next((j for j, rep in enumerate(reps) if check(rep, answer, options).equivalent), None)  # type: ignore[arg-type]
            if target is None:
                reps.append(answer)
                target = len(reps) - 1
            mapping.append(target)
        lookup = np.array(mapping, dtype=np.int64)
        out[row] = np.where(ids >= 0, lookup[np.maximum(ids, 0)], -1)
    return out


def answer_classes(
    answers: Sequence[Sequence[str | None]] | NDArray[np.object_],
    *,
    equivalence: Equivalence = "math",
    options: object | None = None,
) -> I64:
    """`(problems, n_max)` answer-class ids for ragged per-problem answer lists.

    Args:
        answers: per problem, each candidate's extracted final answer (None: no answer).
        equivalence: `"exact"`, `"normalized"` or `"math"` (see the module docstring).
        options: a `verify.math.CheckOptions` for `"math"` (default options otherwise).

    Example:
        >>> answer_classes([["\\\\frac{1}{2}", "0.5", "3"]], equivalence="math").tolist()
        [[0, 0, 1]]
        >>> answer_classes([["a", None, "a"]], equivalence="exact").tolist()
        [[0, -1, 0]]
    """
    if equivalence not in ("exact", "normalized", "math"):
        raise ArrayError("equivalence", f"must be 'exact', 'normalized' or 'math', got {equivalence!r}")
    padded, present = pad_answers(answers) if not isinstance(answers, np.ndarray) else (answers, answers != None)  # noqa: E711
    if padded.ndim != 2:
        raise ArrayError("answers", f"must be per-problem lists of answers, got shape {padded.shape}")
    present = np.asarray(present, dtype=bool)
    keys = _string_keys(padded, present, equivalence)
    classes = _first_appearance_ids(keys, present)
    if equivalence == "math":
        classes = _merge_math(classes, padded, options)
    return classes
