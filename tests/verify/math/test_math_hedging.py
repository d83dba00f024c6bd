"""Hedged answers: several different boxed answers in the final answer section score 0.0.

The attack found by the audit: with the last box taken as the answer, `\\boxed{8} or \\boxed{10}
or \\boxed{9}` was accepted for the reference 9.
"""

from __future__ import annotations

import pytest

from rewardlab.core import Sample, Status
from rewardlab.verify.math import ExtractOptions, MathAnswer, extract_answer
from rewardlab.verify.math.hedging import Hedge, final_answer

ATTACK = "Trying a few values, the answer is \\boxed{8} or \\boxed{10} or \\boxed{9}."


def test_hedge_with_several_boxed_answers_is_rejected() -> None:
    result = MathAnswer().score(Sample(response=ATTACK, reference="9"))
    assert result.status is Status.OK and result.score == 0.0  # a wrong answer, not an error
    assert result.info["method"] == "hedge" and result.info["verdict"] == "not_equivalent"
    assert result.info["reason"].startswith("hedged: 3 different boxed answers")
    assert result.info["candidates"] == ["8", "10", "9"]
    # the old reading, on request: the last box alone
    assert MathAnswer(hedging="last").score(Sample(response=ATTACK, reference="9")).score == 1.0


# (response, reference): every one offers several different answers at the end -> 0.0
HEDGES: list[tuple[str, str]] = [
    ("\\boxed{8}, \\boxed{10}, \\boxed{9}", "9"),
    ("\\boxed{8} \\boxed{9}", "9"),
    ("So\n\\[\n\\boxed{8}\n\\]\nor\n\\[\n\\boxed{9}\n\\]", "9"),
    ("The answer is \\boxed{8}. Alternatively, reading the question as inclusive, it could be \\boxed{9}.", "9"),
    ("<answer>\\boxed{8} or \\boxed{9}</answer>", "9"),
    ("\\boxed{8} \\text{ or } \\boxed{9}", "9"),
    ("\\boxed{1} or \\boxed{2}", "(1, 2]"),  # an interval's brackets are not supplied by joining
    ("\\boxed{1} or \\boxed{2} or \\boxed{3}", "1, 2"),  # three answers for two parts
    ("\\boxed{9} or \\boxed{9^9^9^9}", "9"),  # cannot be shown equal: both were offered
    ("\\boxed{1 \\text{ or } 2}", "2"),  # one box that hedges
    ("\\boxed{8, 10, \\text{or } 9}", "9"),
    ("<answer>8</answer> On reflection: <answer>9</answer>", "9"),  # every tag is a final answer
    ("\\boxed{A} or \\boxed{B}", "B"),  # two letters for a letter reference
    ("\\boxed{12} (option \\boxed{B}) or \\boxed{13}", "12"),
    # two different values cannot both spell the one letter offered (the audit's hedge probe)
    ("The answer is 0 or 1 or A: \\boxed{0} or \\boxed{1} or \\boxed{A}", "A"),
    ("\\boxed{0} or \\boxed{1} or \\boxed{(C)}", "(C)"),
    ("\\boxed{A} or \\boxed{B} or \\boxed{7}", "7"),  # and two letters cannot spell one value
]


@pytest.mark.parametrize(("response", "reference"), HEDGES)
def test_hedges_score_zero_with_a_reason(response: str, reference: str) -> None:
    result = MathAnswer().score(Sample(response=response, reference=reference))
    assert result.status is Status.OK and result.score == 0.0, result.info
    assert result.info["method"] == "hedge" and result.info["reason"].startswith("hedged")
    assert len(result.info["candidates"]) >= 2


