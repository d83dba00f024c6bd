"""Counts and first flags from one matrix product (`select._ties`) and best-of-n's tie sets:
checked against `sum` and `argmax` at every width (a short row, a full 52-column word, wider
rows); the row maxima by folds against `max`."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.select import _ties, best_of_n
from rewardlab.select.selectors import Selection, _row_max

pytestmark = pytest.mark.usefixtures("both_selector_paths")  # the kernel and numpy


@pytest.mark.parametrize("n", [1, 2, 10, 51, 52, 53, 110])  # a word holds 52 columns; wider rows count directly
def test_count_and_first_flagged_match_sum_and_argmax(n):
    rng = np.random.default_rng(n)
    flags = rng.random((500, n)) < rng.choice([0.02, 0.3], size=(500, 1))
    flags[:20] = False  # rows with nothing flagged
    flags[20:40, -1] = True  # the last column only: the lowest bit of the word
    flags[20:40, :-1] = False
    count, first = _ties.count_and_first(flags)
    np.testing.assert_array_equal(count, flags.sum(axis=1))
    np.testing.assert_array_equal(first, np.where(flags.any(axis=1), np.argmax(flags, axis=1), -1))
    again = _ties.count_and_first(flags, np.empty(flags.shape))  # a reused buffer gives the same
    np.testing.assert_array_equal(again[1], first)


def test_the_word_is_an_exact_integer_below_two_to_the_52():
    word = (_ties.basis_t(52) @ np.ones(52))[1]
    assert word == 2.0**52 - 1 and word < 2**53  # every integer below 2**53 is exact in float64


def test_wide_rows_do_not_build_a_basis_that_grows_with_n_squared():
    flags = np.zeros((3, 200_000), dtype=bool)
    flags[1, 123_456] = True
    count, first = _ties.count_and_first(flags)
    assert count.tolist() == [0, 1, 0] and first.tolist() == [-1, 123_456, -1]
    assert best_of_n(np.where(flags, 1.0, 0.0)).chosen.tolist() == [0, 123_456, 0]


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 10, 12, 16, 60])
def test_row_max_by_folds_matches_max(n):
    rng = np.random.default_rng(n)
    block = rng.normal(size=(300, n))
    block[rng.random(block.shape) < 0.05] = -np.inf
    np.testing.assert_array_equal(_row_max(block, np.empty(300)), block.max(axis=1))


def test_row_max_propagates_nan_from_any_column():
    block = np.zeros((10, 10))
    block[np.arange(10), np.arange(10)] = np.nan  # a NaN in every column position once
    assert np.isnan(_row_max(block, np.empty(10))).all()


def test_best_of_n_weight_is_built_on_demand_and_matches_the_ties():
    sel = best_of_n([[0.2, 0.7, 0.7, 0.1], [0.9, 0.1, 0.2, 0.3]])
    assert sel.shape == (2, 4)
    np.testing.assert_allclose(sel.weight, [[0, 0.5, 0.5, 0], [1, 0, 0, 0]])
    assert sel.weight is sel.weight  # built once


def test_best_of_n_credit_reads_only_the_labels_of_tied_candidates():
    scores = [[0.7, 0.7, 0.1], [0.9, 0.1, 0.2], [0.5, 0.5, 0.5]]
    correct = [[1.0, 0.0, np.nan], [0.0, np.nan, np.nan], [np.nan, 1.0, 1.0]]
    credit = best_of_n(scores).credit(correct)
    assert credit[0] == 0.5 and credit[1] == 0.0  # NaN labels of candidates never returned stay out
    assert np.isnan(credit[2])  # a tied candidate's unknown label makes the expectation unknown


def test_best_of_n_on_a_non_contiguous_view_equals_the_copy():
    rng = np.random.default_rng(3)
    wide = np.round(rng.random((5_000, 20)), 1)
    view = wide[:, ::2]  # every other column: strided rows
    correct = (rng.random(view.shape) < 0.4).astype(float)
    np.testing.assert_array_equal(best_of_n(view).chosen, best_of_n(view.copy()).chosen)
    np.testing.assert_allclose(best_of_n(view).credit(correct), best_of_n(view.copy()).credit(correct))
    np.testing.assert_allclose(best_of_n(view.T.T).weight, best_of_n(view.copy()).weight)


def test_selection_takes_exactly_one_form_of_weight():
    with pytest.raises(TypeError, match="exactly one"):
        Selection(np.zeros(1, dtype=np.int64))


def test_selection_repr_names_its_size():
    assert repr(best_of_n([[np.nan, np.nan], [0.1, 0.2]])) == "Selection(2 problems x 2 candidates, 1 abstained)"


@pytest.mark.parametrize("tied_share", [0.0, 0.02, 0.5])  # below and above the share where credit switches method
def test_best_of_n_credit_matches_a_hand_loop_with_few_or_many_ties(tied_share):
    rng = np.random.default_rng(7)
    scores = rng.random((400, 6))
    tied = rng.random(400) < tied_share
    scores[tied, 3] = scores[tied].max(axis=1)  # a second candidate at the top
    correct = (rng.random(scores.shape) < 0.5).astype(float)
    correct[rng.random(scores.shape) < 0.1] = np.nan
    want = []
    for s, y in zip(scores.tolist(), correct.tolist(), strict=True):
        top = [y[j] for j, v in enumerate(s) if v == max(s)]
        want.append(sum(top) / len(top))
    np.testing.assert_allclose(best_of_n(scores).credit(correct), want)
