"""Cross-check of every IFEval checker against Google's reference implementation.

`if-verifiable` ships IFEval's `instructions.py` (Zhou et al. 2023). On seeded random texts
built to hit each constraint's edge cases, rewardlab's verdict must equal the reference's.
Two checkers are left out: `number_sentences` and `capital_word_frequency` call NLTK's Punkt
tokenizer, whose data is a download (not allowed here); rewardlab uses a regex splitter and
`\\w+` words for them, tested by hand in test_ifeval.py.
"""

from __future__ import annotations

import random
import zlib

import pytest

from rewardlab.verify.ifeval import CHECKERS, check

registry = pytest.importorskip("if_verifiable.ifeval.instructions_registry", reason="if-verifiable (IFEval reference) not installed")

NEEDS_PUNKT = {"length_constraints:number_sentences", "change_case:capital_word_frequency"}
PIECES = [
    "apple", "Apple", "pie", "cat", "CAT", "zig", "zag", "Then", "then", "NASA", "ok", "done",
    ",", ".", "!", "?", " ", " ", " ", "\n", "\n\n", "\n***\n", "* ", "- ", "*bold*", "**strong**",
    "[name]", "[x]", "<<Title>>", '"', "P.S.", "p.p.s", "Section 1", "SECTION 2", "******",
    "My answer is yes.", "Any questions?", "```json\n", "{\"a\": 1}", "```", "Say hi",
]  # fmt: skip
KWARGS = {
    "keywords:existence": {"keywords": ["apple", "pie"]},
    "keywords:frequency": {"keyword": "cat", "frequency": 2, "relation": "at least"},
    "keywords:forbidden_words": {"forbidden_words": ["zig", "then"]},
    "keywords:letter_frequency": {"letter": "a", "let_frequency": 3, "let_relation": "less than"},
    "language:response_language": {"language": "en"},
    "length_constraints:number_paragraphs": {"num_paragraphs": 2},
    "length_constraints:number_words": {"num_words": 6, "relation": "less than"},
    "length_constraints:nth_paragraph_first_word": {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
    "detectable_content:number_placeholders": {"num_placeholders": 1},
    "detectable_content:postscript": {"postscript_marker": "P.S."},
    "detectable_format:number_bullet_lists": {"num_bullets": 2},
    "detectable_format:constrained_response": {},
    "detectable_format:number_highlighted_sections": {"num_highlights": 1},
    "detectable_format:multiple_sections": {"section_spliter": "Section", "num_sections": 1},
    "detectable_format:json_format": {},
    "detectable_format:title": {},
    "combination:two_responses": {},
    "combination:repeat_prompt": {"prompt_to_repeat": "Say hi"},
    "startend:end_checker": {"end_phrase": "Any questions?"},
    "startend:quotation": {},
    "change_case:english_capital": {},
    "change_case:english_lowercase": {},
    "punctuation:no_comma": {},
}


def texts(seed: int, n: int = 300) -> list[str]:
    rng = random.Random(seed)
    out = ["", "The quick brown fox jumps over the lazy dog today.", "THE QUICK BROWN FOX JUMPS OVER THE DOG."]
    for _ in range(n):
        out.append("".join(rng.choice(PIECES) + rng.choice(["", " "]) for _ in range(rng.randint(1, 14))))
    return out


def test_every_checker_is_cross_checked_or_named():
    assert set(KWARGS) | NEEDS_PUNKT == set(CHECKERS)


@pytest.mark.parametrize("instruction", sorted(KWARGS))
def test_verdicts_equal_the_reference(instruction):
    import langdetect

    langdetect.DetectorFactory.seed = 0  # langdetect is randomised; both sides share the seed
    reference = registry.INSTRUCTION_DICT[instruction](instruction)
    reference.build_description(**KWARGS[instruction])
    disagreements = []
    for text in texts(seed=zlib.crc32(instruction.encode())):
        expected = bool(text.strip()) and reference.check_following(text)  # IFEval skips empty responses
        got = bool(text.strip()) and check(instruction, text, KWARGS[instruction])
        if got != expected:
            disagreements.append(text)
    assert not disagreements, f"{len(disagreements)} disagreements, e.g. {disagreements[:3]!r}"
