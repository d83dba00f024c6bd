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

Best-of-n, its tie credit and the votes run in the compiled kernel (`_kernel`) when it is built;
the numpy code here is what runs otherwise, and the reference the kernel is tested against.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal, TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from rewardlab.core.choices import check_choice
from rewardlab.errors import ArrayError
from rewardlab.select import _kernel, _ties

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
_A = TypeVar("_A", bound=NDArray[Any])


class Selection:
    """What a selector picked for every problem.

    Attributes:
        chosen: `(problems,)` index of the picked candidate (first in input order among ties);
            `-1` when the problem had no usable candidate.
        weight: `(problems, n)` probability that each candidate's answer is returned under
            uniform random tie-breaking; each row sums to 1, or to 0 for an abstention.
            Best-of-n keeps its ties as a count and a row of flags per problem and builds this
            matrix on first use (`credit` does not need it).
        shape: `(problems, n)`.
    """

    __slots__ = ("_tied", "_weight", "chosen")

    def __init__(self, chosen: I64, weight: F64 | None = None, *, tied: _TieSets | None = None) -> None:
        if (weight is None) == (tied is None):
            raise TypeError("Selection takes a dense weight or a tie set, exactly one")
        self.chosen = chosen
        self._weight = weight
        self._tied = tied

    @property
    def weight(self) -> F64:
        """`(problems, n)`, built on first use when the selector kept its ties sparse."""
        if self._weight is None:
            assert self._tied is not None
            self._weight = self._tied.weight()
        return self._weight

    @property
    def shape(self) -> tuple[int, int]:
        """`(problems, n)`: the shape of the candidate set."""
        array = self._tied.flags if self._tied is not None else self.weight
        problems, n = array.shape
        return problems, n

    @property
    def abstained(self) -> int:
        """Problems with no usable candidate (nothing to pick: counted, credited 0)."""
        return int((self.chosen < 0).sum())

    def credit(self, correct: Any, *, ties: Ties = "expected") -> F64:
        """`(problems,)` credit per problem: the expected correctness of the returned answer."""
        check_choice("ties", ties, Ties, error=ArrayError)
        y = _as_2d(correct, "correct", self.shape, dtype=np.float64)
        if ties == "first":
            return _picked(y, self.chosen)
        if self._tied is not None:
            return self._tied.credit(y, self.chosen)
        weight = self.weight
        credit: F64 = np.einsum("ij,ij->i", y, weight)  # row sums of products in one pass
        unknown = np.isnan(credit)
        if unknown.any():  # NaN labels of candidates that cannot be returned stay out
            rows = np.flatnonzero(unknown)
            credit[rows] = np.einsum("ij,ij->i", np.where(weight[rows] > 0, y[rows], 0.0), weight[rows])
        return credit

    def accuracy(self, correct: Any, *, ties: Ties = "expected") -> float:
        """Mean credit over problems (an abstention counts as wrong)."""
        return float(self.credit(correct, ties=ties).mean())

    def __repr__(self) -> str:
        problems, n = self.shape
        return f"Selection({problems} problems x {n} candidates, {self.abstained} abstained)"


class _TieSets:
    """Best-of-n's weights, kept as tie sets: each problem's weight is spread evenly over the
    candidates tied at its best score, so a count and a row of flags describe it (1 byte a
    candidate, against 8 for the dense weight, which is built only if asked for).

    Attributes:
        count: `(problems,)` candidates tied at the top (0: nothing usable).
        flags: `(problems, n)` which ones.
    """

    __slots__ = ("count", "flags")

    def __init__(self, count: F64, flags: Bool) -> None:
        self.count, self.flags = count, flags

    def weight(self) -> F64:
        weight: F64 = self.flags / np.maximum(self.count, 1.0)[:, None]
        return weight

    def credit(self, y: F64, chosen: I64) -> F64:
        """Mean label of each problem's tied candidates (0 for an abstention).

        Where a problem's best score is unique the mean is its chosen candidate's label, so with
        few ties (real reward scores) a gather plus the tied rows is cheapest; with many, one
        pass over every label.
        """
        if _kernel.LIBRARY is not None:
            return _kernel.tie_credit(np.ascontiguousarray(y), self.flags, self.count, chosen)
        rows = np.flatnonzero(self.count > 1)
        if rows.size <= len(chosen) // 20:
            credit = _picked(y, chosen)
        else:
            credit = np.einsum("ij,ij->i", y, self.flags) / np.maximum(self.count, 1.0)  # flags cast on the fly
            rows = np.flatnonzero(np.isnan(credit))  # a NaN label of a candidate not tied must stay out
        if rows.size:
            credit[rows] = self._tied_mean(y, rows)
        return credit

    def _tied_mean(self, y: F64, rows: I64) -> F64:
        labels: F64 = np.where(self.flags[rows], y[rows], 0.0) @ np.ones(y.shape[1])
        return labels / np.maximum(self.count[rows], 1.0)


