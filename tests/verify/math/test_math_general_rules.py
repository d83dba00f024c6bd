"""General rules behind the external cases rewardlab used to miss: each rule, its own cases, and
the wrong answers in the same shape that the rule must not let through.

The rules are written from what they mean (docs/math.md), not from the external strings: a
rule is kept only when it is right for every answer of its shape.
"""

from __future__ import annotations

import pytest

from rewardlab.core import Sample
from rewardlab.verify.math import MathAnswer, extract_answer

REWARD = MathAnswer()


def _accepted(response: str, reference: str) -> bool:
    return REWARD.score(Sample(prompt="", response=response, reference=reference)).score == 1.0


# `\$` is a dollar sign, never a maths delimiter.
ESCAPED_DOLLAR = [
    ("Answer $ \\frac{3}{4} \\$ = \\frac{7}{5} $", "7/5", True),
    ("Answer $ \\frac{3}{4} \\$ = \\frac{7}{5} $", "3/4", False),  # the span is not cut at `\$`
    ("It costs \\$5 and then $x = 12$", "12", True),  # an opening `\$` opens nothing
    ("It costs \\$5 and then $x = 12$", "5", False),
]

# Only a top-level `=` splits an equation: the one in a bound (`\sum_{k=0}`) does not.
TOP_LEVEL_EQUALS = [
    ("so $S = \\sum_{k=0}^{3} k^2$", "14", True),
    ("so $S = \\sum_{k=0}^{3} k^2$", "0", False),  # not the `0` after `k=`
    ("$F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}$", "$F_n = \\sum_{k=0}^{n-1} F_{n-k-1} F_k$", True),
    ("$F_n = \\sum_{k=0}^{n-1} F_k F_{n-k}$", "$F_n = \\sum_{k=0}^{n-1} F_{n-k-1} F_k$", False),
]

# The fallbacks (the last maths span, the last number) are read by position: the later wins.
FALLBACK_BY_POSITION = [
    ("Let $d = \\frac{90}{n}$ for each divisor. So there are 12 sequences.", "12", True),
    ("Let $d = \\frac{90}{n}$ for each divisor. So there are 13 sequences.", "12", False),
    ("There are 4 cases, and in all of them $x = 7$", "7", True),  # the span is later
    ("There are 4 cases, and in all of them $x = 7$", "4", False),
    ("The area is $x = 25$ cm^2.", "25", True),  # an exponent in the prose is no number
    ("$$a \\geq \\frac{2}{1}.$$ So the error increases by 100%.", "100\\%", True),
    ("$$a \\geq \\frac{2}{1}.$$ So the error increases by 50%.", "100\\%", False),
]

# "The final answer is ..." written after every box is the response's last word; a box after
# the statement (or inside it) still counts.
FINAL_STATEMENT_AFTER_BOXES = [
    ("the interest is $\\boxed{200}$, then $\\boxed{255}$. Final Answer: The final answer is $10,455$.", "10455", True),
    ("the interest is $\\boxed{200}$, then $\\boxed{255}$. Final Answer: The final answer is $10,455$.", "255", False),
    ("Final Answer: The final answer is $7$. On reflection it is $\\boxed{8}$.", "8", True),  # the box is later
    ("Final Answer: The final answer is $7$. On reflection it is $\\boxed{8}$.", "7", False),
    ("so $\\boxed{3}$. Then the answer is 4, since ...", "3", True),  # only "final answer" is a closing statement
    ('it lies between $\\boxed{12\\text{ and }13}$. Final Answer: The final answer is "$12$ and $13$".', "12, 13", True),
    ('it lies between $\\boxed{12\\text{ and }13}$. Final Answer: The final answer is "$12$ and $14$".', "12, 13", False),
]


# A chain `a = b = c` asserts all its members equal and arrives at the last one, on either side.
CHAINS = [
    ("$0$", "$x = y = 0$", True),
    ("$1$", "$x = y = 0$", False),
    ("$x = 5 + 6 = 11$", "11", True),
    ("$x = 5 + 6 = 12$", "11", False),
    ("$5$", "$x + y = 5$", False),  # one `=` with an expression on the left stays an equation
]


@pytest.mark.parametrize(("response", "reference", "accepted"), CHAINS)
def test_chain_is_its_last_member(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), ESCAPED_DOLLAR)
def test_escaped_dollar_is_not_a_delimiter(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), TOP_LEVEL_EQUALS)
def test_equals_inside_braces_does_not_split(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), FALLBACK_BY_POSITION)
def test_later_fallback_wins(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), FINAL_STATEMENT_AFTER_BOXES)
def test_final_statement_after_boxes(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


def test_final_statement_does_not_apply_in_strict_mode() -> None:
    text = "so $\\boxed{255}$. Final Answer: The final answer is $10,455$."
    assert extract_answer(text, strict=True).answer == "255"  # strict: only boxes and tags count
    assert extract_answer(text, boxed="first").answer == "255"
    assert extract_answer(text).source == "final_answer"
