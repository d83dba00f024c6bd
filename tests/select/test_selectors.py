"""Selectors: tables of small cases, agreement with the per-problem loops of `evaluate.passk`,
and one test per attack (NaN scores, abstentions, negative weights, bad shapes)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardlab.errors import ArrayError
from rewardlab.evaluate.passk import best_of_n as loop_best_of_n
from rewardlab.evaluate.passk import vote_accuracy
from rewardlab.select import (
    answer_classes,
    best_of_n,
    filtered_vote,
    hybrid_vote,
    majority_vote,
    to_weights,
    weighted_vote,
)


@pytest.mark.parametrize(
    ("scores", "chosen", "weight"),
    [
        ([[0.1, 0.9, 0.3]], [1], [[0, 1, 0]]),
        ([[0.5, 0.5, 0.1]], [0], [[0.5, 0.5, 0]]),
        ([[np.nan, 0.2, np.nan]], [1], [[0, 1, 0]]),
        ([[-3.0, -1.0]], [1], [[0, 1]]),
    ],
)
def test_best_of_n_table(scores, chosen, weight):
    sel = best_of_n(scores)
    assert sel.chosen.tolist() == chosen
    np.testing.assert_allclose(sel.weight, weight)


def test_majority_vote_counts_classes_and_credits_ties_by_their_mean():
    classes = [[0, 1, 1, 0, 2]]
    correct = [[1, 0, 0, 1, 0]]
    sel = majority_vote(classes)
    assert sel.chosen.tolist() == [0]  # classes 0 and 1 tie at 2; class 0 was seen first
    assert sel.accuracy(correct) == pytest.approx(0.5)
    assert sel.accuracy(correct, ties="first") == 1.0


def test_weighted_vote_lets_confident_minority_win():
    classes = [[0, 0, 0, 1]]
    sel = weighted_vote(classes, [[0.1, 0.1, 0.1, 0.9]])
    assert sel.chosen.tolist() == [3]


def test_hybrid_top1_breaks_a_vote_tie_with_the_reward():
    classes = [[0, 0, 1, 1, 2]]
    sel = hybrid_vote(classes, [[0.1, 0.2, 0.3, 0.9, 5.0]], top_k=1)
    assert sel.chosen.tolist() == [3]  # candidate 4 scores highest but its class has one vote


def test_hybrid_top2_keeps_the_second_class():
    sel = hybrid_vote([[0, 0, 0, 1, 1, 2]], [[0.1, 0.1, 0.1, 0.2, 0.8, 9.0]], top_k=2)
    assert sel.chosen.tolist() == [4]


def test_filtered_vote_ignores_low_confidence_majority():
    classes = [[0, 0, 0, 1, 1]]
    confidence = [[0.1, 0.2, 0.1, 0.9, 0.8]]
    assert majority_vote(classes).chosen.tolist() == [0]
    assert filtered_vote(classes, confidence, keep=0.4).chosen.tolist() == [3]
    assert filtered_vote(classes, confidence, keep=None, min_score=0.5).chosen.tolist() == [3]


def test_filtered_vote_keeps_candidates_tied_at_the_cut():
    sel = filtered_vote([[0, 1, 1]], [[0.9, 0.5, 0.5]], keep=0.5)  # 2 of 3 kept; both 0.5 tie
    assert sel.chosen.tolist() == [1]


def test_nan_scores_are_never_picked():
    sel = best_of_n([[np.nan, -100.0, np.nan]])
    assert sel.chosen.tolist() == [1]


def test_problem_without_any_score_abstains_and_counts_wrong():
    sel = best_of_n([[np.nan, np.nan], [0.1, 0.2]])
    assert sel.chosen.tolist() == [-1, 1]
    assert sel.abstained == 1
    assert sel.credit([[1, 1], [0, 1]]).tolist() == [0.0, 1.0]


def test_vote_with_no_answers_abstains():
    sel = majority_vote([[-1, -1], [0, 0]])
    assert sel.chosen.tolist() == [-1, 0]
    assert sel.weight[0].sum() == 0


def test_padding_mask_excludes_candidates():
    sel = majority_vote([[0, 1, 1]], mask=[[True, True, False]])
    assert sel.chosen.tolist() == [0]


def test_negative_weights_are_refused():
    with pytest.raises(ArrayError, match="sigmoid"):
        weighted_vote([[0, 1]], [[-1.0, 2.0]])


def test_positive_infinite_score_is_refused():
    with pytest.raises(ArrayError, match="inf"):
        best_of_n([[np.inf, 1.0]])


def test_class_ids_out_of_range_are_refused():
    with pytest.raises(ArrayError, match="answer_classes"):
        majority_vote([[0, 5]])


def test_shape_mismatch_names_the_argument():
    with pytest.raises(ArrayError, match="weights"):
        weighted_vote([[0, 1]], [[1.0, 2.0, 3.0]])


def test_one_dimensional_scores_are_refused():
    with pytest.raises(ArrayError, match="problems, candidates"):
        best_of_n([0.1, 0.2])


def test_to_weights_sigmoid_and_exp_keep_nan():
    w = to_weights([[0.0, np.nan, 1000.0]], "sigmoid")
    assert w[0, 0] == 0.5 and np.isnan(w[0, 1]) and w[0, 2] == 1.0
    e = to_weights([[0.0, np.nan, 1000.0]], "exp")
    assert e[0, 2] == 1.0 and np.isnan(e[0, 1])


@given(st.integers(0, 2**32 - 1))
def test_vectorised_selectors_agree_with_the_per_problem_loops(seed):
    rng = np.random.default_rng(seed)
    problems, n = 7, 6
    scores = rng.integers(0, 4, size=(problems, n)).astype(float)  # small ints: many ties
    answers = rng.integers(0, 3, size=(problems, n))
    correct = (answers == 0).astype(float)
    classes = answer_classes(answers.astype(str).astype(object), equivalence="exact")
    weights = rng.random((problems, n))
    for ties in ("expected", "first"):
        bon = best_of_n(scores).credit(correct, ties=ties)
        maj = majority_vote(classes).credit(correct, ties=ties)
        wv = weighted_vote(classes, weights).credit(correct, ties=ties)
        for p in range(problems):
            assert bon[p] == pytest.approx(loop_best_of_n(scores[p], correct[p], ties=ties))
            assert maj[p] == pytest.approx(vote_accuracy(list(answers[p]), correct[p], ties=ties))
            assert wv[p] == pytest.approx(vote_accuracy(list(answers[p]), correct[p], list(weights[p]), ties=ties))
