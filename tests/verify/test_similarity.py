"""Similarity rewards: hand-checked values and agreement with the libraries' own output."""

from __future__ import annotations

import pytest
import sacrebleu

from rewardlab import Sample, Status
from rewardlab.verify.similarity import BLEU, ROUGE, ChrF, Fuzzy


def score(reward, response, reference):
    return reward.score(Sample(response=response, reference=reference))


@pytest.mark.parametrize("reward", [BLEU(), ChrF(), ROUGE(), Fuzzy()])
def test_identical_text_scores_one(reward):
    assert score(reward, "the cat sat on the mat", "the cat sat on the mat").score == pytest.approx(1.0)


@pytest.mark.parametrize("reward", [BLEU(), ChrF(), ROUGE(), Fuzzy()])
def test_unrelated_text_scores_low(reward):
    assert score(reward, "quantum chromodynamics", "the cat sat on the mat").score < 0.3


def test_rouge_l_hand_computed():
    # LCS("the cat sat on the mat", "the cat on the mat") = 5 tokens; P = 5/5, R = 5/6.
    expected = 2 * 1.0 * (5 / 6) / (1 + 5 / 6)
    assert score(ROUGE(), "the cat on the mat", "the cat sat on the mat").score == pytest.approx(expected)
    recall = ROUGE(measure="recall")
    assert score(recall, "the cat on the mat", "the cat sat on the mat").score == pytest.approx(5 / 6)


def test_rouge_best_of_references():
    assert score(ROUGE(rouge_type="rouge1"), "a b c", ["x y z", "a b c"]).score == pytest.approx(1.0)


def test_bleu_equals_sacrebleu_sentence_bleu():
    hyp, refs = "the quick brown fox jumps over a lazy dog", ["the quick brown fox jumps over the lazy dog"]
    expected = sacrebleu.sentence_bleu(hyp, refs).score / 100
    assert score(BLEU(), hyp, refs).score == pytest.approx(expected)
    assert 0.5 < expected < 1.0


def test_fuzzy_ratio_hand_computed():
    # Indel distance "kitten" -> "sitting": ratio = 2*matches/(6+7); rapidfuzz gives 61.538...
    assert score(Fuzzy(process=False), "kitten", "sitting").score == pytest.approx(8 / 13)
    assert score(Fuzzy(method="token_sort_ratio"), "world hello", "Hello World").score == pytest.approx(1.0)


def test_fuzzy_unknown_method_fails_at_construction():
    with pytest.raises(ValueError, match="unknown rapidfuzz method"):
        Fuzzy(method="nope")


def test_missing_reference_is_error():
    result = score(BLEU(), "text", None)
    assert result.status is Status.ERROR and result.error.kind == "invalid_input"


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("similarity.bleu", {"tokenize": "nope"}, "unknown sacrebleu tokenize"),
        ("similarity.rouge", {"rouge_type": "rouge9"}, "rouge_type"),
        ("similarity.chrf", {"word_order": -1}, "word_order"),
    ],
)
def test_bad_parameters_fail_when_the_spec_is_built(name, params, message):
    from rewardlab import registry
    from rewardlab.errors import SpecError

    with pytest.raises(SpecError, match=message):
        registry.create(name, params)
