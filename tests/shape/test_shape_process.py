"""Process rewards: aggregation, Clip, Delta, min-form, gating, coupling, PAR, clipped-linear."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rewardlab.errors import ArrayError, NonFiniteError
from rewardlab.shape import aggregate_steps, clip_steps, delta_steps, gate_process, min_form, par
from rewardlab.shape.process import clipped_linear, couple

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@st.composite
def ragged_steps(draw):
    """(steps, step_mask) with a prefix mask per row; masked entries hold NaN on purpose."""
    b = draw(st.integers(1, 6))
    k = draw(st.integers(1, 8))
    values = draw(hnp.arrays(np.float64, (b, k), elements=finite))
    lengths = draw(hnp.arrays(np.int64, (b,), elements=st.integers(1, k)))
    mask = np.arange(k)[None, :] < lengths[:, None]
    return np.where(mask, values, np.nan), mask


STEPS = np.array([[0.9, 0.5, 0.7, np.nan], [0.2, 0.8, np.nan, np.nan]])
MASK = ~np.isnan(STEPS)


@pytest.mark.parametrize(
    ("how", "expected"),
    [("min", [0.5, 0.2]), ("product", [0.9 * 0.5 * 0.7, 0.16]), ("mean", [0.7, 0.5]), ("last", [0.7, 0.8]), ("sum", [2.1, 1.0])],
)
def test_aggregate_steps_table(how, expected):
    np.testing.assert_allclose(aggregate_steps(STEPS, MASK, how=how), expected)


def test_aggregate_row_without_steps_raises_unless_empty_value_given():
    steps = np.array([[0.5, 0.1], [np.nan, np.nan]])
    mask = ~np.isnan(steps)
    with pytest.raises(ArrayError, match="no valid step"):
        aggregate_steps(steps, mask, how="min")
    np.testing.assert_allclose(aggregate_steps(steps, mask, how="min", empty=-1.0), [0.1, -1.0])
    np.testing.assert_allclose(aggregate_steps(steps, mask, how="sum"), [0.6, 0.0])


def test_aggregate_unknown_method_raises():
    with pytest.raises(ArrayError, match="unknown aggregation"):
        aggregate_steps(STEPS, MASK, how="median")  # type: ignore[arg-type]


def test_non_prefix_step_mask_is_rejected():
    with pytest.raises(ArrayError, match="prefix"):
        aggregate_steps([[1.0, 2.0, 3.0]], [[True, False, True]])


def test_nan_in_a_valid_step_raises():
    with pytest.raises(NonFiniteError, match="steps"):
        min_form([[1.0, np.nan]])


@settings(max_examples=100, deadline=None)
@given(data=ragged_steps())
def test_delta_telescopes_to_the_step_reward(data):
    steps, mask = data
    delta = delta_steps(steps, mask)
    to_go = np.cumsum(delta[:, ::-1], axis=1)[:, ::-1]
    np.testing.assert_allclose(to_go[mask], steps[mask], atol=1e-9)
    assert np.all(delta[~mask] == 0.0)


@settings(max_examples=100, deadline=None)
@given(data=ragged_steps(), eta=st.floats(-5, 5))
def test_clip_bounds_every_step_and_the_trajectory_total_by_zero(data, eta):
    steps, mask = data
    clipped = clip_steps(steps, mask, eta=eta)
    assert np.all(clipped <= 0.0)
    # appending steps can only lower (never raise) the total
    totals = np.cumsum(clipped, axis=1)
    assert np.all(np.diff(totals, axis=1) <= 0.0)


@settings(max_examples=100, deadline=None)
@given(data=ragged_steps())
def test_min_form_is_the_minimum_of_future_steps(data):
    steps, mask = data
    values = min_form(steps, mask)
    for b in range(steps.shape[0]):
        n = int(mask[b].sum())
        for k in range(n):
            assert values[b, k] == steps[b, k:n].min()


@settings(max_examples=100, deadline=None)
@given(data=ragged_steps(), st_correct=st.data(), keep=st.booleans())
def test_gated_process_reward_never_rewards_wrong_answers(data, st_correct, keep):
    steps, mask = data
    correct = st_correct.draw(hnp.arrays(np.bool_, (steps.shape[0],)))
    gated = gate_process(steps, correct, mask, keep_penalties=keep)
    assert np.all(gated[~correct] <= 0.0)
    np.testing.assert_array_equal(gated[correct][mask[correct]], steps[correct][mask[correct]])
    if not keep:
        assert np.all(gated[~correct] == 0.0)


def test_couple_is_a_product_and_gates_with_binary_outcome():
    np.testing.assert_allclose(couple([1.0, 0.0, 0.5], [0.8, 0.9, 0.4]), [0.8, 0.0, 0.2])
    with pytest.raises(ArrayError):
        couple([1.0], [1.0, 2.0])


def test_par_is_sigmoid_centred_on_reference_and_bounded():
    out = par([0.0, 100.0, -100.0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(out, [0.5, 1.0, 0.0], atol=1e-12)
    multi = par([1.0], [[0.0, 2.0]])
    np.testing.assert_allclose(multi, [0.5 * (1 / (1 + np.exp(-1)) + 1 / (1 + np.exp(1)))])


def test_clipped_linear_maps_and_clips():
    np.testing.assert_allclose(clipped_linear([0, 50, 100, 200], lo=50, hi=150, out_lo=1, out_hi=0), [1, 1, 0.5, 0])
    with pytest.raises(ArrayError):
        clipped_linear([1.0], lo=1, hi=1)
