"""Process reward model metrics: first-error detection and step classification.

- ProcessBench (Zheng et al. 2024): each solution has the index of its first wrong step, or −1
  when all steps are right. A model predicts an index (or −1). Accuracy is computed separately
  on erroneous solutions (exact index) and on correct ones (predicting −1); the score is their
  harmonic mean F1 = 2·acc_err·acc_ok / (acc_err + acc_ok), per subset (QwenLM/ProcessBench
  `code/run_eval.py`, which prints one F1 per config). The headline "Avg. F1" of the paper is the
  mean of the four subsets' F1 (gsm8k, math, olympiadbench, omnimath), not the F1 of the pooled
  solutions: `processbench_average`.
- `step_f1`: F1 of correct steps and of erroneous steps over flat step labels, and their mean.
  This is the PRMScore formula only; PRMBench's own labelling, pooling and clipping are in
  `rewardlab.evaluate.prmbench`.

A PRM gives step scores; `first_error_step` turns them into a ProcessBench prediction with a
threshold (the first step scoring below it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rewardlab.errors import InputError
from rewardlab.evaluate._checks import Numbers, as_1d, as_binary, non_empty, same_length

__all__ = ["ProcessBenchScore", "StepF1", "first_error_step", "processbench_average", "processbench_f1", "step_f1"]


def first_error_step(step_scores: Numbers, *, threshold: float = 0.5) -> int:
    """Index of the first step scoring below `threshold`, or −1 when none does."""
    s = as_1d(step_scores, "step_scores", where="first_error_step")
    below = np.flatnonzero(s < threshold)
    return int(below[0]) if below.size else -1


@dataclass(frozen=True)
class ProcessBenchScore:
    acc_error: float  # exact first-error index on solutions that have an error
    acc_correct: float  # predicting "no error" on fully correct solutions
    f1: float
    n_error: int
    n_correct: int

    def to_dict(self) -> dict[str, float]:
        return {"acc_error": self.acc_error, "acc_correct": self.acc_correct, "f1": self.f1,
                "n_error": self.n_error, "n_correct": self.n_correct}


def processbench_f1(labels: Sequence[int], predictions: Sequence[int]) -> ProcessBenchScore:
    """ProcessBench score from gold and predicted first-error indices (−1 = no error).

    Examples:
        >>> processbench_f1([2, -1, 0, -1], [2, -1, 1, 3]).f1
        0.5
    """
    y = as_1d(labels, "labels", where="processbench_f1").astype(int)
    p = as_1d(predictions, "predictions", where="processbench_f1").astype(int)
    non_empty(same_length("processbench_f1", labels=y, predictions=p), "processbench_f1")
    erroneous = y != -1
    if not erroneous.any() or erroneous.all():
        raise InputError(
            "ProcessBench F1 needs both erroneous (label >= 0) and correct (label -1) solutions",
            source="processbench_f1",
        )
    acc_err = float(np.mean(p[erroneous] == y[erroneous]))
    acc_ok = float(np.mean(p[~erroneous] == -1))
    f1 = 0.0 if acc_err + acc_ok == 0 else 2 * acc_err * acc_ok / (acc_err + acc_ok)
    return ProcessBenchScore(acc_err, acc_ok, f1, int(erroneous.sum()), int((~erroneous).sum()))


def processbench_average(by_subset: dict[str, ProcessBenchScore]) -> float:
    """ProcessBench's headline: the unweighted mean of the subsets' F1 (each subset counts the
    same however many solutions it has).

    Examples:
        >>> a = processbench_f1([0, -1], [0, -1])       # F1 1.0
        >>> b = processbench_f1([0, 1, -1], [1, 1, -1])  # acc_err 0.5, acc_ok 1: F1 2/3
        >>> round(processbench_average({"gsm8k": a, "math": b}), 4)
        0.8333
    """
    if not by_subset:
        raise InputError("no subset to average", source="processbench_average")
    return float(np.mean([s.f1 for s in by_subset.values()]))


def binary_f1(truth: np.ndarray, predicted: np.ndarray) -> float:
    """F1 of the positive class of two bool arrays (0 when there is nothing to find or found)."""
    tp = float(np.sum(truth & predicted))
    denominator = float(np.sum(truth) + np.sum(predicted))
    return 0.0 if denominator == 0 else 2 * tp / denominator


@dataclass(frozen=True)
class StepF1:
    f1_positive: float  # class "step is correct"
    f1_negative: float  # class "step is erroneous"
    mean_f1: float  # 0.5 * f1_positive + 0.5 * f1_negative

    def to_dict(self) -> dict[str, float]:
        return {"f1_positive": self.f1_positive, "f1_negative": self.f1_negative, "mean_f1": self.mean_f1}


def step_f1(labels: Numbers, predictions: Numbers) -> StepF1:
    """Step classification F1 of both classes over all steps of all solutions (flattened).

    Args:
        labels: 1 for a correct step, 0 for an erroneous one.
        predictions: the PRM's 0/1 decisions (threshold step scores first).
    """
    y = as_binary(labels, "labels", where="step_f1")
    p = as_binary(predictions, "predictions", where="step_f1")
    non_empty(same_length("step_f1", labels=y, predictions=p), "step_f1")
    pos, neg = binary_f1(y, p), binary_f1(~y, ~p)
    return StepF1(pos, neg, 0.5 * pos + 0.5 * neg)
