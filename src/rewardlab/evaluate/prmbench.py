"""PRMBench scores, transcribed from the benchmark's official scorer.

Source (ssmisya/PRMBench, checked at commit a1ae4ea): `mr_eval/tasks/prmtest_classified/task.py`
(`load_data_function`, `evaluate_function`, `eval_on_hallucination_step`) and the PRMScore of
`mr_visualize/eval_res_view/draw_tabs/form_latex_strs.ipynb` (`get_prmscore_from_current_res_dict`).

- Every step of a solution is labelled: a step is erroneous (negative) when its 1-based index is
  in `error_steps` (there may be several), every other step is correct (positive), also the steps
  after the first error. A PRM's step is predicted correct when its score is above the threshold
  (`score > threshold`, as the official model wrappers do).
- Counts per solution: TP = correct step predicted correct, FN = correct predicted erroneous,
  FP = erroneous predicted correct, TN = erroneous predicted erroneous. Only the steps the model
  labelled are counted (the loop runs over the predictions).
- F1 is the positive-class F1 of the pooled counts and `negative_f1` the F1 of the erroneous
  class; an undefined precision or recall is −1 and an undefined F1 is −1, as in the official code.
- The total pools every solution except the fully correct originals (classification "correct",
  built from each "redundency" row's original process): these are scored per class and used
  only for `similarity`; the multi-solution rows ("multi_solutions", no error step) are in the total.
- PRMScore = 0.5·F1 + 0.5·negative F1, clipped at 0; for "multi_solutions" (no erroneous step
  to find) the class PRMScore is its F1 alone, clipped at 0. Category scores are the mean of
  their classes' PRMScores: simplicity (redundency, circular), soundness (counterfactual,
  step_contradiction, domain_inconsistency, confidence), sensitivity (missing_condition,
  deception, multi_solutions).
- similarity = mean |share of steps predicted correct − the same share on the solution's correct
  original|, over solutions whose original has a non-zero share (the official truthiness check).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["PRMBenchResult", "PRMBenchSolution", "prmbench_scores"]

#: PRMBench's three categories and their classifications (`classification_parallel_dict`).
PRMBENCH_CATEGORIES: dict[str, tuple[str, ...]] = {
    "simplicity": ("redundency", "circular"),
    "soundness": ("counterfactual", "step_contradiction", "domain_inconsistency", "confidence"),
    "sensitivity": ("missing_condition", "deception", "multi_solutions"),
}
_CORRECT = "correct"
_POSITIVE_ONLY = ("multi_solutions",)
_METRICS = ("correct_step_acc", "wrong_step_acc", "total_step_acc", "first_error_acc")


@dataclass(frozen=True)
class PRMBenchSolution:
    """One scored PRMBench solution.

    Attributes:
        idx: "<classification>_<file idx>", as the official loader names it ("correct_<idx>"
            for a correct original), so a solution finds its original for `similarity`.
        classification: the error class, "multi_solutions" or "correct".
        error_steps: 1-based indices of the erroneous steps.
        predicted_correct: per step, whether the PRM judged it correct.
    """

    idx: str
    classification: str
    error_steps: tuple[int, ...]
    predicted_correct: tuple[bool, ...]


def step_counts(error_steps: Sequence[int], predicted_correct: Sequence[bool]) -> dict[str, Any]:
    """TP/FP/TN/FN and per-step hit lists of one solution (`eval_on_hallucination_step`)."""
    wrong = {i - 1 for i in error_steps}  # the files are 1-based
    first = min(wrong) if wrong else -1
    out: dict[str, Any] = {"TP": 0, "FP": 0, "TN": 0, "FN": 0, **{f"{m}_list": [] for m in _METRICS}}
    for i, ok in enumerate(predicted_correct):
        if i == first:
            out["first_error_acc_list"] = [int(not ok)]
        hit = int(ok) if i not in wrong else int(not ok)
        out["total_step_acc_list"].append(hit)
        out["wrong_step_acc_list" if i in wrong else "correct_step_acc_list"].append(hit)
        key = ("TP" if ok else "FN") if i not in wrong else ("FP" if ok else "TN")
        out[key] += 1
    return out


def _ratio(a: int, b: int) -> float:
    return a / b if b != 0 else -1.0


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if (p + r) != 0 else -1.0


def _mean_or_sentinel(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else -1.0


@dataclass
class _Pool:
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    lists: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in (*_METRICS, "similarity")})

    def add(self, counts: dict[str, Any]) -> None:
        self.tp += counts["TP"]
        self.fp += counts["FP"]
        self.tn += counts["TN"]
        self.fn += counts["FN"]
        for m in _METRICS:
            self.lists[m].extend(counts[f"{m}_list"])

    def summary(self, positive_only: bool) -> dict[str, float]:
        precision, recall = _ratio(self.tp, self.tp + self.fp), _ratio(self.tp, self.tp + self.fn)
        neg_precision, neg_recall = _ratio(self.tn, self.tn + self.fn), _ratio(self.tn, self.tn + self.fp)
        f1, nf1 = _f1(precision, recall), _f1(neg_precision, neg_recall)
        raw = f1 if positive_only else 0.5 * f1 + 0.5 * nf1
        return {"precision": precision, "recall": recall, "f1": f1, "negative_precision": neg_precision,
                "negative_recall": neg_recall, "negative_f1": nf1, "prm_score": raw if raw > 0 else 0.0,
                **{m: _mean_or_sentinel(v) for m, v in self.lists.items()}}


@dataclass(frozen=True)
class PRMBenchResult:
    """PRMBench's overall numbers, per classification, and per category."""

    overall: dict[str, float]
    by_class: dict[str, dict[str, float]]
    by_category: dict[str, float]
    solutions: int

    @property
    def prm_score(self) -> float:
        return self.overall["prm_score"]

    def to_dict(self) -> dict[str, object]:
        return {"overall": self.overall, "by_class": self.by_class, "by_category": self.by_category,
                "solutions": self.solutions}


