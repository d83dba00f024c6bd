"""Self-certainty and entropy from OpenAI-shaped token logprobs."""

from __future__ import annotations

import math

import pytest

from rewardlab import Sample, Status
from rewardlab.judges.certainty import Entropy, SelfCertainty, token_distributions


def logprobs(*tokens):
    """Each token given as its top-k probabilities (first = chosen)."""
    return {"content": [{"token": "t", "logprob": math.log(ps[0]), "top_logprobs": [{"token": str(i), "logprob": math.log(p)} for i, p in enumerate(ps)]} for ps in tokens]}


def test_uniform_tokens_have_zero_self_certainty_and_max_entropy():
    sample = Sample(response="r", meta={"logprobs": logprobs([0.25] * 4, [0.25] * 4)})
    assert SelfCertainty().score(sample).score == pytest.approx(0.0, abs=1e-12)
    assert Entropy().score(sample).score == pytest.approx(-math.log(4))


def test_self_certainty_matches_the_kl_formula():
    ps = [0.7, 0.2, 0.1]
    expected = sum((1 / 3) * math.log((1 / 3) / p) for p in ps)  # KL(U || p)
    result = SelfCertainty().score(Sample(response="r", meta={"logprobs": logprobs(ps)}))
    assert result.score == pytest.approx(expected)


def test_confident_response_scores_higher_than_unsure_one():
    sure = Sample(response="a", meta={"logprobs": logprobs([0.97, 0.02, 0.01])})
    unsure = Sample(response="b", meta={"logprobs": logprobs([0.4, 0.35, 0.25])})
    for reward in (SelfCertainty(), Entropy()):
        assert reward.score(sure).score > reward.score(unsure).score


def test_top_k_that_does_not_sum_to_one_is_renormalised():
    assert token_distributions(logprobs([0.5, 0.25]))[0] == pytest.approx([2 / 3, 1 / 3])


def test_missing_logprobs_is_invalid_input_not_zero():
    result = SelfCertainty().score(Sample(response="r"))
    assert result.status is Status.ERROR and result.error.kind == "invalid_input" and "logprobs" in result.error.message


def test_tokens_without_alternatives_are_invalid_input():
    only_chosen = {"content": [{"token": "t", "logprob": -0.1, "top_logprobs": [{"token": "t", "logprob": -0.1}]}]}
    result = Entropy().score(Sample(response="r", meta={"logprobs": only_chosen}))
    assert result.error.kind == "invalid_input" and "top_logprobs" in result.error.message


def test_malformed_logprob_entry_is_invalid_input():
    bad = {"content": [{"token": "t", "top_logprobs": [{"token": "a"}, {"token": "b", "logprob": "x"}]}]}
    assert SelfCertainty().score(Sample(response="r", meta={"logprobs": bad})).error.kind == "invalid_input"


def test_bare_list_of_entries_is_accepted():
    entries = logprobs([0.5, 0.5])["content"]
    assert SelfCertainty(logprobs_key="lp").score(Sample(response="r", meta={"lp": entries})).score == pytest.approx(0.0, abs=1e-12)
