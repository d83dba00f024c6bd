"""Accuracy against compute for every selection method on a candidate file, with bootstrap CIs.

For each budget n (candidates per problem) every method's credit is averaged over subsets of n
of each problem's own candidates (a ragged file's padding is never drawn: problems are listed
in groups of equal candidate count). Oracle and best-of-n are averaged over every n-subset by their
closed forms (`evaluate.expected`: the oracle's is the unbiased pass@n of Chen et al. 2021,
eq. 1), so their curves are the exact expectation over which n samples were drawn. The votes
are run on the subsets themselves: all of them when a problem has at most `max_subsets`
(exact too), otherwise `max_subsets` seeded random ones (the same ones for every vote, so votes
are compared on the same draws), a chunk of problems at a time, so memory stays bounded on
large files. Problems are then resampled (percentile bootstrap,
`evaluate.stats.mean_intervals`, the same resamples for every method and budget) for the
interval: the uncertainty is over which problems were asked, the larger source on small
benchmarks.

The compute axis is given both as n and as generated tokens: the expected tokens of n
candidates, `n x` the problem's mean tokens per candidate, averaged over problems.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import InputError
from rewardlab.evaluate.expected import expected_best_of_n, expected_oracle
from rewardlab.evaluate.stats import Interval, mean_intervals
from rewardlab.select.answers import answer_classes, renumber_classes
from rewardlab.select.candidates import Candidates
from rewardlab.select.options import CURVES, PICK, Equivalence, WeightMap
from rewardlab.select.scores import to_weights
from rewardlab.select.selectors import (
    Selection,
    _hybrid_after_majority,
    best_of_n,
    filtered_vote,
    hybrid_vote,
    majority_vote,
    weighted_vote,
)

__all__ = ["METHODS", "CurvePoint", "Curves", "selection_curves"]

F64 = NDArray[np.float64]

# name -> (needs answer classes, needs scores), in the order of `options.CurveMethod`
METHODS: dict[str, tuple[bool, bool]] = {
    "oracle": (False, False),  # pass@n: some candidate is correct
    "best_of_n": (False, True),
    "majority": (True, False),
    "weighted": (True, True),
    "hybrid": (True, True),
    "filtered": (True, True),
}


@dataclass(frozen=True)
class CurvePoint:
    """One method at one budget: n, expected generated tokens and accuracy with its interval."""

    n: int
    tokens: float | None
    accuracy: Interval

    def to_dict(self) -> dict[str, Any]:
        """The budget as `n`, and the interval's own count of items as `problems`."""
        interval: dict[str, Any] = dict(self.accuracy.to_dict())
        interval["problems"] = interval.pop("n")
        return {"n": self.n, "tokens": self.tokens, **interval}


@dataclass(frozen=True)
class Curves:
    """Accuracy-vs-compute curves of several methods on one candidate set.

    Attributes:
        points: method -> one `CurvePoint` per budget, in increasing n.
        config: the options that produced the numbers (hashed into `stamps["spec_hash"]`).
        stamps: rewardlab_version, spec_hash, data, data_hash, seed, created.
        token_unit: "tokens", "words" (counted from responses) or "none".
        per_problem: method -> n -> `(problems,)` credit (not serialised).
        unreadable: `{"line", "error"}` of each row of the file left out because it could not
            be read (the curves are over the other rows).
        unlabelled: candidates without a correctness label; they count as not right (as in
            `rewardlab eval`), so every accuracy is a lower bound when this is not 0.
    """

    points: dict[str, list[CurvePoint]]
    config: dict[str, Any]
    stamps: dict[str, Any]
    token_unit: str
    per_problem: dict[str, dict[int, F64]] = field(repr=False, default_factory=dict)
    unreadable: list[dict[str, Any]] = field(default_factory=list)
    unlabelled: int = 0

    def accuracy(self, method: str, n: int) -> float:
        """The point estimate of `method` at budget `n`."""
        return next(p.accuracy.estimate for p in self.points[method] if p.n == n)

    def to_dict(self) -> dict[str, Any]:
        return {
            "stamps": self.stamps,
            "config": self.config,
            "token_unit": self.token_unit,
            "curves": {m: [p.to_dict() for p in pts] for m, pts in self.points.items()},
            "unreadable": self.unreadable,
            "unlabelled": self.unlabelled,
        }


