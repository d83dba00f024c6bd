"""Selectors over candidate sets, vectorised over many problems at once.

Shapes: one row per problem, one column per candidate. `scores` is `(problems, n)` float (NaN:
no score — an error result or a missing value, never read as 0), `classes` is `(problems, n)`
int answer-class ids (`-1`: no answer; ids come from `answer_classes`, equal ids mean
equivalent answers), `mask` marks the candidates that exist (ragged sets are padded).

Every selector returns a `Selection`: the candidate it picks per problem (`chosen`, ties broken
by input order, `-1` when it abstains) and `weight`, the probability that each candidate's
answer is the one returned when ties are broken uniformly at random. `Selection.accuracy(correct)`
is the expected accuracy (ties credited with their mean correctness, so results do not depend on
row order); `accuracy(correct, ties="first")` is the input-order rule of Qwen2.5-Math's
`evaluation/rm_maj_eval.py` (`list.index(max)`, `Counter.most_common`).

Methods:
- best-of-n: the highest score (Cobbe et al. 2021, "Training Verifiers to Solve Math Word
  Problems", arXiv:2110.14168).
- majority vote / self-consistency: the most frequent answer class (Wang et al. 2023,
  arXiv:2203.11171).
- reward-weighted vote: the class with the largest total weight (Li et al. 2023, "Making
  Large Language Models Better Reasoners with Step-Aware Verifier", arXiv:2206.02336).
- hybrid: restrict to the `top_k` most voted classes, then best-of-n inside them.
- confidence-filtered vote: vote among the candidates whose confidence is in the top `keep`
  share of their problem (or above `min_score`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import ArrayError

__all__ = [
    "Selection",
    "Ties",
    "best_of_n",
    "filtered_vote",
    "hybrid_vote",
    "majority_vote",
    "weighted_vote",
]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
Bool = NDArray[np.bool_]
Ties = Literal["expected", "first"]


@dataclass(frozen=True)
class Selection:
    """What a selector picked for every problem.

    Attributes:
        chosen: `(problems,)` index of the picked candidate (first in input order among ties);
            `-1` when the problem had no usable candidate.
        weight: `(problems, n)` probability that each candidate's answer is returned under
            uniform random tie-breaking; each row sums to 1, or to 0 for an abstention.
    """

    chosen: I64
    weight: F64

    @property
    def abstained(self) -> int:
        """Problems with no usable candidate (nothing to pick: counted, credited 0)."""
        return int((self.chosen < 0).sum())

    def credit(self, correct: Any, *, ties: Ties = "expected") -> F64:
        """`(problems,)` credit per problem: the expected correctness of the returned answer."""
        y = _as_2d(correct, "correct", self.weight.shape, dtype=np.float64)
        if ties == "first":
            rows = np.arange(len(self.chosen))
            picked = y[rows, np.maximum(self.chosen, 0)]
            return np.where(self.chosen >= 0, picked, 0.0)
        if ties != "expected":
            raise ArrayError("ties", f"must be 'expected' or 'first', got {ties!r}")
        credit: F64 = np.einsum("ij,ij->i", y, self.weight)  # row sums of products in one pass
        unknown = np.isnan(credit)
        if unknown.any():  # NaN labels of candidates that cannot be returned stay out
            rows = np.flatnonzero(unknown)
            credit[rows] = np.einsum("ij,ij->i", np.where(self.weight[rows] > 0, y[rows], 0.0), self.weight[rows])
        return credit

    def accuracy(self, correct: Any, *, ties: Ties = "expected") -> float:
        """Mean credit over problems (an abstention counts as wrong)."""
        return float(self.credit(correct, ties=ties).mean())


def _as_2d(x: Any, name: str, shape: tuple[int, ...] | None = None, *, dtype: Any = np.float64) -> NDArray[Any]:
    try:
        arr = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ArrayError(name, f"cannot be read as a (problems, candidates) array ({exc})") from exc
    if arr.ndim != 2:
        raise ArrayError(name, f"must be (problems, candidates), got shape {arr.shape}")
    if shape is not None and arr.shape != shape:
        raise ArrayError(name, f"has shape {arr.shape}, expected {shape}")
    return arr


def _mask(mask: Any, shape: tuple[int, ...]) -> Bool:
    if mask is None:
        return np.ones(shape, dtype=bool)
    return _as_2d(mask, "mask", shape, dtype=bool)


def _classes(classes: Any, mask: Any) -> tuple[I64, Bool | None]:
    """Class ids and which candidates vote; None for "every candidate" (the common case, which
    then skips building and applying a mask)."""
    c = _as_2d(classes, "classes", dtype=np.int64)
    if not c.size:
        return c, np.zeros(c.shape, dtype=bool)
    if int(c.max()) >= c.shape[1]:
        raise ArrayError("classes", f"ids must be in [-1, {c.shape[1]}) (use answer_classes to build them)")
    if mask is None and int(c.min()) >= 0:
        return c, None
    return c, _mask(mask, c.shape) & (c >= 0)


def _full(valid: Bool | None, shape: tuple[int, ...]) -> Bool:
    return np.ones(shape, dtype=bool) if valid is None else valid


# Problems are processed in blocks of rows: the temporaries of a block stay in cache (1M
# candidates in one block spend most of their time faulting in fresh pages).
_BLOCK_ROWS = 4096


class _Scratch:
    """Temporaries reused by every block of one call: a block's arrays are a few hundred KB,
    above malloc's mmap threshold, so fresh ones per block would be mapped, faulted in and
    unmapped each time."""

    def __init__(self) -> None:
        self._buffers: dict[str, NDArray[Any]] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype: Any = np.float64) -> NDArray[Any]:
        """A contiguous `shape` array backed by the buffer `name` (grown when too small)."""
        size = int(np.prod(shape))
        buffer = self._buffers.get(name)
        if buffer is None or buffer.size < size or buffer.dtype != dtype:
            buffer = self._buffers[name] = np.empty(size, dtype=dtype)
        return buffer[:size].reshape(shape)


def _blocked(fn: Callable[..., I64], shape: tuple[int, int], *arrays: NDArray[Any] | None) -> Selection:
    """`fn(out_weight, scratch, *block_arrays) -> chosen` over blocks of rows (None passes
    through as None).

    Each block writes its weights into its rows of one preallocated `(problems, n)` array
    (concatenating the blocks' results would be one more pass over cold memory).
    """
    rows = shape[0]
    weight = np.empty(shape)
    chosen = np.empty(rows, dtype=np.int64)
    scratch = _Scratch()
    for i in range(0, rows, _BLOCK_ROWS):
        block = slice(i, i + _BLOCK_ROWS)
        chosen[block] = fn(weight[block], scratch, *(None if a is None else a[block] for a in arrays))
    return Selection(chosen, weight)


@lru_cache(maxsize=8)
def _row_index(rows: int, n: int) -> I64:
    """`(rows, n)`: each candidate's row (problem) index within its block."""
    index = np.repeat(np.arange(rows, dtype=np.int64), n).reshape(rows, n)
    index.flags.writeable = False
    return index


@lru_cache(maxsize=64)
def _count_first_basis(n: int) -> F64:
    """`(n, 2)`: a column of ones (counts) and 2**(n-1-j) (the first set column is the highest bit)."""
    basis = np.stack([np.ones(n), 2.0 ** np.arange(n - 1, -1, -1)], axis=1)
    basis.flags.writeable = False
    return basis


@lru_cache(maxsize=64)
def _count_first_basis_t(n: int) -> F64:
    """`(2, n)` contiguous transpose of `_count_first_basis` (a strided operand with `out=`
    takes matmul off its BLAS path)."""
    basis = np.ascontiguousarray(_count_first_basis(n).T)
    basis.flags.writeable = False
    return basis


# Counting the set flags of each row and finding the first one are one BLAS matrix product:
# `sum` and `argmax` over a short axis pay a per-row overhead that a matrix product does not.
# The first set column is read off the exponent of sum_j flag_j 2**(n-1-j) (`np.frexp`:
# 2**k <= x < 2**(k+1) gives k+1), exact in float64 while n <= 53; wider rows use `argmax`.
_MAX_BIT_COLUMNS = 53


def _first_from_bits(bits: F64, count: F64, n: int) -> I64:
    _, exponent = np.frexp(bits)
    first = np.subtract(n, exponent, dtype=np.int64)
    if not count.all():
        first[count == 0] = -1
    return first


def _count_and_first(flags: Bool) -> tuple[F64, F64, I64]:
    """Per row of a `(B, n)` boolean block: the flags as 0/1 floats, how many are set, and the
    first set column (-1 if none)."""
    f = flags.astype(np.float64)
    n = f.shape[1]
    if n > _MAX_BIT_COLUMNS:
        count = f.sum(axis=1)
        return f, count, np.where(count > 0, np.argmax(flags, axis=1), -1).astype(np.int64)
    both = f @ _count_first_basis(n)
    return f, both[:, 0], _first_from_bits(both[:, 1], both[:, 0], n)


def _best_of_n(out: F64, scratch: _Scratch, s: F64, ok: Bool | None) -> I64:
    """Best-of-n on a block, worked on a transposed `(n, B)` copy: every operation then runs along
    the long axis (the maxima are n-1 contiguous `maximum`s, the comparison with them a broadcast
    along rows), which beats short-row work even with the two transposing copies."""
    rows, n = s.shape
    x = scratch.get("scores", (n, rows))
    if ok is None:
        np.copyto(x, s.T)
    else:
        x[...] = np.where(ok, s, -np.inf).T
    best = np.maximum.reduce(x, axis=0, out=scratch.get("best", (rows,)))
    top = np.equal(x, best, out=scratch.get("top", (n, rows), dtype=bool))
    if ok is not None:  # a problem with no usable candidate has max -inf, equal to its masked entries
        top &= ok.T
    flags = scratch.get("flags", (n, rows))
    np.copyto(flags, top)
    if n > _MAX_BIT_COLUMNS:
        count = flags.sum(axis=0)
        first = np.where(count > 0, np.argmax(top, axis=0), -1).astype(np.int64)
    else:
        count, bits = np.matmul(_count_first_basis_t(n), flags, out=scratch.get("count_bits", (2, rows)))
        first = _first_from_bits(bits, count, n)
    share = np.maximum(count, 1.0, out=best)  # `best` is not read again
    flags *= np.divide(1.0, share, out=share)
    out[...] = flags.T
    return first


def best_of_n(scores: Any, mask: Any = None) -> Selection:
    """The candidate with the highest score; NaN scores are never picked.

    Example:
        >>> best_of_n([[0.1, 0.9, 0.3]]).chosen.tolist()
        [1]
    """
    s = _as_2d(scores, "scores")
    if not s.shape[1]:
        return Selection(np.full(len(s), -1, dtype=np.int64), np.zeros(s.shape))
    ok = None if mask is None else _mask(mask, s.shape)
    highest = float(s.max()) if s.size else 0.0  # one pass: NaN if any score is NaN, inf if any is
    if np.isnan(highest):
        ok = ~np.isnan(s) if ok is None else ok & ~np.isnan(s)
    maybe_inf = highest == np.inf or np.isnan(highest)  # only then look for +inf among usable scores
    if maybe_inf and ((s == np.inf) & _full(ok, s.shape)).any():
        raise ArrayError("scores", "holds +inf; a score must be finite (mark unscored candidates NaN)")
    return _blocked(_best_of_n, s.shape, s, ok)


def _vote_block(out: F64, scratch: _Scratch, c: I64, valid: Bool | None, w: F64 | None) -> I64:
    """Vote over answer classes: totals by class with one `bincount` over the block.

    The bins are laid out `(class, problem)` (bin `c * rows + problem`), so the totals come out
    transposed, with every step below running along the long axis, and the per-candidate
    weights are read back in input order by one `take`. `valid` None: every candidate votes;
    `w` None: one vote each (majority, counted exactly).
    """
    rows, n = c.shape
    size = rows * n
    bins = np.multiply(c, rows, out=scratch.get("bins", (rows, n), dtype=np.int64))
    bins += _row_index(rows, n)
    if valid is not None:
        np.copyto(bins, size, where=~valid)  # non-voters go to a spare bin that is never read
    flat = bins.ravel()
    members = np.bincount(flat, minlength=size + 1)[:size].reshape(n, rows)
    if w is None:
        top = members == np.maximum.reduce(members, axis=0)
    else:
        totals = np.bincount(flat, weights=w.ravel(), minlength=size + 1)[:size].reshape(n, rows)
        best = np.maximum.reduce(totals, axis=0)
        # tied winning classes: np.isclose(totals, best), written for totals <= best
        top = totals >= best - (1e-8 + 1e-5 * np.abs(best))
    top &= members > 0
    # A tied class is returned with probability 1/n_top; spread it over its members, whose mean
    # correctness is then the class's credit: a member's share is 1 / (n_top * members).
    spread = np.maximum(members, 1, out=members)  # members is not read again
    spread *= np.maximum(np.add.reduce(top, axis=0, dtype=np.int64), 1)
    by_bin = scratch.get("by_bin", (size + 1,))
    np.divide(top, spread, out=by_bin[:size].reshape(n, rows))
    by_bin[size] = 0.0  # the spare bin: a non-voter gets weight 0
    np.take(by_bin, bins, out=out)
    # The first candidate of a tied class belongs to the tied answer seen first.
    return _count_and_first(out > 0)[2]


def _vote(c: I64, valid: Bool | None, w: F64 | None) -> Selection:
    if c.shape[1] == 0:
        return Selection(np.full(len(c), -1, dtype=np.int64), np.zeros(c.shape))
    return _blocked(_vote_block, c.shape, c, valid, w)


def majority_vote(classes: Any, mask: Any = None) -> Selection:
    """The most frequent answer class (self-consistency).

    Example:
        >>> majority_vote([[0, 1, 1, 2]]).chosen.tolist()
        [1]
    """
    c, valid = _classes(classes, mask)
    return _vote(c, valid, None)


def weighted_vote(classes: Any, weights: Any, mask: Any = None) -> Selection:
    """The answer class with the largest total weight; NaN weights drop their candidate.

    Weights must be >= 0 (a negative weight would count against an answer): map reward-model
    logits first, e.g. with `to_weights(scores, "sigmoid")`.
    """
    c, valid = _classes(classes, mask)
    w = _as_2d(weights, "weights", c.shape)
    if not w.size:
        return _vote(c, valid, w)
    lowest, highest = float(w.min()), float(w.max())  # NaN if any weight is NaN
    if np.isnan(highest):
        valid = _full(valid, c.shape) & ~np.isnan(w)
    maybe_negative = lowest < 0 or np.isnan(lowest)
    if maybe_negative and ((w < 0) & _full(valid, c.shape)).any():
        raise ArrayError("weights", "must be >= 0; map reward-model logits with to_weights(scores, 'sigmoid') first")
    maybe_inf = highest == np.inf or np.isnan(highest)
    if maybe_inf and (np.isinf(w) & _full(valid, c.shape)).any():
        raise ArrayError("weights", "holds inf; weights must be finite")
    return _vote(c, valid, w)


def hybrid_vote(classes: Any, scores: Any, mask: Any = None, *, top_k: int = 1) -> Selection:
    """Vote, then reward model: best-of-n among the candidates of the `top_k` most voted classes.

    `top_k=1` is a majority vote whose ties are broken by the reward model; classes tied with
    the k-th count are kept too, so the result does not depend on input order.
    """
    if top_k < 1:
        raise ArrayError("top_k", f"must be >= 1, got {top_k}")
    c, voters = _classes(classes, mask)
    valid = _full(voters, c.shape)
    s = _as_2d(scores, "scores", c.shape)
    problems, n = c.shape
    flat = (np.arange(problems, dtype=np.int64)[:, None] * n + c)[valid]
    counts = np.bincount(flat, minlength=problems * n).reshape(problems, n)
    kth = -np.sort(-counts, axis=1)[:, min(top_k, n) - 1]  # the k-th largest count per problem
    eligible_class = (counts > 0) & (counts >= kth[:, None])
    rows = np.arange(problems)[:, None]
    eligible = valid & eligible_class[rows, np.maximum(c, 0)]
    return best_of_n(s, eligible)


def filtered_vote(
    classes: Any,
    confidence: Any,
    mask: Any = None,
    *,
    keep: float | None = 0.5,
    min_score: float | None = None,
    weights: Any = None,
) -> Selection:
    """Majority (or weighted) vote among the confident candidates only.

    Args:
        classes: `(problems, n)` answer-class ids.
        confidence: `(problems, n)` a score per candidate (reward, mean log-probability...).
        mask: candidates that exist.
        keep: share of each problem's scored candidates to keep, the most confident first
            (at least one; candidates tied with the last kept one are kept too).
        min_score: keep only candidates with confidence >= this (applied after `keep`).
        weights: optional vote weights (a weighted vote among the kept candidates).
    """
    c, voters = _classes(classes, mask)
    s = _as_2d(confidence, "confidence", c.shape)
    scored = _full(voters, c.shape) & ~np.isnan(s)
    kept = scored.copy()
    if keep is not None:
        if not 0 < keep <= 1:
            raise ArrayError("keep", f"must be in (0, 1], got {keep}")
        ordered = -np.sort(-np.where(scored, s, -np.inf), axis=1)  # descending; unscored last
        m = np.maximum(np.ceil(keep * scored.sum(axis=1)).astype(np.int64), 1)
        threshold = ordered[np.arange(len(m)), np.minimum(m, c.shape[1]) - 1]
        kept &= s >= threshold[:, None]
    if min_score is not None:
        kept &= s >= min_score
    if weights is None:
        return _vote(c, kept, None)
    return weighted_vote(c, weights, kept)
