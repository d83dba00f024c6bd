"""Test-time selection metrics from scored candidates: pass@k, best-of-N and (weighted) votes.

- pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", eq. 1): with n
  samples of which c are correct, the unbiased estimate of P(at least one of k is correct) is
  1 − C(n−c, k) / C(n, k), computed as a product to stay numerically stable.
- best-of-N accuracy: per problem, take the candidate with the highest reward and check whether
  it is correct. A tie at the top is credited with the mean correctness of the tied candidates
  (the expected accuracy of random tie-breaking), so results do not depend on row order.
- majority vote (self-consistency, Wang et al. 2023) and reward-weighted vote (Li et al. 2023
  "Making Large Language Models Better Reasoners with Step-Aware Verifier"): group candidates by
  their final answer, add 1 (or the reward) per candidate, pick the answer with the largest total;
  ties at the top are again credited with the mean correctness of the tied answers.

`ties="first"` instead breaks ties by input order (the first top-scored candidate; the answer
seen first), which is what Qwen2.5-Math's `evaluation/rm_maj_eval.py` does (`list.index(max)`,
`Counter.most_common`), so its published rm@k / maj@k totals can be reproduced exactly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

from rewardlab.errors import InputError
from rewardlab.evaluate._checks import Numbers, as_1d, as_binary, same_length

Ties = Literal["expected", "first"]

__all__ = ["best_of_n", "best_of_n_accuracy", "pass_at_k", "vote", "vote_accuracy"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c correct.

    Examples:
        >>> pass_at_k(n=4, c=1, k=2)
        0.5
    """
    if not (0 <= c <= n) or not (1 <= k <= n):
        raise InputError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}", source="pass_at_k")
    if n - c < k:
        return 1.0
    # 1 - prod_{i=n-c+1}^{n} (1 - k/i)  ==  1 - C(n-c, k)/C(n, k)
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def pass_at_k_many(n: Numbers, c: Numbers, k: int) -> np.ndarray:
    """Vectorised `pass_at_k` over many problems (one (n, c) pair each).

    C(n−c, k)/C(n, k) is computed in log space with `scipy.special.gammaln`, so a million
    problems take milliseconds instead of a Python loop; agrees with the product form to ~1e-12.
    """
    from scipy.special import gammaln

    n_arr = np.asarray(n, dtype=float)
    c_arr = np.asarray(c, dtype=float)
    if n_arr.shape != c_arr.shape or n_arr.ndim != 1:
        raise InputError(f"n and c must be 1-D arrays of equal length, got {n_arr.shape} and {c_arr.shape}", source="pass_at_k_many")
    if np.any((c_arr < 0) | (c_arr > n_arr)) or k < 1 or np.any(n_arr < k):
        raise InputError(f"need 0 <= c <= n and 1 <= k <= n for every problem (k={k})", source="pass_at_k_many")
    free = n_arr - c_arr  # incorrect samples
    out = np.ones_like(n_arr)
    some = free >= k  # otherwise every k-subset contains a correct sample: pass@k = 1
    f, m = free[some], n_arr[some]
    log_ratio = gammaln(f + 1) - gammaln(f - k + 1) - gammaln(m + 1) + gammaln(m - k + 1)
    out[some] = 1.0 - np.exp(log_ratio)
    return out


def best_of_n(scores: Numbers, correct: Numbers, *, ties: Ties = "expected") -> float:
    """Credit of best-of-N selection for one problem (1, 0, or a tie's mean correctness;
    with `ties="first"`, the correctness of the first top-scored candidate)."""
    s = as_1d(scores, "scores", where="best_of_n")
    y = as_binary(correct, "correct", where="best_of_n")
    if same_length("best_of_n", scores=s, correct=y) == 0:
        raise InputError("a problem with no candidates", source="best_of_n")
    if ties == "first":
        return float(y[int(np.argmax(s))])  # argmax returns the first maximum
    top = s == s.max()
    return float(y[top].mean())


def best_of_n_accuracy(
    scores: Sequence[Numbers] | np.ndarray, correct: Sequence[Numbers] | np.ndarray, *, n: int | None = None,
    ties: Ties = "expected",
) -> float:
    """Mean best-of-N credit over problems, using each problem's first `n` candidates (all if None)."""
    if len(scores) != len(correct) or not len(scores):
        raise InputError(f"{len(scores)} score lists for {len(correct)} correctness lists", source="best_of_n_accuracy")
    return float(np.mean([best_of_n(s[:n], y[:n], ties=ties) for s, y in zip(scores, correct, strict=True)]))


def vote(answers: Sequence[Hashable], weights: Sequence[float] | None = None) -> dict[Hashable, float]:
    """Total weight per distinct answer (weight 1 each when `weights` is None)."""
    w = np.ones(len(answers)) if weights is None else as_1d(weights, "weights", where="vote")
    if len(w) != len(answers):
        raise InputError(f"{len(w)} weights for {len(answers)} answers", source="vote")
    if np.any(w < 0):
        # A negative weight would count against an answer; map logits first (sigmoid/softmax).
        raise InputError("weights must be >= 0; map reward-model logits with sigmoid() first", source="vote")
    totals: dict[Hashable, float] = defaultdict(float)
    for answer, weight in zip(answers, w, strict=True):
        totals[answer] += float(weight)
    return dict(totals)


def vote_accuracy(
    answers: Sequence[Hashable],
    correct: Numbers,
    weights: Sequence[float] | None = None,
    *,
    ties: Ties = "expected",
) -> float:
    """Credit of a (weighted) vote for one problem.

    Args:
        answers: each candidate's final answer, already normalised so that equal answers are
            equal keys (e.g. the extracted `pred` strings).
        correct: whether each candidate is correct (candidates with the same answer should agree;
            the winning answer's credit is the mean correctness of its candidates).
        weights: reward per candidate for a reward-weighted vote; None for a majority vote.
        ties: "expected" credits a tie with the mean over the tied answers; "first" picks the
            tied answer seen first.
    """
    y = as_binary(correct, "correct", where="vote_accuracy")
    if len(y) != len(answers) or not answers:
        raise InputError(f"{len(answers)} answers for {len(y)} correctness labels", source="vote_accuracy")
    totals = vote(answers, weights)
    best = max(totals.values())
    winners = [a for a, t in totals.items() if np.isclose(t, best)]  # in order of first appearance
    if ties == "first":
        winners = winners[:1]
    credit = [y[[a == w for a in answers]].mean() for w in winners]
    return float(np.mean(credit))
