"""Step and segment credit: DeepSeekMath process advantages, SPO segments, GAE."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rewardlab.credit import gae, process_advantages, segment_advantages, steps_to_tokens
from rewardlab.errors import ArrayError


def test_process_advantages_match_the_deepseekmath_definition_by_loops():
    rng = np.random.default_rng(0)
    r = rng.random((3, 4, 5))
    lengths = rng.integers(1, 6, size=(3, 4))
    mask = np.arange(5)[None, None, :] < lengths[:, :, None]
    out = process_advantages(r, mask, eps=0.0)
    for g in range(3):
        pool = r[g][mask[g]]
        norm = (r[g] - pool.mean()) / pool.std(ddof=1)
        for s in range(4):
            n = lengths[g, s]
            for k in range(n):
                assert out[g, s, k] == pytest.approx(norm[s, k:n].sum())
            assert np.all(out[g, s, n:] == 0.0)


def test_process_advantages_constant_group_is_zero():
    r = np.full((1, 3, 2), 0.4)
    assert np.all(process_advantages(r) == 0.0)


def test_steps_to_tokens_assigns_each_token_its_step():
    values = np.array([[1.0, 2.0, 3.0], [5.0, 6.0, 0.0]])
    ends = np.array([[1, 3, 4], [0, 2, 0]])
    step_mask = np.array([[1, 1, 1], [1, 1, 0]], dtype=bool)
    tokens = np.ones((2, 6), dtype=bool)
    out = steps_to_tokens(values, ends, tokens, step_mask)
    np.testing.assert_allclose(out, [[1, 1, 2, 2, 3, 0], [5, 6, 6, 0, 0, 0]])


def test_steps_to_tokens_rejects_unsorted_ends():
    with pytest.raises(ArrayError, match="increasing"):
        steps_to_tokens([[1.0, 2.0]], [[3, 1]], np.ones((1, 4), dtype=bool))


@settings(max_examples=80, deadline=None)
@given(data=st.data(), b=st.integers(1, 5), k=st.integers(2, 7))
def test_segment_advantages_telescope_to_reward_minus_start_value(data, b, k):
    values = data.draw(hnp.arrays(np.float64, (b, k), elements=st.floats(-10, 10)))
    lengths = data.draw(hnp.arrays(np.int64, (b,), elements=st.integers(2, k)))
    valid = np.arange(k)[None, :] < lengths[:, None]
    adv = segment_advantages(values, valid)
    last = values[np.arange(b), lengths - 1]
    np.testing.assert_allclose(adv.sum(axis=1), last - values[:, 0], atol=1e-9)


def test_segment_needs_two_cut_points():
    with pytest.raises(ArrayError, match="2 cut points"):
        segment_advantages([[1.0]])


def gae_by_definition(r, v, gamma, lam):
    """Â_t = Σ_l (γλ)^l δ_{t+l}, straight from eq. 16, for one unmasked row."""
    t_len = len(r)
    v_next = np.append(v[1:], 0.0)
    delta = r + gamma * v_next - v
    return np.array([sum((gamma * lam) ** k * delta[t + k] for k in range(t_len - t)) for t in range(t_len)])


@settings(max_examples=50, deadline=None)
@given(data=st.data(), t=st.integers(1, 10), gamma=st.floats(0, 1), lam=st.floats(0, 1))
def test_gae_matches_the_definition(data, t, gamma, lam):
    r = data.draw(hnp.arrays(np.float64, (2, t), elements=st.floats(-5, 5)))
    v = data.draw(hnp.arrays(np.float64, (2, t), elements=st.floats(-5, 5)))
    adv, ret = gae(r, v, np.ones((2, t), dtype=bool), gamma=gamma, lam=lam)
    for row in range(2):
        np.testing.assert_allclose(adv[row], gae_by_definition(r[row], v[row], gamma, lam), atol=1e-9)
    np.testing.assert_allclose(ret, adv + v)


def test_gae_skips_masked_tokens_and_bootstraps_truncated_rows():
    r = np.array([[0.0, 9.0, 1.0]])
    v = np.array([[0.5, 9.0, 0.5]])
    mask = np.array([[True, False, True]])
    adv, _ = gae(r, v, mask, gamma=1.0, lam=1.0)
    ref, _ = gae(r[:, [0, 2]], v[:, [0, 2]], np.ones((1, 2), dtype=bool), gamma=1.0, lam=1.0)
    np.testing.assert_allclose(adv[:, [0, 2]], ref)
    assert adv[0, 1] == 0.0
    boot, _ = gae([[0.0]], [[0.0]], [[True]], gamma=0.5, lam=1.0, last_values=[2.0])
    assert boot[0, 0] == pytest.approx(1.0)


def gae_by_recursion(r, v, mask, gamma, lam):
    """The step-by-step backward recursion (verl's loop), masked tokens carried through."""
    out = np.zeros(r.shape)
    for b in range(r.shape[0]):
        next_value, running = 0.0, 0.0
        for t in range(r.shape[1] - 1, -1, -1):
            if mask[b, t]:
                running = r[b, t] + gamma * next_value - v[b, t] + gamma * lam * running
                next_value = v[b, t]
                out[b, t] = running
    return out


@pytest.mark.parametrize(("gamma", "lam"), [(1.0, 0.95), (0.1, 0.1), (1.0, 1e-150), (0.99, 0.0)])
def test_gae_long_sequences_are_chunked_without_underflow(gamma, lam):
    rng = np.random.default_rng(4)
    r, v = rng.normal(size=(3, 700)), rng.normal(size=(3, 700))
    mask = rng.random((3, 700)) < 0.8  # interleaved gaps, not a prefix
    adv, _ = gae(r, v, mask, gamma=gamma, lam=lam)
    np.testing.assert_allclose(adv, gae_by_recursion(r, v, mask, gamma, lam), rtol=1e-9, atol=1e-9)
