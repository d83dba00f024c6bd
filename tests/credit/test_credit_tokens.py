"""Token-level credit: broadcast, sum-preserving redistribution, length normalisation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rewardlab.credit import length_weights, redistribute, redistribute_deltas, to_tokens
from rewardlab.credit.tokens import aggregate_tokens
from rewardlab.errors import ArrayError, NonFiniteError


@st.composite
def token_batches(draw, allow_empty: bool = False):
    b = draw(st.integers(1, 6))
    t = draw(st.integers(1, 12))
    lengths = draw(hnp.arrays(np.int64, (b,), elements=st.integers(0 if allow_empty else 1, t)))
    mask = np.arange(t)[None, :] < lengths[:, None]
    rewards = draw(hnp.arrays(np.float64, (b,), elements=st.floats(-50, 50)))
    return rewards, mask


@settings(max_examples=150, deadline=None)
@given(batch=token_batches(), data=st.data())
def test_redistribution_preserves_each_sequence_sum(batch, data):
    rewards, mask = batch
    weights = data.draw(hnp.arrays(np.float64, mask.shape, elements=st.floats(0, 1e3)))
    out = redistribute(rewards, weights, mask)
    np.testing.assert_allclose(out.sum(axis=1), rewards, rtol=1e-9, atol=1e-9)
    assert np.all(out[~mask] == 0.0)


@settings(max_examples=150, deadline=None)
@given(batch=token_batches(), data=st.data())
def test_delta_redistribution_preserves_each_sequence_sum(batch, data):
    rewards, mask = batch
    deltas = data.draw(hnp.arrays(np.float64, mask.shape, elements=st.floats(-1e3, 1e3)))
    out = redistribute_deltas(rewards, deltas, mask)
    np.testing.assert_allclose(out.sum(axis=1), rewards, rtol=1e-9, atol=1e-7)


def test_redistribute_follows_the_weights():
    out = redistribute([2.0], [[1.0, 3.0, 0.0, 7.0]], [[True, True, True, False]])
    np.testing.assert_allclose(out, [[0.5, 1.5, 0.0, 0.0]])


def test_redistribute_all_zero_weights_falls_back_to_uniform():
    np.testing.assert_allclose(redistribute([3.0], [[0.0, 0.0, 0.0]], [[1, 1, 1]]), [[1.0, 1.0, 1.0]])


def test_redistribute_rejects_negative_weights_and_points_to_deltas():
    with pytest.raises(ArrayError, match="redistribute_deltas"):
        redistribute([1.0], [[0.5, -0.5]], [[1, 1]])


def test_empty_row_with_nonzero_reward_raises_because_it_would_be_lost():
    with pytest.raises(ArrayError, match="would be lost"):
        redistribute([1.0, 2.0], [[1.0, 1.0], [1.0, 1.0]], [[1, 1], [0, 0]])
    # a zero reward on an empty row loses nothing
    out = redistribute([1.0, 0.0], [[1.0, 1.0], [1.0, 1.0]], [[1, 1], [0, 0]])
    np.testing.assert_allclose(out, [[0.5, 0.5], [0.0, 0.0]])


def test_nan_weight_on_a_valid_token_raises_but_masked_nan_is_fine():
    with pytest.raises(NonFiniteError, match="weights"):
        redistribute([1.0], [[np.nan, 1.0]], [[1, 1]])
    np.testing.assert_allclose(redistribute([1.0], [[np.nan, 1.0]], [[0, 1]]), [[0.0, 1.0]])


def test_to_tokens_broadcasts_grouped_advantages_row_major():
    adv = np.array([[1.0, -1.0], [0.5, -0.5]])
    mask = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1]], dtype=bool)
    np.testing.assert_allclose(to_tokens(adv, mask), [[1, 1, 0], [-1, 0, 0], [0, 0, 0], [-0.5, -0.5, -0.5]])


def test_to_tokens_row_count_must_match():
    with pytest.raises(ArrayError, match="rows"):
        to_tokens([1.0, 2.0], np.ones((3, 2), dtype=bool))


def test_length_weights_modes():
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], dtype=bool)
    per = length_weights(mask, "per_response")
    np.testing.assert_allclose(per, [[0.25, 0.25, 0, 0], [0.125] * 4])
    mean = length_weights(mask, "mean_length")
    np.testing.assert_allclose(mean, mask / 6.0)
    const = length_weights(mask, "constant", max_tokens=8)
    np.testing.assert_allclose(const, mask / 16.0)


def test_per_response_normalisation_favours_short_answers_and_mean_length_does_not():
    # one short and one long response with the same advantage: per-token weight differs 2x
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], dtype=bool)
    per = length_weights(mask, "per_response")
    assert per[0, 0] == 2 * per[1, 0]
    mean = length_weights(mask, "mean_length")
    assert mean[0, 0] == mean[1, 0]


@settings(max_examples=60, deadline=None)
@given(batch=token_batches(allow_empty=True))
def test_length_weights_never_nan_and_sum_to_at_most_one(batch):
    _, mask = batch
    for mode in ("per_response", "mean_length", "constant"):
        w = length_weights(mask, mode)
        assert np.all(np.isfinite(w)) and np.all(w[~mask] == 0)
        assert w.sum() <= 1.0 + 1e-12


def test_aggregate_tokens_is_the_weighted_sum():
    mask = np.array([[1, 1, 0], [1, 1, 1]], dtype=bool)
    values = np.array([[1.0, 3.0, np.nan], [3.0, 3.0, 3.0]])
    assert aggregate_tokens(values, mask, "per_response") == pytest.approx((2.0 + 3.0) / 2)
    assert aggregate_tokens(values, mask, "mean_length") == pytest.approx(13.0 / 5)


def test_torch_token_mask_and_advantages_round_trip():
    torch = pytest.importorskip("torch")
    adv = torch.tensor([1.0, -1.0], dtype=torch.float32)
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    out = to_tokens(adv, mask)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    assert out.tolist() == [[1.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]
