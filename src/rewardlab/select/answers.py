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
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import ArrayError

__all__ = ["Equivalence", "answer_classes", "pad_answers", "renumber_classes"]

Equivalence = Literal["exact", "normalized", "math"]
I64 = NDArray[np.int64]


def pad_answers(answers: Sequence[Sequence[str | None]]) -> tuple[NDArray[np.object_], NDArray[np.bool_]]:
    """Ragged answer lists as a `(problems, n_max)` object array (None-padded) and its mask."""
    width = max((len(row) for row in answers), default=0)
    out = np.full((len(answers), width), None, dtype=object)
    for i, row in enumerate(answers):
        out[i, : len(row)] = list(row)
    present = np.frompyfunc(lambda a: a is not None, 1, 1)(out).astype(bool) if out.size else np.zeros(out.shape, bool)
    return out, present


def _first_appearance_ids(keys: I64, present: NDArray[np.bool_]) -> I64:
    """Per-row class ids numbered by first appearance, from global integer keys `(P, n)`."""
    problems, n = keys.shape
    out = np.full(keys.shape, -1, dtype=np.int64)
    if not present.any():
        return out
    big = int(keys[present].max()) + 1
    rows = np.broadcast_to(np.arange(problems, dtype=np.int64)[:, None], keys.shape)
    combined = rows[present] * big + keys[present]  # one id per (problem, answer)
    uniq, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    cols = np.broadcast_to(np.arange(n, dtype=np.int64), keys.shape)[present]
    uniq_row, uniq_col = uniq // big, cols[first]
    order = np.lexsort((uniq_col, uniq_row))  # by problem, then by first column
    starts = np.searchsorted(uniq_row[order], uniq_row[order], side="left")
    local = np.empty(len(uniq), dtype=np.int64)
    local[order] = np.arange(len(uniq)) - starts
    out[present] = local[inverse.ravel()]
    return out


def renumber_classes(classes: NDArray[np.int64]) -> I64:
    """Class ids renumbered `0..k-1` by first appearance in each row (-1 stays -1); used after
    taking a subset of candidates, whose ids may exceed the subset's width."""
    c = np.asarray(classes, dtype=np.int64)
    return _first_appearance_ids(np.maximum(c, 0), c >= 0)


def _string_keys(padded: NDArray[np.object_], present: NDArray[np.bool_], equivalence: Equivalence) -> I64:
    if equivalence == "normalized":
        from rewardlab.verify.text import normalize_text

        texts = [normalize_text(str(a)) for a in padded[present]]
    else:
        texts = [str(a) for a in padded[present]]
    keys = np.zeros(padded.shape, dtype=np.int64)
    if texts:
        _, inverse = np.unique(np.array(texts, dtype=object).astype(str), return_inverse=True)
        keys[present] = inverse.ravel()
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
