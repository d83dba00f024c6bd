"""The closed forms of `evaluate.expected` against listing every n-subset and running the selector."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.errors import ArrayError
from rewardlab.evaluate.expected import expected_best_of_n, expected_oracle
from rewardlab.evaluate.passk import pass_at_k
from rewardlab.select import best_of_n


def _listed(scores, correct, mask, n):
    """Every n-subset of each row's candidates (mask True), listed and run through the selector."""
    bon, oracle = [], []
    for s, y, m in zip(scores, correct, mask, strict=True):
        idx = np.array(list(itertools.combinations(np.flatnonzero(m), n)))
        bon.append(best_of_n(s[idx]).credit(y[idx]).mean())
        oracle.append((y[idx] == 1.0).any(axis=1).mean())
    return np.array(bon), np.array(oracle)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_closed_forms_equal_the_mean_over_every_listed_subset(data):
    width = data.draw(st.integers(1, 7))
    n = data.draw(st.integers(1, width))
    problems = data.draw(st.integers(1, 5))
    cell = st.one_of(st.sampled_from([0.0, 0.5, 1.0, -2.0]), st.just(float("nan")))  # few values: many ties
    scores = np.array(data.draw(st.lists(st.lists(cell, min_size=width, max_size=width), min_size=problems, max_size=problems)))
    correct = np.array(data.draw(st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=width, max_size=width), min_size=problems, max_size=problems)))
    # which candidates exist, anywhere in the row (ragged sets), at least n a row
    mask = np.array([data.draw(st.permutations([True] * data.draw(st.integers(n, width)) + [False] * width))[:width]
                     for _ in range(problems)])  # fmt: skip
    mask[mask.sum(axis=1) < n, :n] = True
    bon, oracle = _listed(scores, correct, mask, n)
    np.testing.assert_allclose(expected_best_of_n(scores, correct, mask, n), bon, atol=1e-12)
    np.testing.assert_allclose(expected_oracle(correct, mask, n), oracle, atol=1e-12)


def test_padding_is_never_drawn():
    # a problem with 2 candidates padded to 4 slots: its pairs are the one pair of its two
    # candidates, not 6 pairs of slots of which 5 hold padding
    scores = np.array([[0.3, 0.8, np.nan, np.nan]])
    correct = np.array([[1.0, 0.0, 0.0, 0.0]])
    mask = np.array([[True, True, False, False]])
    assert expected_oracle(correct, mask, 2).tolist() == [1.0]
    assert expected_oracle(correct, mask, 1).tolist() == [0.5]
    assert expected_best_of_n(scores, correct, mask, 2).tolist() == [0.0]  # 0.8 is picked, and wrong
    assert expected_best_of_n(scores, correct, mask, 1).tolist() == [0.5]


def test_a_row_with_fewer_candidates_than_drawn_is_refused():
    mask = np.array([[True, True, True], [True, False, False]])
    with pytest.raises(ArrayError, match="row 1 has 1 candidates, fewer than the 2 to draw"):
        expected_oracle(np.zeros((2, 3)), mask, 2)
    with pytest.raises(ArrayError, match="row 1"):
        expected_best_of_n(np.zeros((2, 3)), np.zeros((2, 3)), mask, 2)


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


def pass_at_k_paper(n, c, k):
    """Chen et al. 2021, Figure 3: the numerically stable estimator as printed in the paper."""
    if n - c < k:
        return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))


def test_oracle_is_the_humaneval_papers_own_estimator():
    rng = np.random.default_rng(7)
    correct = (rng.random((50, 20)) < 0.15).astype(float)
    for k in (1, 5, 10, 20):
        want = [pass_at_k_paper(20, int(c), k) for c in correct.sum(axis=1)]
        np.testing.assert_allclose(expected_oracle(correct, np.ones(correct.shape, bool), k), want, atol=1e-12)


def test_ragged_rows_are_the_humaneval_estimator_at_each_problems_own_n():
    # Chen et al. 2021's estimator takes each problem's own sample count n: a problem with 7
    # samples padded to 20 slots is pass@k with n = 7, not n = 20
    rng = np.random.default_rng(8)
    sizes = rng.integers(5, 21, size=60)
    mask = np.arange(20)[None, :] < sizes[:, None]
    correct = np.where(mask, rng.random((60, 20)) < 0.3, False).astype(float)
    for k in (1, 3, 5):
        want = [pass_at_k_paper(int(n), int(c), k) for n, c in zip(sizes, correct.sum(axis=1), strict=True)]
        np.testing.assert_allclose(expected_oracle(correct, mask, k), want, atol=1e-12)
