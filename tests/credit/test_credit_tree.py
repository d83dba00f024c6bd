"""Prefix-tree advantages: equal to GRPO without shared prefixes; telescoping with them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.credit import dr_grpo, grpo, tree_advantages
from rewardlab.credit.tree import tree_advantages_batch
from rewardlab.errors import ArrayError

rewards_st = st.floats(-10, 10, allow_nan=False)


@st.composite
def groups_without_shared_prefix(draw):
    n = draw(st.integers(1, 8))
    firsts = draw(st.lists(st.integers(0, 1000), min_size=n, max_size=n, unique=True))
    seqs = [[f, *draw(st.lists(st.integers(0, 3), max_size=6))] for f in firsts]
    rewards = draw(st.lists(rewards_st, min_size=n, max_size=n))
    return seqs, np.array(rewards)


@settings(max_examples=100, deadline=None)
@given(group=groups_without_shared_prefix(), scale=st.booleans())
def test_tree_advantages_equal_grpo_when_no_prefix_is_shared(group, scale):
    seqs, r = group
    out = tree_advantages(seqs, r, scale_std=scale)
    expected = (grpo(r[None, :]) if scale else dr_grpo(r[None, :]))[0]
    for i, adv in enumerate(out):
        assert adv.shape == (len(seqs[i]),)
        np.testing.assert_allclose(adv, expected[i], rtol=1e-9, atol=1e-9)


@st.composite
def groups_with_sharing(draw):
    n = draw(st.integers(2, 10))
    # a tiny vocabulary makes shared prefixes (and responses that are prefixes of others) common
    seqs = [draw(st.lists(st.integers(0, 2), min_size=1, max_size=5)) for _ in range(n)]
    rewards = draw(st.lists(rewards_st, min_size=n, max_size=n))
    return seqs, np.array(rewards)


def brute_force(seqs, r):
    """The definition, by brute force over prefixes (no trie)."""
    seqs = [tuple(x) for x in seqs]

    def value(prefix):
        return np.mean([r[j] for j, s in enumerate(seqs) if s[: len(prefix)] == prefix])

    def is_fork(prefix):
        nxt = {s[len(prefix)] if len(s) > len(prefix) else "END" for s in seqs if s[: len(prefix)] == prefix}
        return len(prefix) == 0 or len(nxt) > 1

    out = []
    for s in seqs:
        adv = []
        for t in range(len(s)):
            u = max(k for k in range(t + 1) if is_fork(s[:k]))
            adv.append(value(s[: t + 1]) - value(s[:u]))
        if s:
            same = [r[j] for j, q in enumerate(seqs) if q == s]
            adv[-1] += np.mean(same) - value(s)
        out.append(np.array(adv))
    return out


@settings(max_examples=150, deadline=None)
@given(group=groups_with_sharing())
def test_tree_advantages_match_the_brute_force_definition(group):
    seqs, r = group
    if r.max() == r.min():
        return
    for got, want in zip(tree_advantages(seqs, r), brute_force(seqs, r), strict=True):
        np.testing.assert_allclose(got, want, atol=1e-9)


@settings(max_examples=150, deadline=None)
@given(group=groups_with_sharing())
def test_tree_credits_at_fork_points_telescope_to_the_centred_reward(group):
    seqs, r = group
    if r.max() == r.min():
        return
    out = tree_advantages(seqs, r)
    for i, s in enumerate(seqs):
        if not s:
            continue
        # credit collected once per branch taken: the first token after each fork, plus stopping
        same = np.array([q == s for q in seqs])
        starts = [t for t in range(len(s)) if t == 0 or len({tuple(q[t:t + 1]) or ("END",) for q in seqs if q[:t] == s[:t]}) > 1]
        credits = [out[i][t] for t in starts]
        if (len(s) - 1) not in starts:  # the stop bonus sits on the last token
            credits.append(out[i][-1] - out[i][starts[-1]])
        assert sum(credits) == pytest.approx(r[same].mean() - r.mean(), abs=1e-9)


def test_tokens_of_a_prefix_shared_by_all_get_zero_credit():
    out = tree_advantages([[7, 7, 1], [7, 7, 2], [7, 7, 3]], [1.0, 0.0, 0.5])
    for adv in out:
        assert adv[0] == 0.0 and adv[1] == 0.0
    np.testing.assert_allclose([a[2] for a in out], [0.5, -0.5, 0.0])


def test_fork_credit_goes_to_the_branch_that_made_the_difference():
    # two responses share "A", then diverge; a third starts differently
    out = tree_advantages([["A", "x"], ["A", "y"], ["B"]], [1.0, 0.0, 0.0])
    mean = 1 / 3
    np.testing.assert_allclose(out[0], [0.5 - mean, 1.0 - 0.5])
    np.testing.assert_allclose(out[1], [0.5 - mean, 0.0 - 0.5])
    np.testing.assert_allclose(out[2], [0.0 - mean])


def test_batch_version_matches_per_group_and_respects_padding():
    ids = np.array([[[1, 2, 0], [1, 3, 3], [4, 0, 0]]])
    mask = np.array([[[1, 1, 0], [1, 1, 1], [1, 0, 0]]], dtype=bool)
    r = np.array([[1.0, 0.0, 0.5]])
    out = tree_advantages_batch(ids, mask, r)
    per = tree_advantages([[1, 2], [1, 3, 3], [4]], r[0])
    for s in range(3):
        np.testing.assert_allclose(out[0, s, : len(per[s])], per[s])
        assert np.all(out[0, s, len(per[s]) :] == 0.0)


def test_reward_count_must_match_responses():
    with pytest.raises(ArrayError, match="one reward per response"):
        tree_advantages([[1], [2]], [1.0])
