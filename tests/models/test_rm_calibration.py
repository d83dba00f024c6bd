"""Calibration: temperature and isotonic maps lower ECE and Brier on held-out data; quantiles cover."""

import numpy as np
import pytest

from rewardlab.models.calibration import (
    IsotonicCalibrator,
    QuantileCalibrator,
    TemperatureScaler,
    brier_score,
    calibration_report,
    expected_calibration_error,
)


def _overconfident(n: int, seed: int):
    """Scores whose true probability is σ(score / 4): σ(score) is badly overconfident."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(0, 6, n)
    labels = (rng.random(n) < 1 / (1 + np.exp(-scores / 4))).astype(float)
    return scores, labels


def test_ece_and_brier_on_hand_made_numbers():
    assert expected_calibration_error([0.9, 0.9], [1, 0], n_bins=10) == pytest.approx(0.4)
    assert brier_score([1.0, 0.0], [1, 0]) == 0.0
    assert calibration_report([0.5], [1])["brier"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="labels must be 0 or 1"):
        brier_score([0.5], [2])


def test_temperature_scaling_finds_the_true_temperature_and_lowers_ece():
    scores, labels = _overconfident(4000, 0)
    test_s, test_y = _overconfident(4000, 1)
    scaler = TemperatureScaler().fit(scores, labels)
    assert scaler.temperature == pytest.approx(4.0, rel=0.15)
    raw = 1 / (1 + np.exp(-test_s))
    assert expected_calibration_error(scaler.predict(test_s), test_y) < expected_calibration_error(raw, test_y) / 2
    assert brier_score(scaler.predict(test_s), test_y) < brier_score(raw, test_y)


def test_isotonic_lowers_ece_and_is_monotone():
    scores, labels = _overconfident(4000, 0)
    test_s, test_y = _overconfident(4000, 1)
    iso = IsotonicCalibrator().fit(scores, labels)
    raw = 1 / (1 + np.exp(-test_s))
    assert expected_calibration_error(iso.predict(test_s), test_y) < expected_calibration_error(raw, test_y) / 2
    grid = np.linspace(-20, 20, 50)
    assert (np.diff(iso.predict(grid)) >= 0).all()


def test_quantile_calibrator_intervals_cover_the_success_rate():
    rng = np.random.default_rng(0)
    probs = rng.uniform(0.05, 0.95, 2000)
    rates = np.clip(probs + rng.normal(0, 0.1, probs.size), 0, 1)  # true success rates around the PRM score
    cal = QuantileCalibrator((0.1, 0.9)).fit(probs[:1000], rates[:1000])
    q = cal.predict(probs[1000:])
    inside = ((rates[1000:] >= q[:, 0]) & (rates[1000:] <= q[:, 1])).mean()
    assert 0.7 < inside < 0.9


def test_quantile_calibrator_needs_fit_and_valid_levels():
    with pytest.raises(ValueError, match="quantile levels"):
        QuantileCalibrator((0.0, 0.5))
    with pytest.raises(ValueError, match="fit"):
        QuantileCalibrator().predict([0.5])
