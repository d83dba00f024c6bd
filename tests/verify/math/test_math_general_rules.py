"""General rules behind the external cases rewardlab used to miss: each rule, its own cases, and
the wrong answers in the same shape that the rule must not let through.

The rules are written from what they mean (docs/math.md), not from the external strings: a
rule is kept only when it is right for every answer of its shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardlab.core import Sample
from rewardlab.verify.math import MathAnswer, check, extract_answer

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
    ("$\\frac{n(n+1)}{2}$", "$\\sum_{k=1}^{n} k$", True),  # a sum with a symbolic bound, sampled at integers
    ("$\\frac{n(n-1)}{2}$", "$\\sum_{k=1}^{n} k$", False),
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
    ("so $\\boxed{3}$. I hope the final answer is correct.", "3", True),  # a statement without maths states no answer
    ("so $\\boxed{3}$. So the final answer is consistent with the check above.", "3", True),
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


# A gold's boxes separated only by spacing or symbols are the parts of one answer; words end it.
GOLD_BOX_GLUE = [
    ("${7 kg, 4}$", "$\\boxed{7 kg} ++ \\boxed{4}$", True),
    ("${7 kg, 5}$", "$\\boxed{7 kg} ++ \\boxed{4}$", False),
    ("$4$", "$\\boxed{7 kg} ++ \\boxed{4}$", False),  # not cut to the last box
    ("$\\boxed{1, 2}$", "\\boxed{1} / \\boxed{2}", True),
    ("$\\boxed{1, 2}$", "\\boxed{1} so we get \\boxed{2}", False),  # words: only the last box is the gold
    ("$\\boxed{2}$", "\\boxed{1} so we get \\boxed{2}", True),
]

# A gold written as a worked solution that ends "The final answer is $X$." is X.
GOLD_STATEMENT = [
    ("so the loss is $\\boxed{28\\%}$", "The value drops $10\\%$ then $20\\%$. Final Answer: The final answer is $28 \\%$. I hope it is correct.", True),
    ("so the loss is $\\boxed{30\\%}$", "The value drops $10\\%$ then $20\\%$. Final Answer: The final answer is $28 \\%$. I hope it is correct.", False),
    ("$\\boxed{20}$", "The value drops $10\\%$ then $20\\%$. Final Answer: The final answer is $28 \\%$. I hope it is correct.", False),
]


@pytest.mark.parametrize(("response", "reference", "accepted"), GOLD_BOX_GLUE)
def test_gold_boxes_joined_by_symbols(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), GOLD_STATEMENT)
def test_gold_worked_solution_is_its_final_statement(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


# An inequality in |x| describes a symmetric set of reals (compared when the other answer is
# written as intervals); the brackets follow the relations.
ABSOLUTE_VALUE_INEQUALITIES = [
    ("$\\left[-2, -1\\right] \\cup \\left[1, 2\\right]$", "$1 \\leq |x| \\leq 2$", True),
    ("$(-2, -1) \\cup (1, 2)$", "$1 \\leq |x| \\leq 2$", False),  # open ends for a closed band
    ("$[1, 2]$", "$1 \\leq |x| \\leq 2$", False),  # half the set
    ("$(-3, 3)$", "$|x| < 3$", True),
    ("$[-3, 3]$", "$|x| < 3$", False),
    ("$(-\\infty, -1] \\cup [1, \\infty)$", "$|t| \\ge 1$", True),
    ("$[1, \\infty)$", "$|t| \\ge 1$", False),
    ("$(-\\infty, \\infty)$", "$|x| > -1$", True),  # every real number
    ("$(-1, 1)$", "$|x| > -1$", False),
    ("$(-2, -1) \\cup (1, 2)$", "$2 > |x| > 1$", True),
    ("$(-a, a)$", "$|x| < a$", False),  # a symbolic bound: its sign is unknown, no reading
]


@pytest.mark.parametrize(("response", "reference", "accepted"), ABSOLUTE_VALUE_INEQUALITIES)
def test_absolute_value_inequality_is_a_symmetric_set(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


_A = "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}"
_B = "\\begin{pmatrix}5 & 6 \\\\ 7 & 8\\end{pmatrix}"
# Arithmetic on matrices is evaluated (sympy), entry by entry against the other answer; two
# matrices side by side are never read as one.
MATRIX_ARITHMETIC = [
    (f"The sum is ${_A} + {_B}$", "\\begin{pmatrix}6 & 8 \\\\ 10 & 12\\end{pmatrix}", True),
    (f"The sum is ${_A} + {_B}$", "\\begin{pmatrix}6 & 8 \\\\ 10 & 13\\end{pmatrix}", False),
    (f"The product is ${_A} {_B}$", "\\begin{pmatrix}19 & 22 \\\\ 43 & 50\\end{pmatrix}", True),
    (f"The product is ${_A} {_B}$", "\\begin{pmatrix}23 & 34 \\\\ 31 & 46\\end{pmatrix}", False),  # B A, not A B
    (f"The sum is ${_A} + {_B}$", "\\begin{pmatrix}1 & 2 & 5 & 6 \\\\ 3 & 4 & 7 & 8\\end{pmatrix}", False),  # not the two glued
    ("$\\boxed{2\\begin{pmatrix}1 \\\\ 2\\end{pmatrix}}$", "\\begin{pmatrix}2 \\\\ 4\\end{pmatrix}", True),
]


@pytest.mark.parametrize(("response", "reference", "accepted"), MATRIX_ARITHMETIC)
def test_matrix_arithmetic_is_evaluated(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


# Values assigned to distinct names are a tuple in the order written; `;` separates solutions.
ASSIGNMENT_TUPLES = [
    ("$(3,4)$", "$x=3, y=4$", True),
    ("$(4,3)$", "$x=3, y=4$", False),  # the names fix the order
    ("$4, 3$", "$x=3, y=4$", False),
    ("$(1,2),(3,4)$", "$a=1,b=2;a=3,b=4$", True),
    ("$(3,4),(1,2)$", "$a=1,b=2;a=3,b=4$", True),  # solutions in any order
    ("$(2,1),(3,4)$", "$a=1,b=2;a=3,b=4$", False),
    ("$(1,2)$", "$a=1,b=2;a=3,b=4$", False),  # one solution of two
    ("$y=4, x=3$", "$x=3, y=4$", True),  # both named: matched by name
    ("$2, 1$", "$x=1, x=2$", True),  # one unknown, two values: a set, not a tuple
]


@pytest.mark.parametrize(("response", "reference", "accepted"), ASSIGNMENT_TUPLES)
def test_named_values_are_a_tuple_in_order(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


# `a\frac{b}{c}` with a proper fraction is the mixed number a + b/c, on either side; a decimal
# for it follows the significant-figure rule like any decimal for an exact value.
MIXED_NUMBERS = [
    ("9999\\frac{6}{7}", "9999.857142857143", True),
    ("9999.857142857143", "9999\\frac{6}{7}", True),
    ("9999\\frac{6}{7}", "9999 \\frac{6}{7}", True),  # spaced
    ("9999\\frac{6}{7}", "\\frac{69999}{7}", True),
    ("9999\\frac{6}{7}", "9999.86", True),  # a correct rounding with 6 figures
    ("9999\\frac{6}{7}", "9999.85", False),  # not its rounding
    ("9999\\frac{6}{7}", "9999", False),
    ("9999\\frac{6}{7}", "10000", False),
    ("9999\\frac{6}{7}", "\\frac{6}{7} \\cdot 9999", False),  # the product is another number
    ("-2\\frac{1}{2}", "-2.5", True),  # the sign is the whole number's
    ("-2\\frac{1}{2}", "-1.5", False),
    ("2\\frac{3}{2}", "3", True),  # an improper fraction: no mixed numeral, a product
    ("2\\frac{3}{2}", "3.5", False),
    ("7\\frac{3}{4}", "7 3/4", True),  # plain text: a whole number, a space, a proper fraction
    ("7.75", "7 3/4", True),
    ("73/4", "7 3/4", False),  # never the digits run together
    ("(1, 2.75)", "(1, 2 3/4)", True),
    ("1000", "1 000", True),  # no slash: a thousands group, as before
]


@pytest.mark.parametrize(("reference", "candidate", "equivalent"), MIXED_NUMBERS)
def test_mixed_number_is_whole_plus_proper_fraction(reference: str, candidate: str, equivalent: bool) -> None:
    assert check(reference, candidate).equivalent is equivalent


SHARED_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "qwen25-math-cot-100.jsonl"


def test_mixed_number_and_its_decimal_in_the_real_data_are_one_answer() -> None:
    """idx 72 of the shared Qwen2.5-Math file: responses answer `9999.857142857143` and
    `9999\\frac{6}{7}` (one answer, the decimal a correct rounding) to the gold `10{,}000`."""
    if not SHARED_DATA.is_file():
        pytest.skip(f"{SHARED_DATA} is absent")
    row = next(r for r in map(json.loads, SHARED_DATA.read_text().splitlines()) if r["idx"] == 72)
    answers = {extract_answer(response, hedging="last").answer for response in row["code"]}
    decimal, mixed = "9999.857142857143", next(a for a in answers if a is not None and "frac" in a)
    assert decimal in answers
    assert check(decimal, mixed).equivalent and check(mixed, decimal).equivalent
    for response in row["code"]:
        if decimal in response:  # both wrong against the gold, as the dataset's labels say
            assert not _accepted(response, row["gt"])


# Number words are powers of ten; a leading article does not change a text answer.
WORDS = [
    ("3000000", "3 million", True),
    ("3000000", "3 \\text{ million}", True),
    ("2500000000", "2.5 billion", True),
    ("3000000", "4 million", False),
    ("3000", "3 million", False),  # not a unit to strip
    ("\\text{a triangle}", "\\text{triangle}", True),
    ("\\text{triangle}", "\\text{the triangle}", True),
    ("\\text{circle}", "\\text{a square}", False),
    ("\\text{A}", "\\text{B}", False),  # a lone letter is no article
]


@pytest.mark.parametrize(("reference", "candidate", "equivalent"), WORDS)
def test_number_words_and_articles(reference: str, candidate: str, equivalent: bool) -> None:
    assert check(reference, candidate).equivalent is equivalent
