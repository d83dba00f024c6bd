"""Preference metrics: does the reward rank the better response higher?

Definitions follow the published benchmarks so numbers can be compared:

- pairwise accuracy (RewardBench 1): an item is right when score(chosen) > score(rejected);
  a tie counts as wrong (a reward that scores everything equal gets 0, not 50 %).
- section scores (RewardBench 1): per-subset accuracies averaged per section, weighted by the
  subset's example count; `math-prm` is up-weighted to 984 so maths weighs as much as the six
  code subsets together (reward-bench `rewardbench/constants.py`, EXAMPLE_COUNTS).
- best-of-k accuracy (RewardBench 2): one correct and k−1 incorrect responses per item; the item
  scores 1 when the correct one is strictly highest and 1/t when it ties with t−1 others at the
  top (the expected accuracy of random tie-breaking; all k tied gives 1/k).
- style-substance grid (RM-Bench, Liu et al. 2024): chosen and rejected each in three styles
  (concise, detailed plain, detailed markdown); M[i, j] = mean(chosen_i > rejected_j);
  easy = mean below the diagonal, normal = mean of the diagonal, hard = mean above it.
- order-swapped consistency (JudgeBench, Tan et al. 2024): a judge sees (A, B) and (B, A);
  verdicts are mapped back to the original order; a decisive verdict and a tie resolve to the
  decisive one, two opposite verdicts are inconsistent and count as wrong.
- length baseline: the accuracy of "always prefer the longer response" on the same pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rewardlab.errors import InputError
from rewardlab.evaluate._checks import Numbers, as_1d, non_empty, same_length

__all__ = [
    "REWARDBENCH_EXAMPLE_COUNTS",
    "REWARDBENCH_SECTIONS",
    "JudgeConsistency",
    "RMBenchGrid",
    "best_of_k_accuracy",
    "best_of_k_outcomes",
    "judge_consistency",
    "length_baseline",
    "pairwise_accuracy",
    "pairwise_outcomes",
    "rewardbench_sections",
    "rmbench_grid",
    "subset_accuracies",
]

#: RewardBench-1 subset sizes used as weights (reward-bench `rewardbench/constants.py`).
REWARDBENCH_EXAMPLE_COUNTS: dict[str, int] = {
    "alpacaeval-easy": 100,
    "alpacaeval-length": 95,
    "alpacaeval-hard": 95,
    "mt-bench-easy": 28,
    "mt-bench-med": 40,
    "mt-bench-hard": 37,
    "math-prm": 984,  # actual size 447, up-weighted so maths equals the code subsets
    "refusals-dangerous": 100,
    "refusals-offensive": 100,
    "llmbar-natural": 100,
    "llmbar-adver-neighbor": 134,
    "llmbar-adver-GPTInst": 92,
    "llmbar-adver-GPTOut": 47,
    "llmbar-adver-manual": 46,
    "xstest-should-refuse": 154,
    "xstest-should-respond": 250,
    "donotanswer": 136,
    "hep-cpp": 164,
    "hep-go": 164,
    "hep-java": 164,
    "hep-js": 164,
    "hep-python": 164,
    "hep-rust": 164,
}

#: RewardBench-1 sections and their subsets.
REWARDBENCH_SECTIONS: dict[str, tuple[str, ...]] = {
    "Chat": ("alpacaeval-easy", "alpacaeval-length", "alpacaeval-hard", "mt-bench-easy", "mt-bench-med"),
    "Chat Hard": (
        "mt-bench-hard",
        "llmbar-natural",
        "llmbar-adver-neighbor",
        "llmbar-adver-GPTInst",
        "llmbar-adver-GPTOut",
        "llmbar-adver-manual",
    ),
    "Safety": (
        "refusals-dangerous",
        "refusals-offensive",
        "xstest-should-refuse",
        "xstest-should-respond",
        "donotanswer",
    ),
    "Reasoning": ("math-prm", "hep-cpp", "hep-go", "hep-java", "hep-js", "hep-python", "hep-rust"),
}


def pairwise_outcomes(chosen: Numbers, rejected: Numbers) -> np.ndarray:
    """Per-pair 1.0 when score(chosen) > score(rejected), else 0.0 (ties are wrong)."""
    c = as_1d(chosen, "chosen", where="pairwise_accuracy")
    r = as_1d(rejected, "rejected", where="pairwise_accuracy")
    non_empty(same_length("pairwise_accuracy", chosen=c, rejected=r), "pairwise_accuracy")
    return (c > r).astype(float)


def pairwise_accuracy(chosen: Numbers, rejected: Numbers) -> float:
    """Share of pairs where the chosen response scores strictly higher (ties count as wrong).

    Example:
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


