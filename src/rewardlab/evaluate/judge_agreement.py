"""How far a judge can be trusted: agreement with labels and with another judge.

Against labels (a judge's `[0, 1]` scores read as P(correct), 0/1 labels): accuracy of the
verdict `score >= threshold`, Cohen's kappa (Cohen 1960: `(p_o - p_e) / (1 - p_e)`, agreement
beyond chance; scikit-learn's `cohen_kappa_score`) and the expected calibration error of the
scores (`rewardlab.evaluate.calibration.ece`). Between judges: raw agreement and kappa of the
two verdicts and Spearman's rank correlation of the scores.

Rows a judge could not score (`error` or `skipped` results, None) are left out of every number
and counted in `unscored`, never read as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rewardlab.core import RewardResult
from rewardlab.errors import InputError
from rewardlab.evaluate.calibration import ece

__all__ = ["JudgeAgreement", "JudgeVsJudge", "judge_vs_judge", "judge_vs_labels"]

Scores = Sequence[RewardResult | float | None]


@dataclass(frozen=True)
class JudgeAgreement:
    """A judge against labels (`kappa` is None when either side is constant)."""

    n: int
    unscored: int
    accuracy: float
    kappa: float | None
    ece: float


@dataclass(frozen=True)
class JudgeVsJudge:
    """Two judges on the same rows (None where a statistic is undefined)."""

    n: int
    unscored: int
    agreement: float
    kappa: float | None
    spearman: float | None


def _score(item: RewardResult | float | None) -> float | None:
    if isinstance(item, RewardResult):
        return item.score if item.is_ok else None
    return None if item is None else float(item)


def _kappa(a: np.ndarray, b: np.ndarray) -> float | None:
    if len(set(a.tolist()) | set(b.tolist())) < 2:
        return None  # one class only: chance agreement is 1 and kappa is 0/0
    from sklearn.metrics import cohen_kappa_score

    value = float(cohen_kappa_score(a, b))
    return value if np.isfinite(value) else None


def judge_vs_labels(scores: Scores, labels: Sequence[bool | int], *, threshold: float = 0.5, n_bins: int = 10) -> JudgeAgreement:
    """Accuracy, Cohen's kappa and ECE of a judge's scores against 0/1 labels.

    Examples:
        >>> r = judge_vs_labels([0.9, 0.8, 0.2, None], [1, 0, 0, 1])
        >>> (r.n, r.unscored, round(r.accuracy, 3))
        (3, 1, 0.667)
    """
    if len(scores) != len(labels):
        raise InputError(f"{len(scores)} scores but {len(labels)} labels; give one label per row", source="judge_vs_labels")
    kept = [(s, int(bool(y))) for s, y in ((_score(x), y) for x, y in zip(scores, labels, strict=True)) if s is not None]
    if not kept:
        raise InputError("no row was scored: nothing to compare with the labels", source="judge_vs_labels")
    p = np.array([s for s, _ in kept], dtype=float)
    y = np.array([label for _, label in kept], dtype=int)
    verdict = (p >= threshold).astype(int)
    return JudgeAgreement(len(kept), len(scores) - len(kept), float(np.mean(verdict == y)), _kappa(verdict, y), ece(p, y, n_bins=n_bins))


def judge_vs_judge(first: Scores, second: Scores, *, threshold: float = 0.5) -> JudgeVsJudge:
    """Agreement of two judges' verdicts (`score >= threshold`) and rank correlation of their scores."""
    if len(first) != len(second):
        raise InputError(f"{len(first)} and {len(second)} scores; the judges must score the same rows", source="judge_vs_judge")
    pairs = [(a, b) for a, b in ((_score(x), _score(y)) for x, y in zip(first, second, strict=True)) if a is not None and b is not None]
    if not pairs:
        raise InputError("no row was scored by both judges", source="judge_vs_judge")
    a = np.array([x for x, _ in pairs], dtype=float)
    b = np.array([y for _, y in pairs], dtype=float)
    va, vb = (a >= threshold).astype(int), (b >= threshold).astype(int)
    spearman: float | None = None
    if len(pairs) > 1 and np.ptp(a) > 0 and np.ptp(b) > 0:
        from scipy.stats import spearmanr

        spearman = float(spearmanr(a, b).statistic)
    return JudgeVsJudge(len(pairs), len(first) - len(pairs), float(np.mean(va == vb)), _kappa(va, vb), spearman)
