"""Group normalisation: z, mean-only, rank, min-max, HERO, GDPO-style; masks, edge cases, torch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rewardlab.errors import ArrayError, NonFiniteError, RewardLabError
from rewardlab.shape import center, hero, minmax, normalize_then_sum, rank, zscore

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


def grids(min_side: int = 1, max_groups: int = 6, max_samples: int = 8):
    shape = st.tuples(st.integers(min_side, max_groups), st.integers(1, max_samples))
    return shape.flatmap(lambda s: hnp.arrays(np.float64, s, elements=finite))


def test_zscore_matches_definition_with_unbiased_std():
    r = np.array([[1.0, 0.0, 1.0, 0.0, 1.0]])
    expected = (r - r.mean()) / (r.std(ddof=1) + 1e-6)
    np.testing.assert_allclose(zscore(r), expected)


@pytest.mark.parametrize("big", [1e300, 1e308, -1e308])
def test_zscore_of_rewards_near_the_float_limit_is_the_scaled_groups(big):
    # Squares (and sums) of such rewards overflow: the std was inf and every advantage 0, silently.
    r = np.array([[0.1, big, 0.175], [big, big / 2, -big]])
    x = r / abs(big)  # the same groups at a scale numpy computes without overflow
    expected = (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, ddof=1, keepdims=True)  # eps is nothing here
    np.testing.assert_allclose(zscore(r), expected, rtol=1e-12)


def test_zscore_population_std_with_ddof_zero():
    r = np.array([[3.0, 1.0, 2.0]])
    np.testing.assert_allclose(zscore(r, ddof=0, eps=0.0), (r - 2.0) / r.std())


@settings(max_examples=60, deadline=None)
@given(value=finite, n=st.integers(1, 32))
def test_zscore_all_equal_group_is_exactly_zero(value, n):
    # the float mean of n copies of 0.1 is not 0.1; the result must still be exactly 0
    out = zscore(np.full((1, n), value))
    assert np.all(out == 0.0)


def test_group_of_size_one_gives_zero_for_z_and_center_and_midpoint_for_rank_minmax():
    r = np.array([[0.7]])
    assert zscore(r)[0, 0] == 0.0
    assert center(r)[0, 0] == 0.0
    assert rank(r)[0, 0] == 0.5
    assert minmax(r)[0, 0] == 0.5


def test_masked_entries_are_left_out_of_statistics_and_return_zero():
    r = np.array([[1.0, 0.0, np.nan, 100.0]])
    mask = np.array([[True, True, False, False]])
    out = center(r, mask)
    np.testing.assert_allclose(out, [[0.5, -0.5, 0.0, 0.0]])


def test_nan_in_a_valid_entry_raises_a_typed_error_naming_the_argument():
    with pytest.raises(NonFiniteError) as info:
        zscore(np.array([[1.0, np.nan]]))
    assert info.value.argument == "rewards"
    assert "mask=False" in str(info.value)
    assert isinstance(info.value, RewardLabError)


def test_inf_in_a_valid_entry_raises():
    with pytest.raises(NonFiniteError):
        rank(np.array([[1.0, np.inf, 0.0]]))


def test_wrong_number_of_axes_raises_array_error():
    with pytest.raises(ArrayError, match="2 axes"):
        zscore(np.array([1.0, 2.0]))


def test_mask_of_wrong_shape_raises():
    with pytest.raises(ArrayError, match="mask"):
        zscore(np.ones((2, 3)), np.ones((3, 2), dtype=bool))


def test_rank_handles_ties_with_average_rank():
    out = rank(np.array([[1.0, 2.0, 2.0, 5.0]]))
    np.testing.assert_allclose(out, [[0.0, 0.5, 0.5, 1.0]])


@settings(max_examples=60, deadline=None)
@given(r=grids(min_side=1))
def test_rank_preserves_order_within_groups(r):
    out = rank(r)
    for g in range(r.shape[0]):
        i, j = np.meshgrid(range(r.shape[1]), range(r.shape[1]))
        strictly = r[g][i] < r[g][j]
        assert np.all(out[g][i][strictly] < out[g][j][strictly])
    assert np.all((out >= 0) & (out <= 1))


def test_minmax_maps_group_to_unit_interval():
    np.testing.assert_allclose(minmax(np.array([[2.0, 4.0, 3.0]])), [[0.0, 1.0, 0.5]])


@settings(max_examples=100, deadline=None)
@given(
    data=st.data(),
    g=st.integers(1, 5),
    s=st.integers(1, 10),
    alpha=st.floats(0.0, 0.49),
    beta=st.floats(0.0, 0.49),
)
def test_hero_ranks_every_correct_above_every_incorrect(data, g, s, alpha, beta):
    scores = data.draw(hnp.arrays(np.float64, (g, s), elements=finite))
    correct = data.draw(hnp.arrays(np.bool_, (g, s)))
    out = hero(correct, scores, alpha=alpha, beta=beta)
    for row in range(g):
        good, bad = out[row][correct[row]], out[row][~correct[row]]
        if good.size and bad.size:
            assert good.min() > bad.max()
        assert np.all(good >= 1 - beta - 1e-12) and np.all(good <= 1 + beta + 1e-12)
        assert np.all(bad >= -alpha - 1e-12) and np.all(bad <= alpha + 1e-12)


def test_hero_orders_within_a_stratum_by_model_score():
    out = hero([[1, 1, 0, 0]], [[0.2, 0.9, 0.5, 0.1]], alpha=0.1, beta=0.2)
    np.testing.assert_allclose(out, [[0.8, 1.2, 0.1, -0.1]])


def test_hero_rejects_overlapping_bands():
    with pytest.raises(ArrayError, match="alpha"):
        hero([[1, 0]], [[0.0, 1.0]], alpha=0.6, beta=0.5)


def test_normalize_then_sum_keeps_distinct_combinations_apart():
    # GDPO's example: (format, correct) = (1,0) vs (0,1) collapse when summed first.
    comps = np.array([[[1, 0], [0, 1], [1, 1], [0, 0]], [[1, 0], [1, 0], [0, 1], [0, 0]]], dtype=float)
    summed_first = zscore(comps.sum(axis=2))
    assert summed_first[0, 0] == summed_first[0, 1]  # the collapse GDPO describes
    decoupled = normalize_then_sum(comps, weights=[1.0, 2.0])
    assert decoupled[0, 0] != decoupled[0, 1]


def test_normalize_then_sum_constant_component_contributes_zero():
    comps = np.stack([np.array([[1.0, 0.0, 1.0]]), np.full((1, 3), 7.0)], axis=2)
    np.testing.assert_allclose(normalize_then_sum(comps), zscore(comps[:, :, 0]))


def test_normalize_then_sum_weight_count_must_match():
    with pytest.raises(ArrayError, match="weight"):
        normalize_then_sum(np.zeros((1, 2, 3)), weights=[1.0, 2.0])


def test_torch_in_torch_out_same_dtype_and_values():
    torch = pytest.importorskip("torch")
    r = torch.tensor([[1.0, 0.0, 1.0, 0.0]], dtype=torch.float32)
    out = zscore(r)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), zscore(r.numpy()), rtol=1e-6)


def test_torch_bfloat16_is_computed_in_float64_and_returned_as_bfloat16():
    torch = pytest.importorskip("torch")
    r = torch.tensor([[1.0, 0.0, 0.5]], dtype=torch.bfloat16)
    out = center(r)
    assert out.dtype == torch.bfloat16
    np.testing.assert_allclose(out.float().numpy(), [[0.5, -0.5, 0.0]], atol=1e-2)


@pytest.mark.parametrize("normalize", [zscore, center, rank, minmax])
def test_groups_of_no_samples_give_an_empty_result_not_a_numpy_error(normalize):
    # a batch cut to (groups, 0): numpy's max of nothing raised "zero-size array to reduction"
    assert normalize(np.zeros((3, 0))).shape == (3, 0)
