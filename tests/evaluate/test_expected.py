"""The closed forms of `evaluate.expected` against listing every n-subset and running the selector."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.evaluate.expected import expected_best_of_n, expected_oracle
from rewardlab.evaluate.passk import pass_at_k
from rewardlab.select import best_of_n


def _listed(scores, correct, mask, n):
    idx = np.array(list(itertools.combinations(range(scores.shape[1]), n)))
    take = lambda x: np.take(x, idx, axis=1).reshape(-1, n)  # noqa: E731
    bon = best_of_n(take(scores), take(mask)).credit(take(correct)).reshape(len(scores), -1).mean(axis=1)
    oracle = np.where(take(mask), take(correct), 0.0).max(axis=1).reshape(len(scores), -1).mean(axis=1)
    return bon, oracle


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_closed_forms_equal_the_mean_over_every_listed_subset(data):
    width = data.draw(st.integers(1, 7))
    n = data.draw(st.integers(1, width))
    problems = data.draw(st.integers(1, 5))
    cell = st.one_of(st.sampled_from([0.0, 0.5, 1.0, -2.0]), st.just(float("nan")))  # few values: many ties
    scores = np.array(data.draw(st.lists(st.lists(cell, min_size=width, max_size=width), min_size=problems, max_size=problems)))
    correct = np.array(data.draw(st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=width, max_size=width), min_size=problems, max_size=problems)))
    mask = np.array(data.draw(st.lists(st.lists(st.booleans(), min_size=width, max_size=width), min_size=problems, max_size=problems)))
    bon, oracle = _listed(scores, correct, mask, n)
    np.testing.assert_allclose(expected_best_of_n(scores, correct, mask, n), bon, atol=1e-12)
    np.testing.assert_allclose(expected_oracle(correct, mask, n), oracle, atol=1e-12)


def test_oracle_is_chen_et_al_pass_at_k():
    correct = np.array([[1.0, 0, 0, 1, 0, 0, 0, 1]])
    for k in range(1, 9):
        assert expected_oracle(correct, np.ones_like(correct, dtype=bool), k)[0] == pytest.approx(pass_at_k(8, 3, k), abs=1e-15)


def test_a_tie_at_the_top_is_credited_its_mean_label():
    # best-of-2 of 3: {a,b} tie at 0.9 (mean label 0.5); {a,c} picks a (1); {b,c} picks b (0)
    s, y = np.array([[0.9, 0.9, 0.1]]), np.array([[1.0, 0.0, 1.0]])
    assert expected_best_of_n(s, y, np.ones((1, 3), bool), 2)[0] == (0.5 + 1 + 0) / 3


def test_draws_with_no_usable_candidate_abstain_and_count_as_wrong():
    s, y = np.array([[np.nan, 0.3, np.nan]]), np.array([[1.0, 1.0, 1.0]])
    # only draws holding slot 1 pick something: 2 of the 3 pairs
    assert expected_best_of_n(s, y, np.ones((1, 3), bool), 2)[0] == 2 / 3


def test_oracle_is_the_humaneval_papers_own_estimator():
    # Chen et al. 2021, Figure 3: the numerically stable estimator as printed in the paper
    def pass_at_k_paper(n, c, k):
        if n - c < k:
            return 1.0
        return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))

    rng = np.random.default_rng(7)
    correct = (rng.random((50, 20)) < 0.15).astype(float)
    for k in (1, 5, 10, 20):
        want = [pass_at_k_paper(20, int(c), k) for c in correct.sum(axis=1)]
        np.testing.assert_allclose(expected_oracle(correct, np.ones(correct.shape, bool), k), want, atol=1e-12)