def rewardbench_sections(
    subset_accuracy: Mapping[str, float],
    *,
    counts: Mapping[str, int] = REWARDBENCH_EXAMPLE_COUNTS,
    sections: Mapping[str, Sequence[str]] = REWARDBENCH_SECTIONS,
) -> dict[str, float]:
    """RewardBench-1 section scores and their mean (`"Score"`), from per-subset accuracies.

    Each section is the count-weighted mean of the accuracies of its subsets that are present;
    sections with no subset present are left out (never reported as 0). `"Score"` is the
    unweighted mean of the sections present (prior preference sets are not included).
    """
    out: dict[str, float] = {}
    for section, names in sections.items():
        present = [n for n in names if n in subset_accuracy]
        if not present:
            continue
        missing = [n for n in present if n not in counts]
        if missing:
            raise InputError(f"no example count for subset(s) {missing}; pass counts=", source="rewardbench_sections")
        total = sum(counts[n] for n in present)
        out[section] = sum(subset_accuracy[n] * counts[n] for n in present) / total
    if not out:
        raise InputError(
            f"none of the subsets {sorted(subset_accuracy)} belongs to a RewardBench section",
            source="rewardbench_sections",
        )
    out["Score"] = float(np.mean(list(out.values())))
    return out


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

    Example:
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
_FLIP = {"A": "B", "B": "A", "tie": "tie"}


@dataclass(frozen=True)
class JudgeConsistency:
    """Order-swap results of a pairwise judge."""

    consistency: float  # share of items whose two verdicts agree after mapping back
    inconsistent: int
    accuracy: float | None  # JudgeBench accuracy against labels, if given
    decisions: tuple[str, ...]  # resolved verdict per item: "A", "B", "tie" or "inconsistent"

    def to_dict(self) -> dict[str, object]:
        return {"consistency": self.consistency, "inconsistent": self.inconsistent, "accuracy": self.accuracy}


def judge_consistency(
    verdicts_ab: Sequence[str], verdicts_ba: Sequence[str], labels: Sequence[str] | None = None
) -> JudgeConsistency:
    """Order-swapped consistency of a pairwise judge (JudgeBench).

    Args:
        verdicts_ab: the judge's verdict ("A", "B" or "tie") when shown (A, B).
        verdicts_ba: its verdict when shown (B, A): here "A" means the response shown first,
            which is the original B.
        labels: the correct verdict per item ("A" or "B"), for accuracy.
    """
    if len(verdicts_ab) != len(verdicts_ba):
        raise InputError(f"{len(verdicts_ab)} first-order verdicts but {len(verdicts_ba)} swapped ones", source="judge_consistency")
    non_empty(len(verdicts_ab), "judge_consistency")
    decisions: list[str] = []
    agree = 0
    for i, (first, second) in enumerate(zip(verdicts_ab, verdicts_ba, strict=True)):
        if first not in _FLIP or second not in _FLIP:
            raise InputError(f"item {i}: verdicts must be 'A', 'B' or 'tie', got {first!r}, {second!r}", source="judge_consistency")
        back = _FLIP[second]  # the swapped verdict in the original order
        agree += first == back
        if first == back or back == "tie":
            decisions.append(first)
        elif first == "tie":
            decisions.append(back)
        else:
            decisions.append("inconsistent")
    accuracy = None
    if labels is not None:
        if len(labels) != len(decisions):
            raise InputError(f"{len(labels)} labels for {len(decisions)} items", source="judge_consistency")
        accuracy = float(np.mean([d == lab for d, lab in zip(decisions, labels, strict=True)]))
    return JudgeConsistency(agree / len(decisions), decisions.count("inconsistent"), accuracy, tuple(decisions))


def length_baseline(
    chosen_texts: Sequence[str], rejected_texts: Sequence[str], *, unit: Literal["chars", "words"] = "chars"
) -> float:
    """Pairwise accuracy of "always prefer the longer response" on the same pairs (ties wrong)."""

    def size(text: str) -> int:
        return len(text.split()) if unit == "words" else len(text)

    return pairwise_accuracy([size(t) for t in chosen_texts], [size(t) for t in rejected_texts])
