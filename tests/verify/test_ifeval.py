"""IFEval-style constraints: one passing and one failing case per checker, then the reward."""

from __future__ import annotations

import pytest

from rewardlab import Sample, Status, registry
from rewardlab.verify.ifeval import CHECKERS, IFEvalConstraints, check, loose_variants
from rewardlab.verify.ifeval.checkers import count_words, split_sentences

ENGLISH = "The quick brown fox jumps over the lazy dog near the quiet river bank today."
FRENCH = "Le renard brun rapide saute par-dessus le chien paresseux près de la rivière tranquille."

# (instruction id, kwargs, text that follows it, text that does not)
CASES = [
    ("keywords:existence", {"keywords": ["apple", "pie"]}, "Apple pie is great", "Apple tart"),
    ("keywords:frequency", {"keyword": "cat", "frequency": 2, "relation": "at least"}, "cat and CAT", "one cat"),
    ("keywords:frequency", {"keyword": "cat", "frequency": 2, "relation": "less than"}, "one cat", "cat cat"),
    ("keywords:forbidden_words", {"forbidden_words": ["bad"]}, "all good badge", "a Bad day"),
    ("keywords:letter_frequency", {"letter": "z", "let_frequency": 2, "let_relation": "at least"}, "zig Zag", "zig"),
    ("language:response_language", {"language": "fr"}, FRENCH, ENGLISH),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": "less than"}, "One. Two.", "One. Two. Three."),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "First.\n***\nSecond.", "First.\n***\n\n***\nThird."),
    ("length_constraints:number_words", {"num_words": 5, "relation": "at least"}, "one two three four five", "one two"),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
        "First part.\n\nThen, the second.",
        "First part.\n\nAnd the second.",
    ),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "Dear [name] at [address]", "Dear [name]"),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Body.\nP.S. see you", "Body only."),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* one\n* two", "* one\n* two\n* three"),
    ("detectable_format:constrained_response", {}, "My answer is yes.", "Yes."),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*a* and *b*", "*a* only"),
    ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 2}, "Section 1\nx\nSection 2\ny", "Section 1\nx"),
    ("detectable_format:json_format", {}, '```json\n{"a": 1}\n```', "{'a': 1}"),
    ("detectable_format:title", {}, "<<My Title>>\nText", "My Title\nText"),
    ("combination:two_responses", {}, "First answer.\n******\nSecond answer.", "Only one."),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Say hi"}, "say hi. Hi!", "Hi! Say hi"),
    ("startend:end_checker", {"end_phrase": "Any questions?"}, "Done. Any questions?", "Any questions? Done."),
    ("startend:quotation", {}, '"quoted"', "not quoted"),
    ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "at least"}, "NASA and ESA", "NASA only"),
    ("change_case:english_capital", {}, ENGLISH.upper(), ENGLISH),
    ("change_case:english_lowercase", {}, ENGLISH.lower(), ENGLISH),
    ("punctuation:no_comma", {}, "No commas here", "One, two"),
]


@pytest.mark.parametrize(("instruction", "kwargs", "good", "bad"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_checker_table(instruction, kwargs, good, bad):
    assert check(instruction, good, kwargs) is True
    assert check(instruction, bad, kwargs) is False


def test_every_checker_has_a_case():
    assert {c[0] for c in CASES} == set(CHECKERS)


def test_short_alias_and_none_kwargs_accepted():
    assert check("no_comma", "abc", {"keywords": None, "num_words": None}) is True


def test_unknown_instruction_and_bad_arguments():
    with pytest.raises(ValueError, match="unknown IFEval instruction"):
        check("nope:nothing", "x")
    with pytest.raises(ValueError, match="bad arguments"):
        check("length_constraints:number_words", "x", {"num_words": 3})
    with pytest.raises(ValueError, match="relation"):
        check("length_constraints:number_words", "x", {"num_words": 3, "relation": "about"})


def test_counting_helpers():
    assert count_words("Hello, world! It's 3pm.") == 5
    assert split_sentences("Dr. Smith came. He left! Did he? Yes.")[-2:] == ["Did he?", "Yes."]


def ifeval_row(response, ids, kwargs):
    # The released google/IFEval rows: every kwargs object carries every key, unused ones None.
    return Sample(prompt="p", response=response, meta={"instruction_id_list": ids, "kwargs": kwargs})


def test_reward_combines_row_constraints():
    ids = ["punctuation:no_comma", "length_constraints:number_words", "startend:quotation"]
    kwargs = [{"num_words": None, "relation": None}, {"num_words": 3, "relation": "at least"}, {}]
    sample = ifeval_row("one two three four", ids, kwargs)
    result = IFEvalConstraints().score(sample)
    assert result.score == pytest.approx(2 / 3)
    assert result.info["followed"] == {ids[0]: True, ids[1]: True, ids[2]: False}
    assert IFEvalConstraints(mode="all").score(sample).score == 0.0


def test_constraints_from_object_reference_and_fixed_params():
    sample = Sample(response="a, b", reference={"instruction_id_list": ["no_comma"]})
    assert IFEvalConstraints().score(sample).score == 0.0
    fixed = IFEvalConstraints(instruction_ids=["no_comma"])
    assert fixed.score(Sample(response="a b")).score == 1.0


def test_loose_mode_forgives_a_preamble_line():
    ids, kwargs = ["startend:quotation"], [{}]
    sample = ifeval_row('Sure, here it is:\n"quoted answer"', ids, kwargs)
    assert IFEvalConstraints().score(sample).score == 0.0
    assert IFEvalConstraints(loose=True).score(sample).score == 1.0
    assert '"quoted answer"' in loose_variants('Sure:\n"quoted answer"')


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({}, "instruction_id_list"),
        ({"instruction_id_list": "no_comma"}, "list of strings"),
        ({"instruction_id_list": ["no_comma"], "kwargs": [{}, {}]}, "one per instruction"),
        ({"instruction_id_list": ["bogus"]}, "unknown IFEval instruction"),
        ({"instruction_id_list": []}, "no instructions"),
    ],
)
def test_bad_rows_are_invalid_input_errors(meta, message):
    result = IFEvalConstraints().score(Sample(response="x", meta=meta))
    assert result.status is Status.ERROR and result.error.kind == "invalid_input"
    assert message in result.error.message


def test_empty_response_follows_nothing():
    assert IFEvalConstraints().score(ifeval_row("   ", ["no_comma"], [{}])).score == 0.0


def test_registered_and_unknown_fixed_id_fails_at_build():
    assert registry.create("ifeval.constraints").name == "ifeval.constraints"
    with pytest.raises(Exception, match="unknown IFEval instruction"):
        registry.create("ifeval.constraints", {"instruction_ids": ["bogus"]})


def test_undetectable_language_follows_as_in_ifeval_unless_closed():
    assert check("language:response_language", "...!!!", {"language": "fr"}) is True
    assert check("language:response_language", "...!!!", {"language": "fr", "undetectable_follows": False}) is False


def test_two_responses_allows_empty_ends_like_ifeval():
    assert check("combination:two_responses", "******\nfirst\n******\nsecond\n******") is True
    assert check("combination:two_responses", "first\n******\n\n******\nsecond") is False
