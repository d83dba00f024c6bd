"""Selectors: tables of small cases, agreement with the per-problem loops of `evaluate.passk`,
and one test per attack (NaN scores, abstentions, negative weights, bad shapes)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

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
from rewardlab.select.selectors import _hybrid_after_majority

pytestmark = pytest.mark.usefixtures("both_selector_paths")  # the kernel and numpy


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


def _loop_selection(scores, classes, weights, usable):
    """Per problem, by hand: the chosen candidate and the tie weights of best-of-n and the votes."""
    out = {"best_of_n": [], "majority": [], "weighted": []}
    for s, c, w, ok in zip(scores.tolist(), classes.tolist(), weights.tolist(), usable.tolist(), strict=True):
        idx = [j for j in range(len(s)) if ok[j]]
        top = max((s[j] for j in idx), default=None)
        tied = [j for j in idx if s[j] == top]
        out["best_of_n"].append((tied[0] if tied else -1, {j: 1 / len(tied) for j in tied}))
        for name, vote in (("majority", [1.0] * len(w)), ("weighted", w)):
            totals: dict[int, float] = {}
            for j in idx:
                totals[c[j]] = totals.get(c[j], 0.0) + vote[j]
            best = max(totals.values(), default=0.0)
            win = [k for k, t in totals.items() if abs(t - best) <= 1e-8 + 1e-5 * abs(best)]  # np.isclose
            members = {k: [j for j in idx if c[j] == k] for k in win}
            first = min((members[k][0] for k in win), default=-1)
            out[name].append((first, {j: 1 / len(win) / len(members[k]) for k in win for j in members[k]}))
    return out


@pytest.mark.parametrize("n", [1, 10, 60])  # 60: rows wider than the 52 columns of a tie word
def test_blocked_selectors_agree_with_a_hand_loop_across_blocks_with_nan_and_masks(n):
    rng = np.random.default_rng(n)
    problems = 9_000  # more than two blocks of 4,096 rows, the last one short
    scores = rng.integers(0, 3, size=(problems, n)).astype(float)
    scores[rng.random(scores.shape) < 0.1] = np.nan
    classes = rng.integers(-1, min(n, 4), size=(problems, n))
    weights = rng.integers(0, 3, size=(problems, n)) / 2.0  # many exact ties of totals, zeros too
    mask = rng.random((problems, n)) < 0.9
    mask[:50] = False  # whole problems with no candidate
    want = _loop_selection(scores, classes, weights, mask & ~np.isnan(scores))
    want_votes = _loop_selection(scores, classes, weights, mask & (classes >= 0))
    got = {"best_of_n": best_of_n(scores, mask), "majority": majority_vote(classes, mask),
           "weighted": weighted_vote(classes, weights, mask)}  # fmt: skip
    for name, selection in got.items():
        expected = want if name == "best_of_n" else want_votes
        assert selection.chosen.tolist() == [first for first, _ in expected[name]], name
        dense = np.zeros((problems, n))
        for p, (_, weight) in enumerate(expected[name]):
            for j, v in weight.items():
                dense[p, j] = v
        np.testing.assert_allclose(selection.weight, dense, err_msg=name)


def test_nan_weight_drops_only_its_candidate_in_the_fast_path():
    sel = weighted_vote([[0, 1, 1]], [[0.9, np.nan, 0.5]])
    assert sel.chosen.tolist() == [0] and sel.weight[0].tolist() == [1.0, 0.0, 0.0]


def test_negative_weight_of_a_masked_candidate_is_not_an_error():
    sel = weighted_vote([[0, 1]], [[-1.0, 2.0]], mask=[[False, True]])
    assert sel.chosen.tolist() == [1]


def test_infinite_score_of_a_masked_candidate_is_not_an_error():
    assert best_of_n([[np.inf, 1.0]], mask=[[False, True]]).chosen.tolist() == [1]


def test_infinite_score_next_to_nan_is_still_refused():
    with pytest.raises(ArrayError, match="inf"):
        best_of_n([[np.nan, np.inf, 1.0]])


def test_ragged_answers_are_padded_in_order():
    classes = answer_classes([["a", "b", "a"], ["c"], [], ["d", None]], equivalence="exact")
    assert classes.tolist() == [[0, 1, 0], [0, -1, -1], [-1, -1, -1], [0, -1, -1]]


def test_normalized_classes_merge_distinct_strings_with_one_normal_form():
    answers = [["Paris", "paris ", "PARIS", "Lyon"], ["lyon", "Paris"]]
    assert answer_classes(answers, equivalence="normalized").tolist() == [[0, 0, 0, 1], [0, 1, -1, -1]]


def _hybrid_reference(classes, scores, mask, top_k):
    """The hybrid vote by its definition: per problem, count each class's voters, take the k-th
    largest count (classes without voters count 0), keep the voters of classes with a count
    >= it and > 0, then best-of-n among them."""
    valid = (np.ones(classes.shape, dtype=bool) if mask is None else mask) & (classes >= 0)
    problems, n = classes.shape
    flat = (np.arange(problems, dtype=np.int64)[:, None] * n + classes)[valid]
    counts = np.bincount(flat, minlength=problems * n).reshape(problems, n)
    kth = -np.sort(-counts, axis=1)[:, min(top_k, n) - 1]
    eligible_class = (counts > 0) & (counts >= kth[:, None])
    eligible = valid & eligible_class[np.arange(problems)[:, None], np.maximum(classes, 0)]
    return best_of_n(scores, eligible)


def _filtered_reference(classes, confidence, mask, keep):
    """The confidence filter by its definition: sort each problem's scored confidences, keep
    those >= the ceil(keep x scored)-th largest (at least one), then a majority vote."""
    valid = (np.ones(classes.shape, dtype=bool) if mask is None else mask) & (classes >= 0)
    scored = valid & ~np.isnan(confidence)
    ordered = -np.sort(-np.where(scored, confidence, -np.inf), axis=1)
    m = np.maximum(np.ceil(keep * scored.sum(axis=1)).astype(np.int64), 1)
    threshold = ordered[np.arange(len(m)), np.minimum(m, classes.shape[1]) - 1]
    return majority_vote(classes, scored & (confidence >= threshold[:, None]))


HOSTILE_SCORES = st.sampled_from([0.0, -0.0, 0.5, 0.5, 0.5, 1.0, -1.0, 1e300, -1e300, -np.inf, np.nan, 5e-324])


@st.composite
def hostile_votes(draw, max_n=12, complete=False):
    """Classes in -1..n-1 (often few distinct: many tied counts), a mask or None, tie-heavy
    scores with NaN and -inf, for 0..9 problems of 1..max_n candidates. `complete`: every
    candidate votes and is scored (no mask, no -1, no NaN: the selectors' fast paths)."""
    problems, n = draw(st.integers(0, 9)), draw(st.integers(1, max_n))
    highest = draw(st.sampled_from([min(n, 4), n])) - 1
    classes = draw(hnp.arrays(np.int64, (problems, n), elements=st.integers(0 if complete else -1, highest)))
    mask = None if complete else draw(st.none() | hnp.arrays(np.bool_, (problems, n)))
    values = HOSTILE_SCORES.filter(lambda v: not np.isnan(v)) if complete else HOSTILE_SCORES
    scores = draw(hnp.arrays(np.float64, (problems, n), elements=values))
    return classes, mask, scores


def assert_same_selection(got, want):
    np.testing.assert_array_equal(got.chosen, want.chosen)
    np.testing.assert_array_equal(got.weight, want.weight)


@settings(max_examples=300)
@given(hostile_votes() | hostile_votes(complete=True), st.data())
def test_hybrid_vote_equals_its_definition_on_ties_nan_masks_and_abstentions(arrays, data):
    classes, mask, scores = arrays
    top_k = data.draw(st.integers(1, classes.shape[1] + 1))
    assert_same_selection(hybrid_vote(classes, scores, mask, top_k=top_k), _hybrid_reference(classes, scores, mask, top_k))


@settings(max_examples=300)
@given(hostile_votes() | hostile_votes(complete=True), st.sampled_from([1e-9, 0.1, 0.25, 1 / 3, 0.5, 0.7, 0.999, 1.0]))
def test_filtered_vote_equals_its_definition_on_ties_nan_masks_and_abstentions(arrays, keep):
    classes, mask, scores = arrays
    assert_same_selection(filtered_vote(classes, scores, mask, keep=keep), _filtered_reference(classes, scores, mask, keep))


@settings(max_examples=40)
@given(hostile_votes(max_n=70) | hostile_votes(max_n=70, complete=True), st.data(), st.sampled_from([0.1, 0.5, 1.0]))
def test_hybrid_and_filtered_equal_their_definitions_on_wide_rows(arrays, data, keep):
    classes, mask, scores = arrays
    top_k = data.draw(st.integers(1, classes.shape[1] + 1))
    assert_same_selection(hybrid_vote(classes, scores, mask, top_k=top_k), _hybrid_reference(classes, scores, mask, top_k))
    assert_same_selection(filtered_vote(classes, scores, mask, keep=keep), _filtered_reference(classes, scores, mask, keep))


@settings(max_examples=200)
@given(hostile_votes())
def test_hybrid_after_majority_is_the_top1_hybrid_vote(arrays):
    classes, mask, scores = arrays
    got = _hybrid_after_majority(scores, majority_vote(classes, mask))
    assert_same_selection(got, _hybrid_reference(classes, scores, mask, 1))
