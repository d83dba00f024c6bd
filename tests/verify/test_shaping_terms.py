"""Shaping terms: hand-computed tables, and agreement with TRL's own implementations."""

from __future__ import annotations

import math

import pytest

from rewardlab import Sample, Status
from rewardlab.verify.shaping_terms import (
    AdaptiveLengthPenalty,
    CosineScaled,
    LengthBudget,
    RepetitionPenalty,
    SoftOverlong,
)

EXACT = {"use": "text.exact"}


def tokens(n, **meta):
    return Sample(response="x", meta={"num_tokens": n, **meta})


@pytest.mark.parametrize(("n", "expected"), [(50, 0.0), (80, 0.0), (90, -0.5), (100, 0.0 - 1.0), (101, -1.0)])
def test_soft_overlong_table(n, expected):
    assert SoftOverlong(max_length=100, cache=20).score(tokens(n)).score == pytest.approx(expected)


def test_soft_overlong_equals_trl():
    from trl.rewards import get_soft_overlong_punishment

    trl_reward = get_soft_overlong_punishment(max_completion_len=100, soft_punish_cache=20)
    lengths = list(range(0, 130, 7))
    expected = trl_reward([[1] * n for n in lengths])
    ours = [SoftOverlong(max_length=100, cache=20).score(Sample(response="x", meta={"completion_ids": [1] * n})).score for n in lengths]
    assert ours == pytest.approx(expected)


def test_tokens_unit_without_token_count_is_error():
    result = SoftOverlong(max_length=10, cache=5).score(Sample(response="a b c"))
    assert result.status is Status.ERROR and result.error.kind == "invalid_input"
    assert SoftOverlong(max_length=10, cache=5, unit="words").score(Sample(response="a b c")).score == 0.0


def test_cosine_scaled_table():
    reward = CosineScaled(max_length=100, correctness=EXACT)
    right, wrong = {"reference": "42", "response": "42"}, {"reference": "42", "response": "41"}
    assert reward.score(Sample(**right, meta={"num_tokens": 0})).score == pytest.approx(1.0)
    assert reward.score(Sample(**right, meta={"num_tokens": 50})).score == pytest.approx(0.75)
    assert reward.score(Sample(**right, meta={"num_tokens": 500})).score == pytest.approx(0.5)  # clamped
    assert reward.score(Sample(**wrong, meta={"num_tokens": 0})).score == pytest.approx(-1.0)
    assert reward.score(Sample(**wrong, meta={"num_tokens": 50})).score == pytest.approx(-0.75)


def test_cosine_equals_trl_formula_on_meta_correct():
    from trl.rewards import get_cosine_scaled_reward

    trl_reward = get_cosine_scaled_reward(max_len=100)
    completions = [[{"content": r"\boxed{\frac{1}{3}}"}], [{"content": r"\boxed{\frac{1}{2}}"}]] * 3
    lengths = [10, 10, 60, 60, 130, 130]
    expected = trl_reward(completions, [r"\frac{1}{3}"] * 6, [[1] * n for n in lengths])
    reward = CosineScaled(max_length=100)
    ours = [
        reward.score(Sample(response="x", meta={"num_tokens": n, "correct": i % 2 == 0})).score
        for i, n in enumerate(lengths)
    ]
    assert ours == pytest.approx(expected)


def test_cosine_correctness_error_propagates():
    result = CosineScaled(max_length=10, correctness=EXACT).score(Sample(response="x", meta={"num_tokens": 1}))
    assert result.status is Status.ERROR and "correctness" in result.error.message


@pytest.mark.parametrize(
    ("text", "n", "expected"),
    [
        ("a b c d", 2, 0.0),
        ("a a a a a", 2, -0.75),
        ("a", 3, 0.0),
    ],
)
def test_repetition_table(text, n, expected):
    assert RepetitionPenalty(ngram_size=n).score(Sample(response=text)).score == pytest.approx(expected)


def test_repetition_on_token_ids_equals_trl():
    from trl.rewards import get_repetition_penalty_reward

    ids = [[1, 2, 3, 4], [5, 5, 5, 5, 5], [1, 2, 1, 2, 1, 2], [7]]
    expected = get_repetition_penalty_reward(ngram_size=2, max_penalty=-0.5)(ids)
    reward = RepetitionPenalty(ngram_size=2, max_penalty=-0.5, unit="tokens")
    assert [reward.score(Sample(response="x", meta={"completion_ids": i})).score for i in ids] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("n", "mode", "expected"),
    [(80, "max", 0.0), (150, "max", -0.5), (80, "exact", -0.2), (400, "exact", -1.0)],
)
def test_length_budget_table(n, mode, expected):
    assert LengthBudget(budget=100, mode=mode).score(tokens(n)).score == pytest.approx(expected)


def test_length_budget_from_row_and_missing():
    assert LengthBudget().score(tokens(150, length_budget=100)).score == pytest.approx(-0.5)
    assert LengthBudget().score(tokens(150)).status is Status.ERROR


def test_adaptive_length_strength_follows_running_accuracy():
    reward = AdaptiveLengthPenalty(max_length=100, low=0.3, high=0.8, momentum=0.5)
    right = [Sample(response=f"r{i}", meta={"num_tokens": 50, "correct": True}) for i in range(4)]
    wrong = [Sample(response=f"w{i}", meta={"num_tokens": 50, "correct": False}) for i in range(4)]
    assert reward.strength == 0.0
    strengths = []
    for _ in range(4):  # accuracy climbs 0.5, 0.75, 0.875, ...: penalty grows
        scores = reward.score_batch(right)
        strengths.append(reward.strength)
    assert strengths == sorted(strengths) and strengths[-1] == pytest.approx(1.0)
    assert scores[0].score == pytest.approx(-0.5)  # strength 1 x half the max length
    for _ in range(4):  # accuracy falls: the penalty relaxes
        reward.score_batch(wrong)
    assert reward.strength == 0.0
    assert reward.score(wrong[0]).score == 0.0


def test_adaptive_length_rejects_bad_bounds():
    with pytest.raises(ValueError):
        AdaptiveLengthPenalty(max_length=10, low=0.9, high=0.5)


def test_ranges_are_declared():
    assert CosineScaled(max_length=1).range == (-1.0, 1.0)
    assert RepetitionPenalty(max_penalty=-2.0).range == (-2.0, 0.0)
    assert math.isfinite(SoftOverlong(max_length=5, cache=1).range[0])