def _picked(y: F64, chosen: I64) -> F64:
    """The label of each problem's chosen candidate, 0 where it abstains (a gather by flat
    index: one with a row and a column index array is several times slower)."""
    problems, n = y.shape
    if not n:
        return np.zeros(problems)
    picked: F64 = y.reshape(-1)[np.arange(0, problems * n, n) + np.maximum(chosen, 0)]
    abstained = chosen < 0
    if abstained.any():
        picked[abstained] = 0.0
    return picked


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


def _contiguous(a: _A | None) -> _A | None:
    """`a` in C order (the kernel reads rows of contiguous memory); None passes through."""
    if a is None:
        return None
    return cast(_A, np.ascontiguousarray(a))


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
        size = math.prod(shape)
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


def _row_max(block: F64, out: F64) -> F64:
    """Maximum of each row of a C-contiguous `(B, n)` block, by long 1-D operations: while the
    width is even, adjacent columns are folded pairwise through stride-2 views of the flat
    block (one `maximum` over half the block); what is left is folded column by column. A
    reduction over a short axis pays a per-row overhead instead (several times slower)."""
    rows = len(block)
    v = block
    while v.shape[1] % 2 == 0:
        flat = v.reshape(-1)
        v = np.maximum(flat[0::2], flat[1::2]).reshape(rows, -1)
    if v.shape[1] == 1:
        out[...] = v[:, 0]
        return out
    np.maximum(v[:, 0], v[:, 1], out=out)
    for j in range(2, v.shape[1]):
        np.maximum(out, v[:, j], out=out)
    return out


def _best_of_n_block(scratch: _Scratch, s: F64, ok: Bool | None, row_max: F64, tied: Bool) -> tuple[F64, I64]:
    """Best-of-n on a C-contiguous block of rows: fills `row_max` and `tied` (the candidates
    tied at it); returns their count and the first of them.

    The comparison with the row maxima is one flat `equal` against the maxima repeated n times
    (a broadcast over short rows pays a per-row overhead).
    """
    rows, n = s.shape
    x = s if ok is None else np.where(ok, s, -np.inf)
    best = _row_max(x, row_max)
    np.equal(x.reshape(-1), np.repeat(best, n), out=tied.reshape(-1))
    if ok is not None:  # a problem with no usable candidate has max -inf, equal to its masked entries
        tied &= ok
    return _ties.count_and_first(tied, scratch.get("flags", (rows, n)))


def _best_of_n(s: F64, ok: Bool | None) -> tuple[Selection, F64]:
    """The selection and each row's maximum over its usable scores (mask set, not NaN)."""
    s = np.ascontiguousarray(s)
    if _kernel.LIBRARY is not None:
        row_max, count, chosen, tied = _kernel.best_of_n(s, _contiguous(ok))
        return Selection(chosen, tied=_TieSets(count, tied)), row_max
    selection, row_max = _best_of_n_blocked(s, ok)
    # np.maximum propagates NaN: a NaN among a row's usable scores makes its maximum NaN, so the
    # row maxima tell whether NaN scores must be masked out (the pass is redone only then).
    if np.isnan(row_max).any():
        ok = ~np.isnan(s) if ok is None else ok & ~np.isnan(s)
        selection, row_max = _best_of_n_blocked(s, ok)
    return selection, row_max


def _best_of_n_blocked(s: F64, ok: Bool | None) -> tuple[Selection, F64]:
    """`_best_of_n` in numpy, by blocks of rows; NaN scores must be masked out by `ok`."""
    problems, n = s.shape
    row_max, count = np.empty(problems), np.empty(problems)
    chosen = np.empty(problems, dtype=np.int64)
    tied = np.empty((problems, n), dtype=bool)
    scratch = _Scratch()
    for i in range(0, problems, _BLOCK_ROWS):
        block = slice(i, i + _BLOCK_ROWS)
        mask = None if ok is None else ok[block]
        count[block], chosen[block] = _best_of_n_block(scratch, s[block], mask, row_max[block], tied[block])
    return Selection(chosen, tied=_TieSets(count, tied)), row_max


