"""Preference metrics: does the reward rank the better response higher?

Definitions follow the published benchmarks so numbers can be compared:

- pairwise accuracy (RewardBench 1): an item is right when score(chosen) > score(rejected);
  a tie counts as wrong (a reward that scores everything equal gets 0, not 50 %).
- section and overall scores (RewardBench 1) and the Ties score (RewardBench 2) live in
  `rewardlab.evaluate.rewardbench`.
- best-of-k accuracy (RewardBench 2): one correct and k−1 incorrect responses per item; the item
  scores 1 when the correct one is strictly highest and 1/t when it ties with t−1 others at the
  top (the expected accuracy of random tie-breaking; all k tied gives 1/k).
- style-substance grid (RM-Bench, Liu et al. 2024): chosen and rejected each in three styles
  (concise, detailed plain, detailed markdown); M[i, j] = mean(chosen_i > rejected_j);
  easy = mean below the diagonal, normal = mean of the diagonal, hard = mean above it.
- order-swapped consistency (JudgeBench, Tan et al. 2024): a judge sees (A, B) and (B, A);
  verdicts are mapped back to the original order; a decisive verdict and a tie resolve to the
  decisive one, two opposite verdicts are inconsistent and count as wrong.
- length baseline: two-sided, the better of "always prefer the longer response" and "always
  prefer the shorter one" on the same pairs (a benchmark can reward either; equal lengths are
  a tie and count as wrong for both).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rewardlab.errors import InputError
from rewardlab.evaluate._checks import Numbers, as_1d, non_empty, same_length

__all__ = [
    "JudgeConsistency",
    "LengthBaseline",
    "RMBenchGrid",
    "best_of_k_accuracy",
    "best_of_k_outcomes",
    "judge_consistency",
    "length_baseline",
    "pairwise_accuracy",
    "pairwise_outcomes",
    "rmbench_grid",
    "subset_accuracies",
]

def pairwise_outcomes(chosen: Numbers, rejected: Numbers) -> np.ndarray:
    """Per-pair 1.0 when score(chosen) > score(rejected), else 0.0 (ties are wrong)."""
    c = as_1d(chosen, "chosen", where="pairwise_accuracy")
    r = as_1d(rejected, "rejected", where="pairwise_accuracy")
    non_empty(same_length("pairwise_accuracy", chosen=c, rejected=r), "pairwise_accuracy")
    return (c > r).astype(float)


def pairwise_accuracy(chosen: Numbers, rejected: Numbers) -> float:
    """Share of pairs where the chosen response scores strictly higher (ties count as wrong).

    Examples:
        >>> pairwise_accuracy([1.0, 0.5, 0.2], [0.0, 0.5, 0.9])
        0.3333333333333333
    """
    return float(pairwise_outcomes(chosen, rejected).mean())


def subset_accuracies(
    chosen: Numbers, rejected: Numbers, subsets: Sequence[str]
) -> dict[str, tuple[float, int]]:
    """Pairwise accuracy per subset name: `{subset: (accuracy, n_pairs)}`."""
    outcomes = pairwise_outcomes(chosen, rejected)
    if len(subsets) != len(outcomes):
        raise InputError(f"subsets has {len(subsets)} names for {len(outcomes)} pairs", source="subset_accuracies")
    names = np.asarray([str(s) for s in subsets])
    return {name: (float(outcomes[names == name].mean()), int(np.sum(names == name))) for name in sorted(set(names))}


def best_of_k_outcomes(correct: Numbers, incorrect: Sequence[Numbers] | np.ndarray) -> np.ndarray:
    """Per-item best-of-k credit: 1 if the correct response is strictly best, 1/t on a t-way tie."""
    c = as_1d(correct, "correct", where="best_of_k_accuracy")
    wrong = np.asarray(incorrect, dtype=float)
    if wrong.ndim != 2 or wrong.shape[0] != len(c) or not np.all(np.isfinite(wrong)):
        raise InputError(
            f"incorrect must be a finite (n_items, k-1) array matching {len(c)} items, got shape {wrong.shape}",
            source="best_of_k_accuracy",
        )
    non_empty(len(c), "best_of_k_accuracy")
    top = wrong.max(axis=1)
    ties = np.sum(wrong == c[:, None], axis=1)
    return np.where(c > top, 1.0, np.where(c == top, 1.0 / (1 + ties), 0.0))


def best_of_k_accuracy(correct: Numbers, incorrect: Sequence[Numbers] | np.ndarray) -> float:
    """RewardBench-2 style accuracy: mean of `best_of_k_outcomes`.

    Examples:
        >>> best_of_k_accuracy([0.9, 0.5, 0.1], [[0.1, 0.2, 0.3], [0.5, 0.5, 0.5], [0.2, 0.0, 0.0]])
        0.4166666666666667
    """
    return float(best_of_k_outcomes(correct, incorrect).mean())


@dataclass(frozen=True)
class RMBenchGrid:
    """RM-Bench 3×3 accuracy grid; rows are chosen styles, columns rejected styles."""

    matrix: np.ndarray  # (3, 3)
    easy: float
    normal: float
    hard: float

    @property
    def average(self) -> float:
        """Mean of all nine cells (RM-Bench's "Avg")."""
        return float(self.matrix.mean())

    def to_dict(self) -> dict[str, object]:
        return {"matrix": self.matrix.tolist(), "easy": self.easy, "normal": self.normal,
                "hard": self.hard, "average": self.average}


def rmbench_grid(chosen: Sequence[Numbers] | np.ndarray, rejected: Sequence[Numbers] | np.ndarray) -> RMBenchGrid:
    """RM-Bench style-by-substance grid.

    Args:
        chosen: (n_items, 3) scores of the correct response in styles ordered concise,
            detailed plain, detailed markdown.
        rejected: (n_items, 3) scores of the flawed response in the same styles.

    Hard cells pit a plainer correct answer against a more decorated wrong one (above the
    diagonal), easy cells the reverse. Ties count as wrong.
    """
    c = np.asarray(chosen, dtype=float)
    r = np.asarray(rejected, dtype=float)
    if c.ndim != 2 or c.shape[1] != 3 or c.shape != r.shape or not (np.all(np.isfinite(c)) and np.all(np.isfinite(r))):
        raise InputError(f"chosen and rejected must be finite (n, 3) arrays, got {c.shape} and {r.shape}", source="rmbench_grid")
    non_empty(len(c), "rmbench_grid")
    matrix = (c[:, :, None] > r[:, None, :]).mean(axis=0)  # (3, 3): [i, j] = P(chosen_i > rejected_j)
    return RMBenchGrid(
        matrix=matrix,
        easy=float(matrix[np.tril_indices(3, -1)].mean()),
        normal=float(np.diag(matrix).mean()),
        hard=float(matrix[np.triu_indices(3, 1)].mean()),
    )


Verdict = Literal["A", "B", "tie"]
_FLIP = {"A": "B", "B": "A", "tie": "tie", None: None}


@dataclass(frozen=True)
class JudgeConsistency:
    """Order-swap results of a pairwise judge."""

    consistency: float  # share of items whose two verdicts are given and agree after mapping back
    inconsistent: int  # items with two opposite decisive verdicts
    nulls: int  # items with at least one missing (null) verdict
    accuracy: float | None  # JudgeBench accuracy against labels, if given
    decisions: tuple[str, ...]  # per item: "A", "B", "tie", "none" (no verdict) or "inconsistent"

    def to_dict(self) -> dict[str, object]:
        return {"consistency": self.consistency, "inconsistent": self.inconsistent, "nulls": self.nulls,
                "accuracy": self.accuracy, "items": len(self.decisions)}


def _resolve(first: str | None, back: str | None) -> str:
    """One decision from two verdicts in the original order. JudgeBench (`utils/metrics.py`)
    adds +1 per verdict equal to the label and −1 per verdict equal to the other side; a tie or
    a null adds 0. So the decisive verdicts decide, and two opposite ones cancel."""
    decisive = {v for v in (first, back) if v in ("A", "B")}
    if len(decisive) == 2:
        return "inconsistent"
    if decisive:
        return decisive.pop()
    return "tie" if "tie" in (first, back) else "none"


def judge_consistency(
    verdicts_ab: Sequence[str | None], verdicts_ba: Sequence[str | None], labels: Sequence[str] | None = None
) -> JudgeConsistency:
    """Order-swapped consistency and accuracy of a pairwise judge (JudgeBench's counting).

    Args:
        verdicts_ab: the judge's verdict ("A", "B", "tie", or None when it gave none) when
            shown (A, B).
        verdicts_ba: its verdict when shown (B, A): here "A" means the response shown first,
            which is the original B.
        labels: the correct verdict per item ("A" or "B"), for accuracy. Accuracy counts every
            item, null verdicts included, in the denominator, as JudgeBench does.
    """
    if len(verdicts_ab) != len(verdicts_ba):
        raise InputError(f"{len(verdicts_ab)} first-order verdicts but {len(verdicts_ba)} swapped ones", source="judge_consistency")
    non_empty(len(verdicts_ab), "judge_consistency")
    decisions: list[str] = []
    agree = nulls = 0
    for i, (first, second) in enumerate(zip(verdicts_ab, verdicts_ba, strict=True)):
        if first not in _FLIP or second not in _FLIP:
            raise InputError(f"item {i}: verdicts must be 'A', 'B', 'tie' or null, got {first!r}, {second!r}",
                             source="judge_consistency")
        back = _FLIP[second]  # the swapped verdict in the original order
        nulls += first is None or second is None
        agree += first is not None and first == back
        decisions.append(_resolve(first, back))
    accuracy = None
    if labels is not None:
        if len(labels) != len(decisions):
            raise InputError(f"{len(labels)} labels for {len(decisions)} items", source="judge_consistency")
        accuracy = float(np.mean([d == lab for d, lab in zip(decisions, labels, strict=True)]))
    return JudgeConsistency(agree / len(decisions), decisions.count("inconsistent"), nulls, accuracy, tuple(decisions))


@dataclass(frozen=True)
class LengthBaseline:
    """Accuracy of the two length rules on the same items; `best` is the better of the two.

    Picking the better direction on the evaluation data is what a length-exploiting reward
    could learn, so a reward should beat `best`, not only `longer`.
    """

    longer: float  # "always prefer the longer response"
    shorter: float  # "always prefer the shorter response"

    @property
    def best(self) -> float:
        return max(self.longer, self.shorter)

    @property
    def direction(self) -> Literal["longer", "shorter"]:
        return "longer" if self.longer >= self.shorter else "shorter"

    def __str__(self) -> str:
        return f"{self.best:.4f} ({self.direction} wins; longer {self.longer:.4f}, shorter {self.shorter:.4f})"

    def to_dict(self) -> dict[str, object]:
        return {"longer": self.longer, "shorter": self.shorter, "best": self.best, "direction": self.direction}


def _size(text: str, unit: Literal["chars", "words"]) -> int:
    return len(text.split()) if unit == "words" else len(text)


def length_baseline(
    chosen_texts: Sequence[str], rejected_texts: Sequence[str], *, unit: Literal["chars", "words"] = "chars"
) -> LengthBaseline:
    """Pairwise accuracy of "prefer the longer" and of "prefer the shorter" (equal lengths wrong).

    Examples:
        >>> b = length_baseline(["a short one", "tiny"], ["a much longer reply", "a longer reply"])
        >>> b.longer, b.shorter, b.direction
        (0.0, 1.0, 'shorter')
    """
    c = np.asarray([_size(t, unit) for t in chosen_texts], dtype=float)
    r = np.asarray([_size(t, unit) for t in rejected_texts], dtype=float)
    return LengthBaseline(pairwise_accuracy(c, r), pairwise_accuracy(-c, -r))


def best_of_k_length_baseline(lengths: np.ndarray) -> LengthBaseline:
    """Best-of-k accuracy of "pick the longest" and "pick the shortest"; `lengths` is
    (n_items, k) with the correct response first (ties at the top get 1/t, as for a reward)."""
    return LengthBaseline(best_of_k_accuracy(lengths[:, 0], lengths[:, 1:]),
                          best_of_k_accuracy(-lengths[:, 0], -lengths[:, 1:]))
