"""Exact expected credit over every n-subset of a problem's candidates, without listing them.

A problem's row has `width` slots; `mask` marks the candidates that exist (ragged sets are
padded), and n of them are drawn uniformly without replacement: a padding slot is never drawn.
A candidate that exists but cannot be picked (a NaN score) is drawn like any other and counts
as below everything. Running a selector on the drawn set gives a credit; the curves want its
mean over all `C(k, n)` draws of a row with k candidates. Listing the draws costs
`C(k, n) x n` per problem; two selectors have a closed form instead:

* oracle (some drawn candidate is right): `1 - C(k - c, n) / C(k, n)` with c right
  candidates, the unbiased pass@n estimator of Chen et al. 2021, eq. 1.
* best-of-n with ties broken uniformly: group the usable candidates by score. The drawn set's
  best group is g exactly when it holds a member of g and nothing above g, which has
  probability `(C(b_g + m_g, n) - C(b_g, n)) / C(k, n)` (b_g: candidates below g, unusable ones
  counted as below everything; m_g: members of g). Given that, the drawn members of g are a
  uniform subset of g, so the expected label of the pick is g's mean label. The expected credit
  is the sum over groups of the two products; a draw with no usable candidate abstains (0).

Both are the same numbers as averaging the selectors over every draw (checked by a test against
the listing), up to rounding.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import ArrayError

__all__ = ["expected_best_of_n", "expected_oracle"]

F64 = NDArray[np.float64]


def _comb_table(width: int, n: int) -> F64:
    """`C(k, n)` for k = 0..width, as floats (exact while below 2**53)."""
    return np.array([math.comb(k, n) for k in range(width + 1)], dtype=np.float64)


def _candidate_counts(mask: NDArray[np.bool_], n: int) -> NDArray[np.intp]:
    """Each row's number of candidates, which must be at least n."""
    counts: NDArray[np.intp] = np.count_nonzero(mask, axis=1)
    short = np.flatnonzero(counts < n)
    if short.size:
        row = int(short[0])
        raise ArrayError("mask", f"row {row} has {counts[row]} candidates, fewer than the {n} to draw")
    return counts


def expected_oracle(correct: F64, mask: NDArray[np.bool_], n: int) -> F64:
    """`(problems,)` probability that n candidates drawn from each row hold a right one.

    Examples:
        >>> expected_oracle(np.array([[1.0, 0.0, 0.0, 0.0]]), np.ones((1, 4), bool), 2).tolist()
        [0.5]
    """
    counts = _candidate_counts(mask, n)
    right = np.count_nonzero(mask & (correct == 1.0), axis=1)
    comb = _comb_table(correct.shape[1], n)
    out: F64 = 1.0 - comb[counts - right] / comb[counts]
    return out


def expected_best_of_n(scores: F64, correct: F64, mask: NDArray[np.bool_], n: int) -> F64:
    """`(problems,)` expected label of best-of-n's pick over every n-subset of each row's candidates.

    NaN scores are drawn but never picked, padding (mask False) is never drawn (as in
    `best_of_n`); labels are read as given (NaN labels must be filled by the caller).

    Examples:
        >>> s = np.array([[0.9, 0.9, 0.1]]); y = np.array([[1.0, 0.0, 1.0]])
        >>> expected_best_of_n(s, y, np.ones((1, 3), bool), 1).tolist()  # each slot alone: 2/3 right
        [0.6666666666666666]
    """
    problems, width = scores.shape
    counts = _candidate_counts(mask, n)
    usable = mask & ~np.isnan(scores)
    keyed = np.where(usable, scores, -np.inf)
    order = np.argsort(keyed, axis=1, kind="stable")
    ranked = np.take_along_axis(keyed, order, axis=1)
    labels = np.where(np.take_along_axis(usable, order, axis=1), np.take_along_axis(correct, order, axis=1), 0.0)
    # A run of equal scores is a group: for every slot, where its group starts (b_g) and ends (b_g + m_g).
    columns = np.broadcast_to(np.arange(width), (problems, width))
    new = np.ones((problems, width), dtype=bool)
    new[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
    start = np.maximum.accumulate(np.where(new, columns, 0), axis=1)
    last = np.ones((problems, width), dtype=bool)
    last[:, :-1] = new[:, 1:]
    end = np.minimum.accumulate(np.where(last, columns + 1, width)[:, ::-1], axis=1)[:, ::-1]
    # Padding sorts first (at -inf, with the unusable candidates) and is never drawn: positions
    # are counted from the first candidate that exists.
    padding = (width - counts)[:, None]
    start, end = np.maximum(start - padding, 0), np.maximum(end - padding, 0)
    comb = _comb_table(width, n)
    # each member carries its group's probability of being best, shared over the group's members
    share = (comb[end] - comb[start]) / (comb[counts][:, None] * np.maximum(end - start, 1))
    out: F64 = np.einsum("ij,ij->i", share, labels)
    return out