def best_of_n(scores: Any, mask: Any = None) -> Selection:
    """The candidate with the highest score; NaN scores are never picked.

    Examples:
        >>> best_of_n([[0.1, 0.9, 0.3]]).chosen.tolist()
        [1]
    """
    s = _as_2d(scores, "scores")
    if not s.shape[1]:
        return Selection(np.full(len(s), -1, dtype=np.int64), np.zeros(s.shape))
    ok = None if mask is None else _mask(mask, s.shape)
    selection, row_max = _best_of_n(s, ok)
    if (row_max == np.inf).any():
        raise ArrayError("scores", "holds +inf; a score must be finite (mark unscored candidates NaN)")
    return selection


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
    return _ties.count_and_first(out > 0)[1]


def _vote(c: I64, valid: Bool | None, w: F64 | None) -> Selection:
    if c.shape[1] == 0:
        return Selection(np.full(len(c), -1, dtype=np.int64), np.zeros(c.shape))
    if _kernel.LIBRARY is not None:
        weight, chosen = _kernel.vote(np.ascontiguousarray(c), _contiguous(valid), _contiguous(w))
        return Selection(chosen, weight)
    return _blocked(_vote_block, c.shape, c, valid, w)


def majority_vote(classes: Any, mask: Any = None) -> Selection:
    """The most frequent answer class (self-consistency).

    Examples:
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
    s = _as_2d(scores, "scores", c.shape)
    return best_of_n(s, _top_classes(c, voters, top_k))


def _top_classes(c: I64, voters: Bool | None, top_k: int) -> Bool:
    """The voters whose class has a count among the `top_k` largest of its problem (ties with the
    k-th count included; classes with no voter are counted as 0 and never kept)."""
    problems, n = c.shape
    if top_k == 1:
        return _voted_for(_vote(c, voters, None))
    if top_k >= n:  # the k-th largest of n counts is the smallest: every voted class is kept
        return _full(voters, c.shape)
    size = problems * n
    bins = c + np.arange(0, size, n, dtype=np.int64)[:, None]  # class c of problem p: bin p * n + c
    if voters is not None:
        np.copyto(bins, size, where=~voters)  # non-voters go to a spare bin that is never kept
    counts = np.bincount(bins.ravel(), minlength=size + 1)
    by_class = counts[:size].reshape(problems, n)
    kth = np.partition(by_class, n - top_k, axis=1)[:, n - top_k]  # the k-th largest count
    kept = np.empty(size + 1, dtype=bool)
    np.greater_equal(by_class, kth[:, None], out=kept[:size].reshape(problems, n))  # read by voters only: count >= 1
    kept[size] = False
    return kept[bins]


def _voted_for(majority: Selection) -> Bool:
    """The voters of the classes with the largest count, from their majority vote: it gives them,
    and only them, weight (1 / (members x winners) > 0)."""
    return majority.weight > 0


def _hybrid_after_majority(scores: Any, majority: Selection) -> Selection:
    """`hybrid_vote(classes, scores, mask, top_k=1)` from `majority_vote(classes, mask)`, for a
    caller that has the vote already (one pass over the classes fewer)."""
    s = _as_2d(scores, "scores", majority.shape)
    return best_of_n(s, _voted_for(majority))


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
    if keep is not None and not 0 < keep <= 1:
        raise ArrayError("keep", f"must be in (0, 1], got {keep}")
    unscored = np.isnan(s)
    every_one = voters is None and not unscored.any()
    kept = np.ones(c.shape, dtype=bool) if every_one else _full(voters, c.shape) & ~unscored
    if keep is not None and c.size:
        kept &= s >= _keep_threshold(s, None if every_one else kept, keep)[:, None]
    if min_score is not None:
        kept &= s >= min_score
    if weights is None:
        return _vote(c, kept, None)
    return weighted_vote(c, weights, kept)


def _keep_threshold(s: F64, scored: Bool | None, keep: float) -> F64:
    """Per row, the m-th largest scored confidence, m = ceil(keep x scored candidates) but at
    least 1 (-inf for a row with none scored); `scored` None: every candidate is."""
    problems, n = s.shape
    if scored is None:  # one m for every row
        m = max(math.ceil(keep * n), 1)
        return np.sort(s, axis=1)[:, n - m]
    counts = scored.sum(axis=1)
    m = np.maximum(np.ceil(keep * counts).astype(np.int64), 1)
    ascending = np.sort(np.where(scored, s, -np.inf), axis=1)  # unscored first
    threshold: F64 = ascending[np.arange(problems), n - m]
    return threshold
