"""Calibrated PRM scores and adaptive sample budgets.

- `fit_calibrator`: isotonic regression (scikit-learn, extra `models`) from a prefix's
  aggregated PRM score to the probability that the solution it starts ends correct, fitted on
  held-out rollouts with known outcomes (every prefix of every rollout is one example). A raw PRM
  score is a ranking, not a probability; only a calibrated one can be compared with a threshold.
- `rejection_threshold`: the early-rejection threshold for a target accuracy loss against
  best-of-n, from held-out problems (rejection replayed on their rollouts; conformal risk control).
- `adaptive_vote`: draw solutions one at a time and stop as soon as the vote is confident —
  Adaptive-Consistency's Beta criterion (Aggarwal et al. 2023, arXiv:2305.11860, §2): with v1
  and v2 votes for the two leading answers, stop when P(p1 > p2) = 1 − I_{1/2}(v1 + 1, v2 + 1)
  ≥ `confidence` — or, with a calibrated reward, when the best solution's calibrated score
  reaches `reward_threshold`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewardlab._lazy import require
from rewardlab.errors import ArrayError
from rewardlab.select.answers import answer_votes
from rewardlab.select.generate import Problem, StepGenerator, StepScorer
from rewardlab.select.options import Aggregate, Equivalence
from rewardlab.select.search import Node, aggregate_prefix, rollouts

__all__ = ["AdaptiveResult", "Calibrator", "adaptive_vote", "beta_stop_confidence", "fit_calibrator", "rejection_threshold"]


@dataclass(frozen=True)
class Calibrator:
    """Maps (aggregated prefix score, depth) to P(the solution ends correct).

    One isotonic map per depth (the number of steps so far): the same score means more at a
    later step, when fewer steps are left to go wrong. Depths past the deepest one fitted use
    the deepest map. Call it on arrays of scores and depths.
    """

    models: tuple[Any, ...]  # fitted sklearn IsotonicRegression, one per depth
    aggregate: Aggregate
    examples: int

    def __call__(self, scores: np.ndarray, depths: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(scores, dtype=np.float64).ravel()
        d = np.ones(len(x), dtype=np.int64) if depths is None else np.asarray(depths, dtype=np.int64).ravel()
        out = np.empty(len(x))
        index = np.clip(d, 1, len(self.models)) - 1
        for k in np.unique(index):
            at = index == k
            out[at] = self.models[k].predict(x[at])
        return out.reshape(np.shape(scores))


def fit_calibrator(
    generator: StepGenerator, scorer: StepScorer, problems: Sequence[Problem], judge: Callable[[Problem, str | None], bool],
    *, n: int = 4, aggregate: Aggregate = "min", min_examples: int = 50,
) -> Calibrator:
    """Isotonic maps from prefix score to final correctness, per depth, from `n` rollouts per problem.

    Args:
        problems: held-out problems (not the ones searched later).
        judge: `judge(problem, answer) -> bool`, the ground truth of a finished solution.
        min_examples: depths with fewer examples are pooled with the depth before (when even
            the first depth has fewer, one map is fitted on every prefix of every depth).
    """
    require("sklearn", needed_by="PRM calibration", extra="select")
    from sklearn.isotonic import IsotonicRegression

    by_depth: dict[int, tuple[list[float], list[float]]] = {}
    for problem in problems:
        finished, _ = rollouts(generator, scorer, problem, n)
        for node in finished:
            correct = float(judge(problem, node.answer))
            for depth in range(1, len(node.scores) + 1):
                xs, ys = by_depth.setdefault(depth, ([], []))
                xs.append(aggregate_prefix(node.scores[:depth], aggregate))
                ys.append(correct)
    all_y = [y for _, ys in by_depth.values() for y in ys]
    if len(set(all_y)) < 2:
        raise ArrayError("problems", "calibration needs both correct and wrong rollouts; use more or harder problems")
    models: list[Any] = []
    for depth in sorted(by_depth):
        xs, ys = by_depth[depth]
        if len(xs) < min_examples or len(set(ys)) < 2:
            break  # too few to fit: deeper prefixes use the last fitted map
        models.append(IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(np.array(xs), np.array(ys)))
    if not models:  # too few rollouts to fit depths apart: one map for every depth
        xs = [x for values, _ in by_depth.values() for x in values]
        models.append(IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(np.array(xs), np.array(all_y)))
    return Calibrator(tuple(models), aggregate, len(all_y))


def rejection_threshold(
    generator: StepGenerator, scorer: StepScorer, problems: Sequence[Problem], judge: Callable[[Problem, str | None], bool],
    calibrated: Callable[[np.ndarray, np.ndarray], np.ndarray], *, n: int, max_loss: float = 0.01, aggregate: Aggregate = "min",
    prune_dominated: bool = True,
) -> float:
    """The largest early-rejection threshold whose accuracy loss against best-of-n is bounded by
    `max_loss`, chosen on held-out problems.

    On each problem, `n` rollouts are drawn as best-of-n would draw them, and early rejection is
    replayed on them (`search.replay_rejection`: it only cuts chains short) at every candidate
    threshold (the calibrated probabilities seen). The loss of a problem is 1 when best-of-n's
    answer is right and rejection's is not. A threshold is accepted when the conformal risk
    bound (m · mean loss + 1) / (m + 1) <= `max_loss` holds for it and for every lower one
    (Angelopoulos et al. 2022, "Conformal Risk Control", arXiv:2208.02814, Thm. 1, with losses in
    [0, 1]; the lower ones too, as the bound needs a loss that grows with the threshold). On new
    problems exchangeable with these, the expected loss is then at most `max_loss`. 0.0 (reject
    nothing) when even that is out of reach with this many problems.

    Args:
        problems: held-out problems, others than those the calibrator was fitted on.
        calibrated: a fitted `Calibrator` (or any map from (prefix score, depth) to P(correct)).
        n: the number of solutions of the search the threshold is for.
        max_loss: the accuracy (share of problems) allowed to be lost.
    """
    from rewardlab.select.search import replay_rejection

    if not 0 < max_loss < 1 or n < 1:
        raise ArrayError("max_loss", f"need 0 < max_loss < 1 and n >= 1, got {max_loss} and {n}")
    cases = []  # (problem, chains, calibrated probabilities per chain, threshold below which nothing is lost)
    for problem in problems:
        chains, _ = rollouts(generator, scorer, problem, n)
        p = [np.clip(np.asarray(calibrated(np.array([aggregate_prefix(c.scores[:d], aggregate) for d in range(1, len(c.scores) + 1)]),
                                           np.arange(1, len(c.scores) + 1)), dtype=np.float64), 0.0, 1.0) for c in chains]  # fmt: skip
        scores = [aggregate_prefix(c.scores, aggregate) for c in chains]
        winner = int(np.argmax(scores)) if chains else -1
        if winner >= 0 and judge(problem, chains[winner].answer):
            # Below this threshold the right pick survives every check and stays the best: no loss.
            safe_below = float(np.min(p[winner][:-1], initial=np.inf))
            cases.append((problem, chains, p, safe_below))
        else:
            cases.append((problem, chains, p, -np.inf))  # nothing right to lose
    m = len(cases)
    candidates = np.unique(np.concatenate([q[:-1] for _, _, p, _ in cases for q in p] or [np.zeros(0)]))
    accepted = 0.0
    for threshold in candidates[(candidates > 0) & (candidates < 1)]:
        losses = 0
        for problem, chains, p, safe_below in cases:
            if safe_below != -np.inf and threshold > safe_below:
                picked, _ = replay_rejection(chains, p, threshold=float(threshold), aggregate=aggregate, prune_dominated=prune_dominated)
                losses += picked is None or not judge(problem, picked.answer)
        if (losses + 1) / (m + 1) > max_loss:
            break
        accepted = float(threshold)
    return accepted


def beta_stop_confidence(top: int, second: int) -> float:
    """P(p1 > p2) under Beta(top + 1, second + 1): Adaptive-Consistency's stopping statistic."""
    require("scipy", needed_by="adaptive budgets", extra="select")
    from scipy.special import betainc

    return float(1.0 - betainc(top + 1, second + 1, 0.5))


