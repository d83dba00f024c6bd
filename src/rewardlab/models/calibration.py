"""Calibration: turn reward-model scores into probabilities that mean what they say.

* `TemperatureScaler` — one scalar T, σ(logit / T) (Guo et al. 2017, "On Calibration of Modern
  Neural Networks", Sec. 4.2); keeps the ranking, fixes over/under-confidence.
* `IsotonicCalibrator` — monotone non-parametric map (Zadrozny & Elkan 2002), scikit-learn's
  `IsotonicRegression`; needs more data, fixes any monotone distortion.
* `QuantileCalibrator` — quantiles of a PRM step's true success rate given its score
  (Koenker & Bassett 1978, scikit-learn's `QuantileRegressor`): an interval, not a point.
* `expected_calibration_error` (Naeini et al. 2015, equal-width bins) and `brier_score`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import ConfigError

__all__ = [
    "IsotonicCalibrator",
    "QuantileCalibrator",
    "TemperatureScaler",
    "brier_score",
    "calibration_report",
    "expected_calibration_error",
]

F64 = NDArray[np.float64]


def _check(probs: Any, labels: Any) -> tuple[F64, F64]:
    p = np.asarray(probs, dtype=np.float64).ravel()
    y = np.asarray(labels, dtype=np.float64).ravel()
    if p.shape != y.shape or p.size == 0:
        raise ConfigError(f"need equally long, non-empty probs and labels, got {p.shape} and {y.shape}")
    if not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
        raise ConfigError("probabilities must be finite and in [0, 1]")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ConfigError("labels must be 0 or 1")
    return p, y


def expected_calibration_error(probs: Any, labels: Any, *, n_bins: int = 10) -> float:
    """Σ_b (n_b / n)·|mean label_b − mean prob_b| over `n_bins` equal-width probability bins."""
    p, y = _check(probs, labels)
    bins = np.minimum((p * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        sel = bins == b
        if sel.any():
            total += sel.mean() * abs(y[sel].mean() - p[sel].mean())
    return float(total)


def brier_score(probs: Any, labels: Any) -> float:
    """Mean squared error of probabilities against 0/1 outcomes (Brier 1950)."""
    p, y = _check(probs, labels)
    return float(np.mean((p - y) ** 2))


def calibration_report(probs: Any, labels: Any, *, n_bins: int = 10) -> dict[str, float]:
    """ECE, Brier score and count, as reports print them."""
    p, y = _check(probs, labels)
    return {"ece": expected_calibration_error(p, y, n_bins=n_bins), "brier": brier_score(p, y), "n": float(p.size)}


def _sigmoid(x: F64) -> F64:
    return 1.0 / (1.0 + np.exp(-x))


class TemperatureScaler:
    """σ(score / T) with T fitted by minimising the negative log-likelihood on held-out data."""

    def __init__(self) -> None:
        self.temperature = 1.0

    def fit(self, scores: Any, labels: Any) -> TemperatureScaler:
        from scipy.optimize import minimize_scalar

        s = np.asarray(scores, dtype=np.float64).ravel()
        _, y = _check(np.full_like(s, 0.5), labels)

        def nll(log_t: float) -> float:
            z = s / np.exp(log_t)
            # log(1 + e^z) - y·z, the Bernoulli NLL of σ(z), computed stably
            return float(np.mean(np.logaddexp(0.0, z) - y * z))

        # Search log T in [-5, 5]: T from 0.007 to 148 covers every sane score scale.
        self.temperature = float(np.exp(minimize_scalar(nll, bounds=(-5.0, 5.0), method="bounded").x))
        return self

    def predict(self, scores: Any) -> F64:
        return _sigmoid(np.asarray(scores, dtype=np.float64) / self.temperature)


class IsotonicCalibrator:
    """A monotone step function from scores to probabilities (scikit-learn IsotonicRegression)."""

    def __init__(self) -> None:
        from sklearn.isotonic import IsotonicRegression

        self._iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")

    def fit(self, scores: Any, labels: Any) -> IsotonicCalibrator:
        s = np.asarray(scores, dtype=np.float64).ravel()
        _, y = _check(np.full_like(s, 0.5), labels)
        self._iso.fit(s, y)
        return self

    def predict(self, scores: Any) -> F64:
        return np.asarray(self._iso.predict(np.asarray(scores, dtype=np.float64).ravel()), dtype=np.float64)


class QuantileCalibrator:
    """Quantiles of a step's success rate given its PRM score, one linear quantile regression
    per level (on the score's logit, so the fit is linear where PRMs are roughly logistic)."""

    def __init__(self, quantiles: Sequence[float] = (0.1, 0.5, 0.9)):
        if not quantiles or any(not 0.0 < q < 1.0 for q in quantiles):
            raise ConfigError(f"quantile levels must be in (0, 1), got {list(quantiles)}")
        self.quantiles = tuple(sorted(quantiles))
        self._models: list[Any] = []

    @staticmethod
    def _features(probs: Any) -> F64:
        p = np.clip(np.asarray(probs, dtype=np.float64).ravel(), 1e-4, 1 - 1e-4)
        return np.log(p / (1 - p))[:, None]

    def fit(self, probs: Any, success_rates: Any) -> QuantileCalibrator:
        from sklearn.linear_model import QuantileRegressor

        x = self._features(probs)
        y = np.asarray(success_rates, dtype=np.float64).ravel()
        if y.shape[0] != x.shape[0]:
            raise ConfigError("probs and success_rates differ in length")
        self._models = [QuantileRegressor(quantile=q, alpha=0.0, solver="highs").fit(x, y) for q in self.quantiles]
        return self

    def predict(self, probs: Any) -> F64:
        """(N, Q) predicted quantiles, clipped to [0, 1] and sorted along Q (no crossing)."""
        if not self._models:
            raise ConfigError("call fit() before predict()")
        x = self._features(probs)
        out = np.stack([m.predict(x) for m in self._models], axis=1)
        return np.sort(np.clip(out, 0.0, 1.0), axis=1)
