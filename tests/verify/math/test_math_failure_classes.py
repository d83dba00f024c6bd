"""The failure classes of responses never seen in tuning: (response, reference, accepted) tables.

Rows come from public graders' labelled tests (Math-Verify 0.9.0 `tests/`; see
external/README.md), from the Minerva answer format
(Lewkowycz et al. 2022, "Final Answer: The final answer is $X$. I hope it is correct.") and from
MATH gold answers' own spellings; each has its adversarial counterpart (a wrong answer in the
same shape must not be accepted).
"""

from __future__ import annotations

import pytest

from rewardlab.core import Sample
from rewardlab.verify.math import MathAnswer

REWARD = MathAnswer()


def _accepted(response: str, reference: str) -> bool:
    return REWARD.score(Sample(prompt="", response=response, reference=reference)).score == 1.0


MINERVA = [
    ("Final Answer: The final answer is 7.78. I hope it is correct.", "7.78", True),
    ("Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", "0.75", True),
    ("Final Answer: The final answer is 7.79. I hope it is correct.", "7.78", False),
    ("Final Answer: The largest $n$ is 34.", "34", True),  # Math-Verify test_math_extraction_additional_cases
    ("Final Answer: The largest $n$ is 35.", "34", False),
]
WHOLE_RESPONSE = [
    ("x+1", "x+1", True),
    ("x+1", "1", False),  # the last-number fallback must not take the 1
    ("\\frac{1}{2}", "0.5", True),
    ("\\frac{1}{2}", "2", False),
    ("\\frac{10}{9}", "10/9", True),  # Math-Verify test_simple_fraction_notation
    ("AZYUK2A", "2", False),  # Math-Verify test_number_extraction: a 2 inside a word is no answer
    ("the code is x2", "2", False),
]
NAMED_SIDES = [
    ("$(3,2)$", "$(p,q)=(3,2)$", True),  # Math-Verify test_numina_cases
    ("$(3,3)$", "$(p,q)=(3,2)$", False),
    ("$$1$$", "$$f(x)=1$$", True),  # Math-Verify test_open_thoughts
    ("$$1$$", "$$|AB|=1$$", True),
    ("$$f(y) = y$$", "$$f(y) = y$$", True),
    ("$f(x) = 1$", "1", True),
    ("$f(x) = 2$", "1", False),
    ("$5$", "x+y=5", False),  # `x + y = 5` is an equation (a line), not the value 5
    ("$x = 5+5+1 = 11$", "$x = 11$", True),  # Math-Verify test_relations_math
    ("$\\boxed{4, 5}$", "$AB=4,CD=5$", True),  # Math-Verify test_numina_cases
]
MULTIPLE_BOXES = [
    ("$$\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}$$", "$$(2, 2), (6, 2)$$", True),  # test_open_thoughts
    ("$$\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 3)}$$", "$$(2, 2), (6, 2)$$", False),
    ("$\\boxed{1,2}$", "$\\boxed{1}\\boxed{2}$", True),  # test_math_extraction_additional_cases: a gold in two boxes
    ("$\\boxed{2}$", "$\\boxed{1}\\boxed{2}$", False),  # not cut to its last box
    ("$\\boxed{1,2}$", "\\boxed{1} papers and \\boxed{2} bins", True),  # test_open_thoughts
    ("$\\boxed{1,2}$", "\\boxed{1} no no no no no \\boxed{2}", False),  # test_open_thoughts
    ("\\boxed{8} or \\boxed{9}", "9", False),  # still a hedge against a one-part gold
    ("$21,16,11$", "$21,16$ or $11$", True),  # test_numina_cases: a gold's "or" lists its parts
    ("$21$", "$21,16$ or $11$", False),  # one part of three is incomplete
]
MATRICES = [
    ("$\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}$", "\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", True),
    ("$\\begin{pmatrix} 3 \\\\ 2 \\\\ 1 \\end{pmatrix}$", "\\begin{pmatrix} 1 \\\\ 2 \\\\ 3 \\end{pmatrix}", False),  # the row break survives `\ `
    ("$\\begin{pmatrix} 1 \\end{pmatrix}$", "\\begin{pmatrix} 1 \\\\ 2 \\\\ 3 \\end{pmatrix}", False),
    ("$\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}$", "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", True),
    ("$\\begin{pmatrix}1&2&3&4\\end{pmatrix}$", "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", False),  # 1x4 is not 2x2
    ("$\\begin{pmatrix}1&2\\\\3\\\\4\\end{pmatrix}$", "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", False),
    ("Special matrix: $ \\left[\\begin{array}{cc}1 & 2 \\\\3 & 4\\end{array}\\right] $", "$\\begin{pmatrix}1 & 2 \\\\3 & 4\\end{pmatrix}$", True),  # test_matrix_extraction
    ("$\\begin{vmatrix}1&2\\\\3&4\\end{vmatrix}$", "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", False),  # a determinant
]
NUMBERS_AND_UNITS = [
    ("\\boxed{11111111100}", "11,\\! 111,\\! 111,\\! 100", True),  # MATH's spelling of thousands
    ("\\boxed{11,\\! 111,\\! 111,\\! 100}", "11111111100", True),
    ("\\boxed{11,\\! 111,\\! 111,\\! 101}", "11111111100", False),
    ("\\boxed{32, 349}", "\\boxed{32349}", False),  # test_math_extraction_additional_cases: a space makes a list
    ("The distance is $\\boxed{125\\textnormal{ miles}}.$", "$125$ miles", True),  # test_latex_notation_math
    ("\\boxed{12\\textbf{ meters}}", "12", True),
    ("\\boxed{13\\textbf{ meters}}", "12", False),
]
RELATIONS = [
    ("Thus $x <= 2$ is our answer.", "$x \\leq 2$", True),  # Math-Verify test_relations_math
    ("Thus $x <= 2$ is our answer.", "2", False),  # an inequality is not its bound
    ("The solution is $x != 5$", "$x \\neq 5$", True),
    ("$(0,1)$", "$0<f(x)<1$", True),  # test_numina_cases
    ("${-2021, 2021}$", "$\\pm 2021$", True),  # test_yujianll
    ("$2021$", "$\\pm 2021$", False),
]


@pytest.mark.parametrize(("response", "reference", "accepted"), MINERVA)
def test_minerva_final_answer_format(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), WHOLE_RESPONSE)
def test_whole_response_is_read_before_any_fallback(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), NAMED_SIDES)
def test_named_left_sides_and_equations(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), MULTIPLE_BOXES)
def test_several_boxes_for_several_parts(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), MATRICES)
def test_matrices(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), NUMBERS_AND_UNITS)
def test_thousands_and_text_units(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted


@pytest.mark.parametrize(("response", "reference", "accepted"), RELATIONS)
def test_relations_are_answers_as_written(response: str, reference: str, accepted: bool) -> None:
    assert _accepted(response, reference) is accepted
