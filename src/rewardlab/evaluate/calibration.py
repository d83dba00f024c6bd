"""Calibration of a reward read as a probability of being correct.

With confidences p_i in [0, 1] and outcomes y_i in {0, 1}, split [0, 1] into `n_bins` equal-width
bins B_1..B_M (a confidence of exactly 1 falls in the last bin):

- ECE = Σ_m |B_m|/n · |acc(B_m) − conf(B_m)|  (Guo et al. 2017, eq. 3; Naeini et al. 2015)
- MCE = max_m |acc(B_m) − conf(B_m)| over non-empty bins
- Brier = mean((p_i − y_i)²)  (Brier 1950)

A reliability diagram plots acc(B_m) against conf(B_m); `reliability` returns its points.
Scores outside [0, 1] (e.g. a Bradley-Terry logit) must be mapped first: `sigmoid` is offered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rewardlab.errors import InputError
from rewardlab.evaluate._checks import Numbers, as_1d, as_binary, non_empty, same_length

__all__ = ["Reliability", "brier_score", "ece", "mce", "reliability", "sigmoid"]


def sigmoid(scores: Numbers) -> np.ndarray:
    """Logistic map of unbounded scores (reward-model logits) into (0, 1)."""
    x = as_1d(scores, "scores", where="sigmoid")
    return np.asarray(1.0 / (1.0 + np.exp(-x)), dtype=float)


@dataclass(frozen=True)
class Reliability:
    """Reliability-diagram points; one entry per bin (empty bins have count 0 and NaN means)."""

    edges: np.ndarray  # (n_bins + 1,)
    confidence: np.ndarray  # (n_bins,) mean predicted probability in the bin
    accuracy: np.ndarray  # (n_bins,) observed rate of y = 1 in the bin
    count: np.ndarray  # (n_bins,)

    def to_dict(self) -> dict[str, list[float | None]]:
        def clean(a: np.ndarray) -> list[float | None]:
            return [None if np.isnan(v) else float(v) for v in a]

        return {"edges": self.edges.tolist(), "confidence": clean(self.confidence),
                "accuracy": clean(self.accuracy), "count": self.count.astype(int).tolist()}


def _inputs(probs: Numbers, labels: Numbers, where: str) -> tuple[np.ndarray, np.ndarray]:
    p = as_1d(probs, "probs", where=where)
    y = as_binary(labels, "labels", where=where)
    non_empty(same_length(where, probs=p, labels=y), where)
    if np.any((p < 0) | (p > 1)):
        bad = int(np.flatnonzero((p < 0) | (p > 1))[0])
        raise InputError(f"probs[{bad}] = {p[bad]} is outside [0, 1]; map scores with sigmoid() first", source=where)
    return p, y


def reliability(probs: Numbers, labels: Numbers, *, n_bins: int = 10) -> Reliability:
    """Equal-width binning of confidences with the observed accuracy per bin."""
    p, y = _inputs(probs, labels, "reliability")
    if n_bins < 1:
        raise InputError(f"n_bins must be >= 1, got {n_bins}", source="reliability")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    # Bins are [e_m, e_{m+1}) except the last, which is closed so that p = 1 is counted.
    index = np.clip(np.digitize(p, edges[1:-1], right=False), 0, n_bins - 1)
    count = np.bincount(index, minlength=n_bins).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.bincount(index, weights=p, minlength=n_bins) / count
        acc = np.bincount(index, weights=y.astype(float), minlength=n_bins) / count
    return Reliability(edges, conf, acc, count)


def ece(probs: Numbers, labels: Numbers, *, n_bins: int = 10) -> float:
    """Expected calibration error (count-weighted mean |accuracy − confidence| over bins).

    Examples:
        >>> round(ece([0.9, 0.9, 0.1, 0.1], [1, 0, 0, 0], n_bins=10), 4)
        0.25
    """
    r = reliability(probs, labels, n_bins=n_bins)
    filled = r.count > 0
    gaps = np.abs(r.accuracy[filled] - r.confidence[filled])
    return float(np.sum(r.count[filled] * gaps) / np.sum(r.count))


def mce(probs: Numbers, labels: Numbers, *, n_bins: int = 10) -> float:
    """Maximum calibration error (largest |accuracy − confidence| over non-empty bins)."""
    r = reliability(probs, labels, n_bins=n_bins)
    filled = r.count > 0
    return float(np.max(np.abs(r.accuracy[filled] - r.confidence[filled])))


def brier_score(probs: Numbers, labels: Numbers) -> float:
    """Mean squared difference between probability and 0/1 outcome (lower is better)."""
    p, y = _inputs(probs, labels, "brier_score")
    return float(np.mean((p - y) ** 2))