@dataclass(frozen=True)
class AdaptiveResult:
    """An adaptive vote: the answer, how many solutions it drew (one that did not finish within
    the step limit counts: its tokens were spent), their tokens, and why it stopped (`"vote"`,
    `"reward"` or `"budget"`)."""

    answer: str | None
    samples: int
    tokens: int
    stopped: str
    solutions: tuple[Node, ...]


def adaptive_vote(
    generator: StepGenerator, scorer: StepScorer, problem: Problem, *, max_n: int = 16, min_n: int = 2,
    confidence: float = 0.95, calibrated: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    reward_threshold: float | None = None, aggregate: Aggregate = "min", equivalence: Equivalence = "math",
) -> AdaptiveResult:
    """Sample one solution at a time; stop when the vote (or a calibrated reward) is confident.

    The answer is the majority answer of the solutions drawn (answers grouped by `equivalence`,
    as `answer_classes` does; a solution without an answer does not vote; the first-seen class
    wins a tie); when the reward rule stops the search, it is the answer of the solution that
    reached the threshold. At most `max_n` solutions are drawn, finished or not.
    """
    if not 1 <= min_n <= max_n or not 0.5 <= confidence < 1:
        raise ArrayError("max_n", f"need 1 <= min_n <= max_n and 0.5 <= confidence < 1 (got {min_n}, {max_n}, {confidence})")
    if (reward_threshold is None) != (calibrated is None):
        raise ArrayError("reward_threshold", "give both a calibrator and reward_threshold, or neither")
    solutions: list[Node] = []
    tokens = draws = 0
    votes: list[tuple[str, int]] = []
    while draws < max_n:
        finished, meter = rollouts(generator, scorer, problem, 1)
        draws += 1
        tokens += meter.tokens
        solutions += finished
        if calibrated is not None and reward_threshold is not None and finished:
            node = finished[0]
            p = float(calibrated(np.array([aggregate_prefix(node.scores, aggregate)]), np.array([len(node.scores)]))[0])
            if p >= reward_threshold:
                return AdaptiveResult(finished[0].answer, draws, tokens, "reward", tuple(solutions))
        if finished:
            votes = answer_votes([node.answer for node in solutions], equivalence=equivalence)
        counts = [c for _, c in votes[:2]] + [0, 0]
        if votes and draws >= min_n and beta_stop_confidence(counts[0], counts[1]) >= confidence:
            return AdaptiveResult(votes[0][0], draws, tokens, "vote", tuple(solutions))
    return AdaptiveResult(votes[0][0] if votes else None, draws, tokens, "budget", tuple(solutions))
