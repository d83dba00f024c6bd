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
        if np.isnan(y).any():  # NaN labels of candidates that cannot be returned stay out
            y = np.where(self.weight > 0, y, 0.0)
        credit: F64 = np.einsum("ij,ij->i", y, self.weight)  # row sums of products in one pass
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


def _classes(classes: Any, mask: Any) -> tuple[I64, Bool]:
    c = _as_2d(classes, "classes", dtype=np.int64)
    valid = _mask(mask, c.shape) & (c >= 0)
    if c.size and int(c.max(initial=-1)) >= c.shape[1]:
        raise ArrayError("classes", f"ids must be in [-1, {c.shape[1]}) (use answer_classes to build them)")
    return c, valid


# Problems are processed in blocks of rows: the dozen temporaries of a block stay in cache
# (1M candidates in one block spend most of their time faulting in fresh pages).
_BLOCK_ROWS = 4096


def _blocked(fn: Callable[..., tuple[I64, F64]], *arrays: NDArray[Any]) -> Selection:
    rows = arrays[0].shape[0]
    if rows <= _BLOCK_ROWS:
        return Selection(*fn(*arrays))
    parts = [fn(*(a[i : i + _BLOCK_ROWS] for a in arrays)) for i in range(0, rows, _BLOCK_ROWS)]
    return Selection(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))


def _row_max(x: F64) -> F64:
    """Max of each row; a loop over the few columns beats a reduction over a short axis."""
    out = x[:, 0].copy()
    for j in range(1, x.shape[1]):
        np.maximum(out, x[:, j], out=out)
    return out


def _best_of_n(s: F64, ok: Bool) -> tuple[I64, F64]:
    masked = np.where(ok, s, -np.inf)
    best = _row_max(masked) if s.shape[1] else np.full(len(s), -np.inf)
    top = ok & (masked == best[:, None])
    count = np.count_nonzero(top, axis=1)
    weight = top / np.maximum(count, 1)[:, None]
    return np.where(count > 0, np.argmax(top, axis=1), -1).astype(np.int64), weight


def best_of_n(scores: Any, mask: Any = None) -> Selection:
    """The candidate with the highest score; NaN scores are never picked.

    Example:
        >>> best_of_n([[0.1, 0.9, 0.3]]).chosen.tolist()
        [1]
    """
    s = _as_2d(scores, "scores")
    ok = _mask(mask, s.shape) & ~np.isnan(s)
    if ((s == np.inf) & ok).any():  # np.isposinf is a slow Python-level wrapper
        raise ArrayError("scores", "holds +inf; a score must be finite (mark unscored candidates NaN)")
    return _blocked(_best_of_n, s, ok)


def _vote_block(c: I64, valid: Bool, w: F64) -> tuple[I64, F64]:
    """Weighted vote over answer classes: totals by class with one `bincount` over the block."""
    problems, n = c.shape
    safe = np.where(valid, c, 0)  # invalid entries add weight 0 and count 0 to class 0
    flat = (np.arange(problems, dtype=np.int64)[:, None] * n + safe).ravel()
    size = problems * n
    totals = np.bincount(flat, weights=np.where(valid, w, 0.0).ravel(), minlength=size).reshape(problems, n)
    members = np.bincount(flat, weights=valid.ravel().astype(np.float64), minlength=size).reshape(problems, n)
    present = members > 0
    best = _row_max(np.where(present, totals, -np.inf))[:, None]
    # tied winning classes: np.isclose(totals, best), written for totals <= best
    top = present & (totals >= best - (1e-8 + 1e-5 * np.abs(best)))
    n_top = np.count_nonzero(top, axis=1)
    # per candidate: is its class a tied winner, and how many members has it
    tied = top.ravel()[flat].reshape(problems, n) & valid
    size_of_class = members.ravel()[flat].reshape(problems, n)
    # A tied class is returned with probability 1/n_top; spread it over its members, whose mean
    # correctness is then the class's credit.
    weight = tied / (np.maximum(n_top, 1)[:, None] * np.maximum(size_of_class, 1))
    # The first candidate of a tied class belongs to the tied answer seen first.
    chosen = np.where(n_top > 0, np.argmax(tied, axis=1), -1)
    return chosen.astype(np.int64), weight


def _vote(c: I64, valid: Bool, w: F64) -> Selection:
    if c.shape[1] == 0:
        return Selection(np.full(len(c), -1, dtype=np.int64), np.zeros(c.shape))
    return _blocked(_vote_block, c, valid, w)


def majority_vote(classes: Any, mask: Any = None) -> Selection:
    """The most frequent answer class (self-consistency).

    Example:
        >>> majority_vote([[0, 1, 1, 2]]).chosen.tolist()
        [1]
    """
    c, valid = _classes(classes, mask)
    return _vote(c, valid, np.ones(c.shape))


def weighted_vote(classes: Any, weights: Any, mask: Any = None) -> Selection:
    """The answer class with the largest total weight; NaN weights drop their candidate.

    Weights must be >= 0 (a negative weight would count against an answer): map reward-model
    logits first, e.g. with `to_weights(scores, "sigmoid")`.
    """
    c, valid = _classes(classes, mask)
    w = _as_2d(weights, "weights", c.shape)
    valid = valid & ~np.isnan(w)
    if ((w < 0) & valid).any():
        raise ArrayError("weights", "must be >= 0; map reward-model logits with to_weights(scores, 'sigmoid') first")
    if (np.isinf(w) & valid).any():
        raise ArrayError("weights", "holds inf; weights must be finite")
    return _vote(c, valid, w)


def hybrid_vote(classes: Any, scores: Any, mask: Any = None, *, top_k: int = 1) -> Selection:
    """Vote, then reward model: best-of-n among the candidates of the `top_k` most voted classes.

    `top_k=1` is a majority vote whose ties are broken by the reward model; classes tied with
    the k-th count are kept too, so the result does not depend on input order.
    """
    if top_k < 1:
        raise ArrayError("top_k", f"must be >= 1, got {top_k}")
    c, valid = _classes(classes, mask)
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
    c, valid = _classes(classes, mask)
    s = _as_2d(confidence, "confidence", c.shape)
    scored = valid & ~np.isnan(s)
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
        return _vote(c, kept, np.ones(c.shape))
    return weighted_vote(c, weights, kept)