def prmbench_scores(solutions: Sequence[PRMBenchSolution]) -> PRMBenchResult:
    """PRMBench's overall PRMScore, per-class and per-category scores (official formulas).

    Examples:
        >>> s = [PRMBenchSolution("circular_0", "circular", (2,), (True, False, True)),
        ...      PRMBenchSolution("circular_1", "circular", (1, 3), (True, True, False))]
        >>> # TP 3, FP 1, TN 2, FN 0: F1 = 6/7, negative F1 = 4/5, PRMScore = their mean
        >>> round(prmbench_scores(s).prm_score, 4)
        0.8286
    """
    total = _Pool()
    by_class: dict[str, _Pool] = {}
    correct_share: dict[str, float] = {}
    ordered = sorted(solutions, key=lambda s: s.classification != _CORRECT)  # originals first
    for sol in ordered:
        counts = step_counts(sol.error_steps, sol.predicted_correct)
        labels = sol.predicted_correct
        share = sum(labels) / len(labels) if labels else -1.0
        pool = by_class.setdefault(sol.classification, _Pool())
        pool.add(counts)
        if sol.classification == _CORRECT:
            correct_share[sol.idx] = share
            continue
        total.add(counts)
        original = correct_share.get(f"{_CORRECT}_" + sol.idx[len(f"{sol.classification}_"):])
        if original and share != -1:  # the official check: an original share of 0 is skipped too
            total.lists["similarity"].append(abs(share - original))
            pool.lists["similarity"].append(abs(share - original))
    classes = {name: pool.summary(name in _POSITIVE_ONLY) for name, pool in sorted(by_class.items())}
    categories = {}
    for category, names in PRMBENCH_CATEGORIES.items():
        present = [classes[n]["prm_score"] for n in names if n in classes]
        if present:
            categories[category] = float(np.mean(present))
    n_scored = sum(1 for s in solutions if s.classification != _CORRECT)
    return PRMBenchResult(total.summary(False), classes, categories, n_scored)
