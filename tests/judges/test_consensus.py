"""Majority-vote pseudo-labels over a group (TTRL) and when a group is not trusted."""

from __future__ import annotations

import pytest

from rewardlab import Sample, Status, build
from rewardlab.judges.consensus import MajorityVote, answer_entropy, cluster_answers


def group(answers, gid="g"):
    return [Sample(prompt="p", response=f"so the answer is \\boxed{{{a}}}" if a is not None else "no idea", group=gid) for a in answers]


def test_equivalent_answers_vote_together():
    clusters = cluster_answers(["\\frac{1}{2}", "0.5", "1/2", "3"])
    assert clusters.sizes == (3, 1) and clusters.labels == (0, 0, 0, 1)


def test_binary_reward_is_agreement_with_the_majority():
    results = MajorityVote().score_batch(group(["\\frac{1}{2}", "0.5", "1/2", "3", "0.5"]))
    assert [r.score for r in results] == [1.0, 1.0, 1.0, 0.0, 1.0]
    assert results[0].info["pseudo_label"] == "\\frac{1}{2}" and results[0].info["agreement"] == pytest.approx(0.8)


def test_frequency_mode_gives_minority_answers_their_share():
    results = MajorityVote(mode="frequency").score_batch(group(["7", "7", "7", "8", "8"]))
    assert [r.score for r in results] == pytest.approx([0.6, 0.6, 0.6, 0.4, 0.4])


def test_group_too_small_is_skipped_with_reason():
    results = MajorityVote(min_group=4).score_batch(group(["7", "7", "7"]))
    assert all(r.status is Status.SKIPPED for r in results)
    assert "too small" in results[0].info["skip_reason"] and results[0].info["group_size"] == 3


def test_split_group_below_min_agreement_is_skipped():
    results = MajorityVote(min_agreement=0.5).score_batch(group(["1", "1", "2", "3", "4", "5"]))
    assert all(r.status is Status.SKIPPED for r in results)
    assert "too split" in results[0].info["skip_reason"] and results[0].info["agreement"] == pytest.approx(2 / 6)


def test_tie_between_two_answers_is_skipped():
    results = MajorityVote(min_agreement=0.5).score_batch(group(["1", "1", "2", "2"]))
    assert all(r.status is Status.SKIPPED for r in results) and "tie" in results[0].info["skip_reason"]


def test_no_answer_counts_in_the_group_and_scores_zero():
    results = MajorityVote().score_batch(group(["9", "9", "9", None]))
    assert [r.score for r in results] == [1.0, 1.0, 1.0, 0.0]
    assert results[3].status is Status.OK and results[0].info["no_answer"] == 1


def test_all_missing_answers_is_skipped_not_zero():
    results = MajorityVote().score_batch(group([None] * 4))
    assert all(r.status is Status.SKIPPED for r in results)


def test_sample_without_group_is_an_invalid_input_error_and_others_still_score():
    samples = [Sample(response="\\boxed{1}"), *group(["1", "1", "1", "2"])]
    results = MajorityVote().score_batch(samples)
    assert results[0].status is Status.ERROR and results[0].error.kind == "invalid_input" and "group" in results[0].error.message
    assert [r.score for r in results[1:]] == [1.0, 1.0, 1.0, 0.0]


def test_groups_interleaved_in_a_batch_are_scored_separately():
    a, b = group(["1", "1", "1", "2"], "a"), group(["5", "6", "6", "6"], "b")
    mixed = [x for pair in zip(a, b, strict=True) for x in pair]
    results = MajorityVote().score_batch(mixed)
    assert [r.score for r in results] == [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0]


def test_answer_key_reads_extracted_answers_from_meta():
    samples = [Sample(response="...", meta={"pred": p}, group="g") for p in ["2", "2", "2.0", "4"]]
    assert [r.score for r in MajorityVote(answer_key="pred").score_batch(samples)] == [1.0, 1.0, 1.0, 0.0]


def test_majority_vote_in_a_spec_through_the_runner():
    import rewardlab

    spec = {"reward": {"name": "ttrl", "components": [{"name": "vote", "use": "labelfree.majority_vote", "params": {"min_group": 3}}]}}
    rows = [{"response": f"\\boxed{{{a}}}", "group": "q1"} for a in ["4", "4", "5"]]
    results = rewardlab.score(spec, rows)
    assert [r.score for r in results] == [1.0, 1.0, 0.0]
    assert build(spec).components[0].reward.name == "labelfree.majority_vote"


@pytest.mark.parametrize("params", [{"min_group": 1}, {"min_agreement": 0.0}, {"min_agreement": 1.5}, {"mode": "soft"}, {"ties": "random"}])
def test_bad_construction(params):
    with pytest.raises(ValueError):
        MajorityVote(**params)


def test_group_by_prompt_votes_without_group_ids():
    samples = [Sample(prompt=p, response=f"\\boxed{{{a}}}") for p, a in [("a", 1), ("b", 2), ("a", 1), ("b", 3), ("a", 5), ("b", 3)]]
    results = MajorityVote(group_by="prompt", min_group=3).score_batch(samples)
    assert [r.score for r in results] == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]


def test_entropy_mode_is_one_plus_log_share_over_log_n_and_averages_to_one_minus_normalised_entropy():
    import math

    results = MajorityVote(mode="entropy").score_batch(group(["7", "7", "7", "8", "9"]))
    expected = [1 + math.log(0.6) / math.log(5)] * 3 + [1 + math.log(0.2) / math.log(5)] * 2
    assert [r.score for r in results] == pytest.approx(expected)
    assert results[-1].score == pytest.approx(0.0)  # an answer nobody else gave
    h = answer_entropy([3, 1, 1], 5)
    assert results[0].info["answer_entropy"] == pytest.approx(h)
    assert sum(r.score for r in results) / 5 == pytest.approx(1 - h / math.log(5))


def test_unanimous_group_has_zero_entropy_and_full_reward_in_every_mode():
    for mode in ("binary", "frequency", "entropy"):
        results = MajorityVote(mode=mode).score_batch(group(["4"] * 4))
        assert [r.score for r in results] == [1.0] * 4 and results[0].info["normalized_entropy"] == 0.0


def test_ties_first_takes_the_cluster_seen_first_as_ttrl_does():
    results = MajorityVote(ties="first", min_agreement=0.4).score_batch(group(["2", "1", "1", "2", "3"]))
    assert [r.score for r in results] == [1.0, 0.0, 0.0, 1.0, 0.0] and results[0].info["pseudo_label"] == "2"


def test_graded_modes_need_no_pseudo_label_so_a_tie_is_scored():
    results = MajorityVote(mode="frequency", min_agreement=0.4).score_batch(group(["1", "1", "2", "2", "3"]))
    assert [r.score for r in results] == pytest.approx([0.4, 0.4, 0.4, 0.4, 0.2])


def test_graded_mode_on_a_group_where_every_answer_differs_is_skipped_not_scored():
    results = MajorityVote(mode="entropy").score_batch(group(["1", "2", "3", "4"]))
    assert all(r.status is Status.SKIPPED for r in results) and "too split" in results[0].info["skip_reason"]
    assert results[0].info["normalized_entropy"] == pytest.approx(1.0)