# (response, reference): legitimate responses with several boxes -> 1.0
LEGITIMATE: list[tuple[str, str]] = [
    # an intermediate result boxed earlier in the reasoning, the final answer at the end
    ("First, $x = \\boxed{3}$.\n\nSubstituting $x = 3$ into $y = 2x + 1$ we get $y = 7$, as needed.\n\n"
     "So the answer is $\\boxed{7}$.", "7"),
    ("\\boxed{9}. Checking: 4 + 5 = 9. Therefore the answer is \\boxed{9}.", "9"),  # the same answer twice
    ("\\boxed{\\frac{1}{2}} or equivalently \\boxed{0.5}", "\\frac12"),  # one value, two forms
    ("\\boxed{9999.857142857143} or \\boxed{9999 \\frac{6}{7}}", "\\frac{69999}{7}"),  # real data, row 72
    ("The roots are \\boxed{1} and \\boxed{2}.", "1, 2"),  # as many parts as the reference
    ("The roots are \\boxed{2} and \\boxed{1}.", "\\{1, 2\\}"),
    ("$x = \\boxed{3}$ and $y = \\boxed{7}$", "(3, 7)"),
    ("\\[4 = \\boxed{\\phantom{2}}.\\] The number in the box is \\boxed{4}.", "4"),  # placeholder box
    ("\\boxed{} so \\boxed{4}", "4"),
    ("<answer>9</answer> To repeat: <answer>9</answer>", "9"),
    # a value and its choice letter: the one written like the reference is the answer
    ("The total is \\boxed{12}, which is option \\boxed{B}.", "B"),
    ("The total is \\boxed{12}, which is option \\boxed{(B)}.", "12"),
]


@pytest.mark.parametrize(("response", "reference"), LEGITIMATE)
def test_legitimate_several_boxes_are_accepted(response: str, reference: str) -> None:
    result = MathAnswer().score(Sample(response=response, reference=reference))
    assert result.status is Status.OK and result.score == 1.0, result.info


def test_multi_part_answers_in_the_wrong_order_are_wrong_not_hedged() -> None:
    result = MathAnswer().score(Sample(response="$x = \\boxed{7}$ and $y = \\boxed{3}$", reference="(3, 7)"))
    assert result.score == 0.0 and result.info["method"] == "structure"


def test_extraction_returns_the_final_answer_section() -> None:
    assert extract_answer(ATTACK).candidates == ("8", "10", "9")
    assert extract_answer(ATTACK).answer == "9"
    assert extract_answer(ATTACK, boxed="first").answer == "8"
    assert extract_answer(ATTACK, hedging="last").candidates == ()
    assert extract_answer("\\boxed{4}").candidates == ()
    # a placeholder box is never the answer, even when it comes last
    assert extract_answer("so \\boxed{4}. Fill in: \\boxed{\\phantom{2}}").answer == "4"


def test_section_is_bounded_by_the_glue_between_boxes() -> None:
    filler = "we simplify the remaining terms carefully " * 3  # ~130 characters, no alternative
    assert extract_answer(f"\\boxed{{8}} {filler} \\boxed{{9}}").candidates == ()
    offered = f"\\boxed{{8}} {filler} or maybe \\boxed{{9}}"
    assert extract_answer(offered).candidates == ("8", "9")
    assert extract_answer(offered, hedge_window=100).candidates == ()
    assert MathAnswer(hedge_window=100).score(Sample(response=offered, reference="9")).score == 1.0
    assert MathAnswer().score(Sample(response=offered, reference="9")).score == 0.0


def test_final_answer_resolves_per_reference() -> None:
    two = extract_answer("\\boxed{1} and \\boxed{2}")
    assert final_answer(two, "1, 2") == "1, 2"
    assert final_answer(two, "(1, 2)") == "(1, 2)"
    assert isinstance(final_answer(two, "2"), Hedge)
    assert final_answer(extract_answer("no answer here", strict=True), "2") is None


def test_list_of_references_accepts_a_multi_part_one() -> None:
    sample = Sample(response="\\boxed{1} and \\boxed{2}", reference=["3", "1, 2"])
    assert MathAnswer().score(sample).score == 1.0


def test_bad_hedging_options_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="hedging"):
        ExtractOptions(hedging="any")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="hedge_window"):
        ExtractOptions(hedge_window=-1)


def test_thousands_of_boxes_are_one_hedge_quickly() -> None:
    response = " ".join(f"\\boxed{{{i}}}" for i in range(10_000))
    result = MathAnswer().score(Sample(response=response, reference="9999"))
    assert result.score == 0.0 and result.info["reason"].startswith("hedged: 10000 different")
    assert len(result.info["candidates"]) == 32  # the info stays small
