"""Zero-variance groups: detection, counting, Drop / Mark / Rerank, Bradley-Terry anchors."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.credit import grpo
from rewardlab.errors import ArrayError
from rewardlab.shape import Drop, Mark, Rerank, bradley_terry_vs_anchors, rescue, zero_variance

R = np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.3, 0.3, np.nan]])
M = ~np.isnan(R)


def test_zero_variance_detects_all_equal_and_single_valid_groups():
    np.testing.assert_array_equal(zero_variance(R, M), [False, True, True, True])
    assert zero_variance([[0.5]])[0]


def test_zero_variance_atol_counts_near_constant_groups():
    r = np.array([[1.0, 1.0 + 1e-9], [0.0, 1.0]])
    np.testing.assert_array_equal(zero_variance(r), [False, False])
    np.testing.assert_array_equal(zero_variance(r, atol=1e-6), [True, False])


def test_mark_counts_without_changing_anything():
    out = rescue(R, M, Mark())
    assert out.count == 3 and out.strategy == "mark"
    np.testing.assert_array_equal(out.mask, M)


def test_drop_masks_out_flat_groups_entirely():
    out = rescue(R, M, Drop())
    np.testing.assert_array_equal(out.mask.any(axis=1), [True, False, False, False])
    assert out.count == 3


def test_rerank_orders_flat_groups_by_the_secondary_signal_only():
    judge = np.array([[9.0, 9.0, 9.0], [0.1, 0.9, 0.5], [3.0, 1.0, 2.0], [1.0, 2.0, 0.0]])
    out = rescue(R, M, Rerank(judge, width=0.2))
    np.testing.assert_array_equal(out.rewards[0], R[0])  # group with signal untouched
    assert np.argsort(out.rewards[1]).tolist() == np.argsort(judge[1]).tolist()
    assert np.argsort(out.rewards[2]).tolist() == np.argsort(judge[2]).tolist()
    assert np.all(np.abs(out.rewards[1:3] - R[1:3]) <= 0.1 + 1e-12)
    # the rescued group now gives a non-zero GRPO signal
    assert np.any(grpo(out.rewards, out.mask)[1] != 0)


def test_rerank_secondary_shape_must_match():
    with pytest.raises(ArrayError, match="secondary"):
        rescue(R, M, Rerank(np.zeros((2, 2))))


def test_bradley_terry_orders_by_win_rate_and_stays_finite_on_perfect_records():
    outcomes = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [0, 0, 0, 0]], dtype=float)
    theta = bradley_terry_vs_anchors(outcomes)
    assert theta[0] > theta[1] > theta[2]
    assert np.all(np.isfinite(theta))
    assert abs(theta[1]) < 1e-9  # 2 of 4 against equal anchors: strength 0 by symmetry


def test_bradley_terry_recovers_strengths_from_known_anchor_probabilities():
    anchors = np.array([-1.0, 0.0, 1.0, 2.0])
    true = np.array([0.5, -0.7])
    probs = 1 / (1 + np.exp(-(true[:, None] - anchors[None, :])))
    theta = bradley_terry_vs_anchors(probs, anchors, prior=1e-9)
    np.testing.assert_allclose(theta, true, atol=1e-6)


def test_bradley_terry_rejects_outcomes_outside_unit_interval():
    with pytest.raises(ArrayError, match=r"\[0, 1\]"):
        bradley_terry_vs_anchors([[2.0]])
