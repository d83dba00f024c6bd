"""Tables of (reference, candidate, expected) for the text rewards."""

from __future__ import annotations

import pytest

from rewardlab import Sample, Status, registry
from rewardlab.verify.text import (
    ChoiceMatch,
    Contains,
    ExactMatch,
    KeywordCoverage,
    NormalizedMatch,
    RegexMatch,
    TokenF1,
    squad_normalize,
    token_f1,
)


def score(reward, response, reference=None, **meta):
    return reward.score(Sample(response=response, reference=reference, meta=meta))


@pytest.mark.parametrize(
    ("reference", "candidate", "expected"),
    [
        ("Paris", "paris", 1.0),
        ("Paris", "  Paris \n", 1.0),
        ("Paris", "Paris.", 0.0),
        (["Paris", "City of Paris"], "city of  paris", 1.0),
        ("42", "43", 0.0),
    ],
)
def test_exact_match_table(reference, candidate, expected):
    assert score(ExactMatch(), candidate, reference).score == expected


def test_exact_match_extract_uses_last_match():
    reward = ExactMatch(extract=r"<answer>(.*?)</answer>")
    assert score(reward, "<answer>1</answer> then <answer>2</answer>", "2").score == 1.0
    result = score(reward, "no tags", "2")
    assert result.score == 0.0 and result.info["extracted"] is None


@pytest.mark.parametrize(
    ("reference", "candidate", "expected"),
    [
        ("The Eiffel Tower", "eiffel tower!", 1.0),
        ("an apple", "Apple", 1.0),
        ("New York", "new-york", 0.0),  # the hyphen is removed, joining the words (SQuAD behaviour)
        ("New York", "York New", 0.0),
    ],
)
def test_normalized_match_table(reference, candidate, expected):
    assert score(NormalizedMatch(), candidate, reference).score == expected


def test_squad_normalize_matches_official_script():
    assert squad_normalize("The  Quick, brown FOX!") == "quick brown fox"


@pytest.mark.parametrize(
    ("reference", "candidate", "expected"),
    [
        ("the cat sat", "the cat sat", 1.0),
        ("cat sat on mat", "cat sat", 2 * (1.0 * 0.5) / 1.5),
        ("cat", "dog", 0.0),
        ("", "", 1.0),
        ("a", "cat", 0.0),  # reference normalises to nothing
    ],
)
def test_token_f1_table(reference, candidate, expected):
    assert token_f1(reference, candidate)[2] == pytest.approx(expected)


def test_token_f1_reward_takes_best_reference():
    result = score(TokenF1(), "cat sat", ["dog", "cat sat on mat"])
    assert result.score == pytest.approx(2 / 3)
    assert result.info["recall"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("candidate", "expected_letter"),
    [
        ("The answer is (C).", "C"),
        ("Answer: b", "B"),
        ("\\boxed{D}", "D"),
        ("A", "A"),
        ("I think (A) is wrong, so (B)", "B"),
        ("Between A and B I pick C", "C"),
        ("no letter here", None),
    ],
)
def test_choice_extraction_table(candidate, expected_letter):
    assert ChoiceMatch(choices="ABCD").extract(candidate) == expected_letter


def test_choice_match_scores_and_rejects_bad_reference():
    reward = ChoiceMatch(choices="ABCD")
    assert score(reward, "Answer: (B)", "B").score == 1.0
    assert score(reward, "Answer: (B)", "(C)").score == 0.0
    bad = score(reward, "Answer: B", "Z")
    assert bad.status is Status.ERROR and bad.error.kind == "invalid_input"


def test_choice_rejects_non_letters():
    with pytest.raises(ValueError, match="distinct letters"):
        ChoiceMatch(choices="AAB")


def test_contains_any_and_all():
    assert score(Contains(), "It is in PARIS, France", ["paris", "rome"]).score == 1.0
    assert score(Contains(mode="all"), "It is in PARIS, France", ["paris", "rome"]).score == 0.0


def test_keywords_from_param_row_and_forbidden():
    assert score(KeywordCoverage(keywords=["red", "blue"]), "Red and green").score == 0.5
    assert score(KeywordCoverage(), "blue sky", None, keywords=["blue", "sky", "sun"]).score == pytest.approx(2 / 3)
    assert score(KeywordCoverage(keywords=["bad"], forbidden=True), "all good").score == 1.0
    # whole words only: "blueberry" does not mention "blue"
    assert score(KeywordCoverage(keywords=["blue"]), "blueberry").score == 0.0


def test_regex_fullmatch_and_invalid_pattern():
    assert score(RegexMatch(pattern=r"\d+", mode="fullmatch"), " 123 ").score == 1.0
    assert score(RegexMatch(pattern=r"\d+", mode="fullmatch"), "a123").score == 0.0
    with pytest.raises(ValueError, match="invalid regular expression"):
        RegexMatch(pattern="(")


@pytest.mark.parametrize("reward", [ExactMatch(), TokenF1(), NormalizedMatch(), Contains()])
def test_missing_reference_is_invalid_input_error(reward):
    result = score(reward, "something", None)
    assert result.status is Status.ERROR and result.error.kind == "invalid_input"


@pytest.mark.parametrize("bad", [42, {"text": "x"}, [1, 2]])
def test_non_string_response_is_invalid_input_error(bad):
    result = ExactMatch().score(Sample(response=bad, reference="x"))
    assert result.status is Status.ERROR and result.error.kind == "invalid_input"
    assert "response must be a string" in result.error.message


def test_chat_message_response_uses_last_message():
    sample = Sample(response=[{"role": "assistant", "content": "Paris"}], reference="paris")
    assert ExactMatch().score(sample).score == 1.0


@pytest.mark.parametrize("name", ["text.normalized", "text.f1", "text.choice", "text.contains", "text.keywords"])
def test_registered(name):
    assert registry.create(name).name == name
