"""Outcome estimators: definitions and edge cases.

The comparisons with the trainers' own code (verl, TRL, OpenRLHF) are in test_credit_peers_*.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rewardlab.core import ErrorKind, RewardResult
from rewardlab.credit import a_hpo, dr_grpo, from_results, gdpo, grpo, hpo, reinforce_pp, rloo
from rewardlab.errors import ArrayError, NonFiniteError

finite = st.floats(-100, 100, allow_nan=False, allow_infinity=False)


@st.composite
def batches_with_flat_groups(draw):
    """A reward grid where some rows are forced constant (all-correct / all-wrong groups)."""
    g = draw(st.integers(1, 8))
    s = draw(st.integers(1, 16))
    r = draw(hnp.arrays(np.float64, (g, s), elements=finite))
    flat = draw(hnp.arrays(np.bool_, (g,)))
    fill = draw(hnp.arrays(np.float64, (g,), elements=finite))
    return np.where(flat[:, None], fill[:, None], r), flat


@settings(max_examples=100, deadline=None)
@given(data=batches_with_flat_groups())
def test_zero_variance_groups_give_exactly_zero_advantage(data):
    r, flat = data
    for fn in (grpo, dr_grpo, rloo, reinforce_pp):
        out = fn(r)
        assert np.all(out[flat] == 0.0), fn.__name__
    assert np.all(grpo(r, scale="batch")[flat] == 0.0)
    two_components = np.stack([r, r * 0.5 + 1.0], axis=2)  # both constant on the flat rows
    assert np.all(gdpo(two_components)[flat] == 0.0)


def test_zero_variance_exactly_zero_even_in_float32_torch():
    torch = pytest.importorskip("torch")
    r = torch.full((3, 16), 0.1, dtype=torch.float32)
    out = grpo(r, eps=1e-12)
    assert out.dtype == torch.float32 and torch.count_nonzero(out) == 0


def test_all_equal_float32_group_gets_no_spurious_signal_unlike_naive_float32():
    torch = pytest.importorskip("torch")
    r = torch.full((1, 16), 0.7, dtype=torch.float32)
    # the naive float32 formula: the mean of 16 copies of 0.7 is off by one ulp, the std is
    # that rounding noise, and dividing noise by noise gives O(1) advantages to a no-signal group
    naive = (r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, keepdim=True) + 1e-8)
    assert naive.abs().max().item() > 0.5
    assert torch.count_nonzero(grpo(r, eps=1e-8)) == 0


@settings(max_examples=100, deadline=None)
@given(r=st.integers(1, 6).flatmap(lambda g: hnp.arrays(np.float64, (g, 5), elements=finite)))
def test_rloo_is_reward_minus_mean_of_the_others(r):
    out = rloo(r)
    for g in range(r.shape[0]):
        if r[g].max() == r[g].min():
            continue
        for i in range(r.shape[1]):
            others = np.delete(r[g], i)
            assert out[g, i] == pytest.approx(r[g, i] - others.mean(), abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(r=st.integers(1, 6).flatmap(lambda g: hnp.arrays(np.float64, (g, 7), elements=finite)))
def test_baselined_advantages_sum_to_zero_per_group(r):
    np.testing.assert_allclose(dr_grpo(r).sum(axis=1), 0.0, atol=1e-9)
    np.testing.assert_allclose(rloo(r).sum(axis=1), 0.0, atol=1e-9)


def test_masked_entries_do_not_move_the_baseline():
    r = np.array([[1.0, 0.0, 0.5, 99.0]])
    mask = np.array([[True, True, True, False]])
    np.testing.assert_allclose(grpo(r, mask)[:, :3], grpo(r[:, :3]))
    assert grpo(r, mask)[0, 3] == 0.0
    np.testing.assert_allclose(rloo(r, mask)[:, :3], rloo(r[:, :3]))


def test_nan_allowed_only_where_masked():
    r = np.array([[1.0, np.nan]])
    with pytest.raises(NonFiniteError):
        grpo(r)
    assert np.all(grpo(r, [[True, False]]) == 0.0)  # one valid entry: no baseline, zero


def test_reinforce_pp_is_globally_normalised():
    r = np.random.default_rng(3).random((8, 4))
    mask = np.ones_like(r, dtype=bool)
    mask[0, 0] = False
    out = reinforce_pp(r, mask, baseline="none", eps=0.0)
    assert out[mask].mean() == pytest.approx(0.0, abs=1e-12)
    assert out[mask].std(ddof=1) == pytest.approx(1.0)
    base = reinforce_pp(r, mask, eps=0.0)
    centred = r - np.array([r[g][mask[g]].mean() for g in range(8)])[:, None]
    expected = (centred - centred[mask].mean()) / centred[mask].std(ddof=1)
    np.testing.assert_allclose(base[mask], expected[mask])


def test_all_masked_batch_gives_zeros_not_nan():
    r = np.full((2, 3), np.nan)
    m = np.zeros((2, 3), dtype=bool)
    for out in (grpo(r, m), rloo(r, m), reinforce_pp(r, m), gdpo(np.zeros((2, 3, 2)), mask=m)):
        assert np.all(out == 0.0)


def test_gdpo_is_batch_normalised_and_distinguishes_combinations():
    comps = np.array([[[1, 0], [0, 1], [1, 1], [0, 0]]], dtype=float)
    out = gdpo(comps, weights=[1.0, 1.0], eps=0.0)
    assert out.mean() == pytest.approx(0.0, abs=1e-12)
    assert out.std(ddof=1) == pytest.approx(1.0)
    summed_then_grpo = grpo(comps.sum(axis=2))
    assert summed_then_grpo[0, 0] == summed_then_grpo[0, 1]
    assert out[0, 3] < out[0, 0] < out[0, 2]


def test_hpo_scales_only_negative_advantages():
    np.testing.assert_allclose(hpo([[1.0, -2.0, 0.0]], beta=0.25), [[1.0, -0.5, 0.0]])
    with pytest.raises(ArrayError, match="beta"):
        hpo([1.0], beta=1.5)


def test_a_hpo_beta_from_sign_counts():
    adv = np.array([[1.0, -1.0, -1.0, -1.0], [-1.0, -1.0, 2.0, 0.0]])
    weighted, beta = a_hpo(adv)
    assert beta == pytest.approx(2 / 5)
    np.testing.assert_allclose(weighted, np.where(adv < 0, 0.4 * adv, adv))
    assert a_hpo(np.array([1.0, 2.0]))[1] == 1.0
    assert a_hpo(np.array([1.0, -1.0]))[1] == 1.0


def test_unknown_scale_is_rejected():
    with pytest.raises(ArrayError, match="scale"):
        grpo([[1.0, 0.0]], scale="token")  # type: ignore[arg-type]


def test_from_results_keeps_errors_out_and_counts_them():
    results = [
        RewardResult.ok(1.0),
        RewardResult.failure(ErrorKind.TIMEOUT, "slow"),
        RewardResult.ok(0.0),
        RewardResult.skip("gate"),
    ]
    scores, mask, counts = from_results(results, group_size=2)
    np.testing.assert_array_equal(mask, [[True, False], [True, False]])
    assert counts == {"ok": 2, "error": 1, "skipped": 1}
    assert np.all(grpo(scores, mask) == 0.0)  # one valid response per group: no baseline
    with pytest.raises(ArrayError):
        from_results(results, group_size=3)


def test_torch_in_torch_out():
    torch = pytest.importorskip("torch")
    r = torch.tensor([[1.0, 0.0, 0.0, 1.0]], dtype=torch.float64)
    for fn in (grpo, dr_grpo, rloo, reinforce_pp):
        out = fn(r)
        assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
        np.testing.assert_allclose(out.numpy(), fn(r.numpy()))


def test_token_weighted_batch_statistics_equal_per_response_ones_when_lengths_are_equal():
    # ddof=0: with ddof=1 the correction is taken off the token count, not the response count
    r = np.random.default_rng(7).random((3, 4))
    same = {"token_mask": np.ones((12, 5), dtype=bool), "ddof": 0}
    np.testing.assert_allclose(reinforce_pp(r, baseline="none", **same), reinforce_pp(r, baseline="none", ddof=0), rtol=1e-12)
    np.testing.assert_allclose(reinforce_pp(r, **same), reinforce_pp(r, ddof=0), rtol=1e-9, atol=1e-12)
    comps = np.stack([r, r**2], axis=2)
    np.testing.assert_allclose(gdpo(comps, **same), gdpo(comps, ddof=0), rtol=1e-9, atol=1e-12)


def test_token_weighted_reinforce_pp_weighs_a_response_by_its_length():
    r = np.array([[1.0, 0.0]])
    tokens = np.array([[1, 1, 1], [1, 0, 0]], dtype=bool)  # the correct answer is 3 tokens long
    out = reinforce_pp(r, baseline="none", token_mask=tokens, eps=0.0, ddof=0)
    per_token = np.array([1.0, 1.0, 1.0, 0.0])
    expected = (np.array([1.0, 0.0]) - per_token.mean()) / per_token.std()
    np.testing.assert_allclose(out[0], expected)


def test_token_mask_with_the_wrong_number_of_rows_is_rejected():
    with pytest.raises(ArrayError, match="token_mask"):
        reinforce_pp(np.zeros((2, 3)), token_mask=np.ones((5, 4), dtype=bool))


def test_pack_tokens_follows_the_grouped_rows():
    from rewardlab.credit import pack

    groups = pack([1.0, 2.0, 3.0], ["b", "a", "b"])
    tokens = np.array([[1, 0], [1, 1], [0, 1]], dtype=bool)
    np.testing.assert_array_equal(groups.pack_tokens(tokens), [[1, 0], [0, 1], [1, 1], [0, 0]])


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_token_weighted_reinforce_pp_is_whitening_of_the_token_level_advantages(data):
    g, s = data.draw(st.integers(1, 4)), data.draw(st.integers(2, 5))
    r = data.draw(hnp.arrays(np.float64, (g, s), elements=st.floats(0, 1)))
    mask = data.draw(hnp.arrays(np.bool_, (g, s)))
    lengths = data.draw(hnp.arrays(np.int64, (g * s,), elements=st.integers(1, 6)))
    tokens = np.arange(6)[None, :] < lengths[:, None]
    out = reinforce_pp(r, mask, baseline="none", token_mask=tokens, eps=0.0, ddof=0)
    per_token = np.repeat(r.reshape(-1)[mask.reshape(-1)], lengths[mask.reshape(-1)])  # A_{q,o_t}
    if per_token.size == 0 or per_token.std() < 1e-6:
        return
    expected = (r - per_token.mean()) / per_token.std()
    np.testing.assert_allclose(out[mask], expected[mask], rtol=1e-9, atol=1e-9)
    assert np.all(out[~mask] == 0.0)


@pytest.mark.parametrize("estimator", [grpo, dr_grpo, rloo, reinforce_pp])
def test_groups_of_no_samples_give_no_advantages_not_a_numpy_error(estimator):
    assert estimator(np.zeros((2, 0))).shape == (2, 0)
