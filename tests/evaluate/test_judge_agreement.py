"""Judge calibration and agreement: accuracy, Cohen's kappa, ECE, judge vs judge."""

from __future__ import annotations

import math

import pytest

from rewardlab import RewardResult
from rewardlab.errors import InputError
from rewardlab.evaluate.judge_agreement import judge_vs_judge, judge_vs_labels


def test_kappa_matches_the_textbook_two_rater_example():
    # Wikipedia "Cohen's kappa" worked example: 50 items, yes/yes 20, yes/no 5, no/yes 10,
    # no/no 15; p_o = 0.7, p_e = 0.5, kappa = 0.4.
    judge = [1.0] * 25 + [0.0] * 25
    labels = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    result = judge_vs_labels(judge, labels)
    assert result.accuracy == pytest.approx(0.7) and result.kappa == pytest.approx(0.4)


def test_ece_of_a_calibrated_and_an_overconfident_judge():
    labels = [1] * 8 + [0] * 2
    assert judge_vs_labels([0.8] * 10, labels).ece == pytest.approx(0.0)
    assert judge_vs_labels([1.0] * 10, labels).ece == pytest.approx(0.2)


def test_error_rows_are_left_out_and_counted_not_zero():
    results = [RewardResult.ok(0.9), RewardResult.failure("remote", "down"), RewardResult.ok(0.1), None]
    result = judge_vs_labels(results, [1, 0, 0, 1])
    assert (result.n, result.unscored, result.accuracy) == (2, 2, 1.0)


def test_constant_verdicts_have_no_kappa():
    assert judge_vs_labels([0.9, 0.9], [1, 1]).kappa is None


def test_two_judges_agreement_and_rank_correlation():
    a = [0.9, 0.8, 0.3, 0.1, 0.6]
    b = [0.7, 0.9, 0.2, 0.4, 0.4]
    result = judge_vs_judge(a, b)
    assert result.agreement == pytest.approx(0.8) and result.n == 5
    # Pearson of the ranks [5, 4, 2, 1, 3] and [4, 5, 1, 2.5, 2.5] (tied 0.4s share rank 2.5): 7 / sqrt(10 * 9.5)
    assert result.spearman == pytest.approx(7 / math.sqrt(95))


def test_mismatched_lengths_name_the_problem():
    with pytest.raises(InputError, match="one label per row"):
        judge_vs_labels([0.5], [1, 0])
    with pytest.raises(InputError, match="no row was scored"):
        judge_vs_labels([None], [1])
