"""Answer classes (exact, normalised, maths equivalence) and where scores come from."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.core import ErrorKind, RewardResult, Sample, reward
from rewardlab.errors import ArrayError
from rewardlab.select import answer_classes, score_candidates, step_scores


@pytest.mark.parametrize(
    ("answers", "equivalence", "expected"),
    [
        ([["b", "a", "b", "c"]], "exact", [[0, 1, 0, 2]]),
        ([["Paris ", "paris", "PARIS"]], "exact", [[0, 1, 2]]),
        ([["Paris ", "paris", "PARIS"]], "normalized", [[0, 0, 0]]),
        ([["\\frac{1}{2}", "0.5", "\\dfrac12", "2"]], "math", [[0, 0, 0, 1]]),
        ([["10{,}000", "10000", "1000"]], "math", [[0, 0, 1]]),
        ([["x"], ["x", "y"]], "exact", [[0, -1], [0, 1]]),
    ],
)
def test_answer_classes_table(answers, equivalence, expected):
    assert answer_classes(answers, equivalence=equivalence).tolist() == expected


def test_class_ids_restart_in_every_problem():
    classes = answer_classes([["a", "b"], ["b", "a"]], equivalence="exact")
    assert classes.tolist() == [[0, 1], [0, 1]]


def test_missing_answer_is_minus_one_and_never_a_class():
    assert answer_classes([[None, "3", None]], equivalence="math").tolist() == [[-1, 0, -1]]


def test_unparseable_answers_do_not_merge_with_numbers():
    classes = answer_classes([["\\frac{", "1", "\\frac{"]], equivalence="math")
    assert classes[0, 0] == classes[0, 2] != classes[0, 1]


def test_unknown_equivalence_is_refused():
    with pytest.raises(ArrayError, match="equivalence"):
        answer_classes([["a"]], equivalence="fuzzy")  # type: ignore[arg-type]


@reward(range=(0, 1), register=False)
def _flaky(sample: Sample) -> RewardResult | float:
    if "bad" in sample.response:
        return RewardResult.failure(ErrorKind.PARSE, "cannot read")
    return 0.5


def test_error_results_become_nan_and_are_counted():
    got = score_candidates(_flaky, [[Sample(response="ok"), Sample(response="bad")], [Sample(response="ok")]])
    assert got.scores[0, 0] == 0.5
    assert np.isnan(got.scores[0, 1]) and np.isnan(got.scores[1, 1])  # an error, then padding
    assert got.errors == 1 and got.error_kinds == {"parse": 1}


def test_step_scores_aggregations_and_empty_rows():
    steps = np.array([[[0.9, 0.2, 0.8], [0.5, 0.5, np.nan]]])
    mask = np.array([[[True, True, True], [True, True, False]]])
    assert step_scores(steps, mask, how="min").tolist() == [[0.2, 0.5]]
    assert step_scores(steps, mask, how="last").tolist() == [[0.8, 0.5]]
    np.testing.assert_allclose(step_scores(steps, mask, how="product"), [[0.9 * 0.2 * 0.8, 0.25]])
    empty = step_scores(steps, np.zeros_like(mask), how="min")
    assert np.isnan(empty).all()


def test_step_scores_need_three_axes():
    with pytest.raises(ArrayError, match="steps"):
        step_scores([[0.1, 0.2]])


def test_exact_classes_of_non_string_answers_compare_their_strings():
    answers = np.array([[1, 1.0, True, "1", None]], dtype=object)  # equal as dict keys, not as strings
    assert answer_classes(answers, equivalence="exact").tolist() == [[0, 1, 2, 0, -1]]