def _subsets(width: int, n: int, max_subsets: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """`(subsets, n)` candidate indices: every n-subset if few enough, else seeded random ones."""
    if math.comb(width, n) <= max_subsets:
        return np.array(list(itertools.combinations(range(width), n)), dtype=np.int64)
    draws = rng.permuted(np.tile(np.arange(width), (max_subsets, 1)), axis=1)[:, :n]
    return np.sort(draws, axis=1)  # keep input order inside a subset (ties="first" reads it)


def _method(name: str, keep: float, top_k: int) -> Callable[[Any, Any, Any, Any], Selection]:
    table: dict[str, Callable[[Any, Any, Any, Any], Selection]] = {
        "best_of_n": lambda c, s, w, m: best_of_n(s, m),
        "majority": lambda c, s, w, m: majority_vote(c, m),
        "weighted": lambda c, s, w, m: weighted_vote(c, w, m),
        "hybrid": lambda c, s, w, m: hybrid_vote(c, s, m, top_k=top_k),
        "filtered": lambda c, s, w, m: filtered_vote(c, s, m, keep=keep),
    }
    return table[name]


def _check(candidates: Candidates, methods: Sequence[str]) -> None:
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise InputError(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}", source=candidates.source)
    if candidates.correct is None or np.isnan(candidates.correct[candidates.mask]).all():
        raise InputError("curves need correctness labels (the labels column, --labels); no candidate has one", source=candidates.source)
    for m in methods:
        needs_classes, needs_scores = METHODS[m]
        if needs_classes and candidates.answers is None:
            raise InputError(f"method {m!r} votes over answers: the file has no answers column", source=candidates.source)
        if needs_scores and candidates.scores is None:
            raise InputError(f"method {m!r} needs scores: the file has no scores column", source=candidates.source)


def _gather(x: NDArray[Any], idx: NDArray[np.int64]) -> NDArray[Any]:
    """`(P, N)` -> `(P * subsets, n)`: every problem's candidates at every subset (`take` lays
    the result out in that order; `x[:, idx]` puts the problem axis innermost, and the reshape
    then copies)."""
    return np.take(x, idx, axis=1).reshape(-1, idx.shape[1])


# Problems per chunk are chosen so a chunk's gathered subsets hold about this many candidates:
# the memory of a curve is then bounded by the chunk (tens of MB a method), not the file.
_CHUNK_CANDIDATES = 1 << 20


def _exact(method: str, scores: F64) -> bool:
    """Whether `method`'s mean over every subset comes from its closed form (`evaluate.expected`).
    A usable score of -inf would share a group with the unusable slots there, so it is listed."""
    return method == "oracle" or (method == "best_of_n" and not np.isneginf(scores).any())


def _default_budgets(smallest: int) -> list[int]:
    """Every n up to 16 candidates; beyond, the powers of two and the largest n (test-time
    scaling is read on a log axis, and each budget costs its subsets)."""
    if smallest <= 16:
        return list(range(1, smallest + 1))
    powers = [2**k for k in range(smallest.bit_length()) if 2**k < smallest]
    return [*powers, smallest]


def _listed_credit(
    methods: Sequence[str], inputs: dict[str, NDArray[Any] | None], idx: NDArray[np.int64], keep: float, top_k: int,
    advance: Callable[[int], None],
) -> dict[str, F64]:
    """method -> `(problems,)` mean credit over the subsets `idx`, by running each method on
    every subset, a chunk of problems at a time (gathered and renumbered once for all methods).

    `inputs` holds one group of problems with the same candidate count k, cut to their first k
    columns, so every slot is a candidate: the methods get no mask.
    """
    problems = len(inputs["correct"])  # type: ignore[arg-type]
    rows = max(1, _CHUNK_CANDIDATES // idx.size)
    out = {m: np.empty(problems) for m in methods}
    for start in range(0, problems, rows):
        part = {k: None if v is None else _gather(v[start:start + rows], idx) for k, v in inputs.items()}
        correct, scores, weights = part["correct"], part["scores"], part["weights"]
        assert correct is not None
        c = renumber_classes(part["classes"]) if part["classes"] is not None else None
        done: dict[str, Selection] = {}
        for m in sorted(methods, key=list(METHODS).index):  # the majority vote before the hybrid
            if m == "hybrid" and top_k == 1 and "majority" in done:
                done[m] = _hybrid_after_majority(scores, done["majority"])
            else:  # the oracle is never listed: its closed form is exact
                done[m] = _method(m, keep, top_k)(c, scores, weights, None)
            out[m][start:start + rows] = done[m].credit(correct).reshape(-1, len(idx)).mean(axis=1)
        advance(len(correct) // len(idx))
    return out


def _count_groups(mask: NDArray[np.bool_]) -> list[tuple[int, NDArray[np.intp]]]:
    """`(k, rows)` for every distinct candidate count k, increasing: a problem's subsets are
    drawn from its own k candidates."""
    counts = mask.sum(axis=1)
    return [(int(k), np.flatnonzero(counts == k)) for k in np.unique(counts)]


def _candidates_first(inputs: dict[str, NDArray[Any] | None]) -> dict[str, NDArray[Any] | None]:
    """The same arrays with each row's candidates moved to its front, in their order (so the
    first k columns of a row with k candidates are exactly them)."""
    mask = inputs["mask"]
    assert mask is not None
    if np.array_equal(mask, np.arange(mask.shape[1]) < mask.sum(axis=1)[:, None]):
        return inputs  # already so (load_candidates pads at the end)
    order = np.argsort(~mask, axis=1, kind="stable")
    return {k: None if v is None else np.take_along_axis(v, order, axis=1) for k, v in inputs.items()}


def _curve_credit(
    candidates: Candidates, classes: NDArray[np.int64] | None, weights: F64 | None, methods: Sequence[str],
    ns: Sequence[int], max_subsets: int, seed: int, keep: float, top_k: int, advance: Callable[[int], None],
) -> dict[str, dict[int, F64]]:
    assert candidates.correct is not None  # checked by _check
    rng = np.random.default_rng(seed)
    scores = candidates.scores if candidates.scores is not None else np.full(candidates.mask.shape, np.nan)
    correct = np.nan_to_num(candidates.correct)
    listed = [m for m in methods if not _exact(m, scores)]
    inputs = _candidates_first({"mask": candidates.mask, "correct": correct, "scores": scores, "weights": weights,
                                "classes": classes if any(METHODS[m][0] for m in listed) else None})  # fmt: skip
    groups = _count_groups(candidates.mask)
    out: dict[str, dict[int, F64]] = {m: {} for m in methods}
    for n in ns:
        if "oracle" in methods and "oracle" not in listed:
            out["oracle"][n] = expected_oracle(correct, candidates.mask, n)
        if "best_of_n" in methods and "best_of_n" not in listed:
            out["best_of_n"][n] = expected_best_of_n(scores, correct, candidates.mask, n)
        if not listed:
            advance(candidates.n_problems)
            continue
        for m in listed:
            out[m][n] = np.empty(candidates.n_problems)
        for k, rows in groups:
            idx = _subsets(k, n, max_subsets, rng)
            whole = len(rows) == candidates.n_problems and k == candidates.mask.shape[1]  # no copy of a plain file
            group = {name: v if v is None or whole else v[rows, :k] for name, v in inputs.items() if name != "mask"}
            for m, credit in _listed_credit(listed, group, idx, keep, top_k, advance).items():
                out[m][n][rows] = credit
    return out


def selection_curves(
    candidates: Candidates,
    *,
    methods: Sequence[str] | None = None,
    ns: Sequence[int] | None = None,
    equivalence: Equivalence = PICK.equivalence,
    weights: WeightMap = PICK.weights,
    keep: float = PICK.keep,
    top_k: int = PICK.top_k,
    max_subsets: int = CURVES.max_subsets,
    seed: int = CURVES.seed,
    confidence: float = CURVES.confidence,
    n_resamples: int = CURVES.n_resamples,
    score_source: Any = None,
    unreadable: Sequence[InputError] = (),
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
) -> Curves:
    """Accuracy of every method at every budget n, with bootstrap intervals over problems (the
    defaults are those of `options.PickOptions` and `options.CurveOptions`).

    Args:
        candidates: from `load_candidates` (every problem needs at least max(ns) candidates).
        methods: subset of `METHODS` (default: every method the file's columns allow).
        ns: budgets (default 1..n, n = the smallest candidate count of any problem; above 16,
            the powers of two below n, and n).
        equivalence: how answers are grouped for votes (`answer_classes`).
        weights: how scores become vote weights for "weighted" (`to_weights`).
        keep: share kept by the confidence-filtered vote ("filtered"; scores as confidence).
        top_k: classes kept by the hybrid vote before the reward model picks.
        max_subsets: all n-subsets when there are at most this many, else this many random ones.
        seed: seeds the random subsets and the bootstrap.
        confidence, n_resamples: of the bootstrap intervals.
        score_source: a description of where the scores came from (e.g. a reward's
            `describe()`), hashed into the spec hash; default: the file's column.
        unreadable: the rows `load_candidates(..., on_error=...)` left out, recorded in the
            curves.
        progress: called with how many problems were done at one budget, as they are (for a
            progress bar); `on_total` first gets the total, problems x budgets.
    """
    from rewardlab.core.sample import content_hash
    from rewardlab.evaluate.audit.report import stamps, unreadable_rows

    if methods is None:
        methods = [m for m, (a, s) in METHODS.items()
                   if (not a or candidates.answers is not None) and (not s or candidates.scores is not None)]  # fmt: skip
    _check(candidates, methods)
    smallest = int(candidates.mask.sum(axis=1).min())
    ns = list(ns) if ns is not None else _default_budgets(smallest)
    if not ns or min(ns) < 1 or max(ns) > smallest:
        short = int(np.argmin(candidates.mask.sum(axis=1)))
        where = f"line {candidates.lines[short]}" if candidates.lines is not None else f"problem {short}"
        raise InputError(f"budgets must be in 1..{smallest} (the smallest candidate count of a problem: {where} has "
                         f"{smallest}), got {ns}", source=candidates.source)  # fmt: skip
    needs_classes = any(METHODS[m][0] for m in methods)
    classes = answer_classes(candidates.answers, equivalence=equivalence) if needs_classes and candidates.answers is not None else None
    vote_weights = to_weights(candidates.scores, weights) if candidates.scores is not None and "weighted" in methods else None
    if on_total is not None:
        on_total(candidates.n_problems * len(ns))
    advance = progress if progress is not None else (lambda done: None)
    credit = _curve_credit(candidates, classes, vote_weights, methods, ns, max_subsets, seed, keep, top_k, advance)
    per_token = np.nanmean(np.where(candidates.mask, candidates.tokens, np.nan), axis=1) if candidates.tokens is not None else None
    series = [(m, n) for m in methods for n in ns]
    intervals = mean_intervals(np.column_stack([credit[m][n] for m, n in series]), confidence=confidence,
                               n_resamples=n_resamples, seed=seed, where="selection_curves")  # fmt: skip
    mean_tokens = None if per_token is None else float(per_token.mean())
    points: dict[str, list[CurvePoint]] = {m: [] for m in methods}
    for (m, n), interval in zip(series, intervals, strict=True):
        points[m].append(CurvePoint(n, None if mean_tokens is None else n * mean_tokens, interval))
    config = {"methods": list(methods), "ns": ns, "equivalence": equivalence, "weights": weights, "keep": keep,
              "top_k": top_k, "max_subsets": max_subsets, "confidence": confidence, "n_resamples": n_resamples,
              "scores": score_source if score_source is not None else "file column"}  # fmt: skip
    data = candidates.source if Path(candidates.source).exists() else None
    stamp = stamps(spec_hash=content_hash(config), data=data, seed=seed)
    assert candidates.correct is not None  # checked by _check
    unlabelled = int(np.isnan(candidates.correct[candidates.mask]).sum())
    return Curves(points, config, stamp, candidates.token_unit, credit, unreadable_rows(unreadable), unlabelled)
