"""Answer extraction from full responses."""

from __future__ import annotations

import time

import pytest

from rewardlab.verify.math import ExtractOptions, extract_answer, find_boxed

CASES: list[tuple[str, str | None, str | None]] = [
    # (response, answer, source)
    ("so the answer is \\boxed{42}.", "42", "boxed"),
    ("\\boxed{1} then \\boxed{2}", "2", "boxed"),
    ("nested \\boxed{\\frac{1}{\\sqrt{2}}} ok", "\\frac{1}{\\sqrt{2}}", "boxed"),
    ("sets \\boxed{\\{1,2\\}}", "\\{1,2\\}", "boxed"),
    ("\\fbox{7}", "7", "boxed"),
    ("$\\boxed 5$", "5", "boxed"),
    ("letters \\boxed{B}", "B", "boxed"),
    ("<answer>17</answer>", "17", "answer_tag"),
    ("<answer>so \\boxed{18}</answer>", "18", "boxed"),
    ("\\boxed{1} <answer>19</answer>", "1", "boxed"),
    ("Thus the final answer is $\\frac{3}{4}$.", "\\frac{3}{4}", "final_answer"),
    ("The final answer is 12.\nDone", "12", "final_answer"),
    ("work...\nAnswer: 7", "7", "answer_line"),
    ("Natalia sold 48/2 = 24 clips.\n#### 72", "72", "answer_line"),
    ("so it is **12**", "12", "bold"),
    ("we get \\(x = 2 + 3 = 5\\)", "5", "last_latex"),
    ("we get $x = 3$", "x = 3", "last_latex"),
    ("we get $2 + 3 = 5$", "5", "last_latex"),
    ("so $f(2) = 7$", "7", "last_latex"),
    ("the count is 17 apples", "17", "last_number"),
    ("no answer here", None, None),
]


@pytest.mark.parametrize(("response", "answer", "source"), CASES)
def test_extraction_table(response: str, answer: str | None, source: str | None) -> None:
    got = extract_answer(response)
    assert (got.answer, got.source) == (answer, source)


def test_strict_mode_counts_only_boxed_or_tagged() -> None:
    assert extract_answer("the final answer is 12", strict=True).answer is None
    assert extract_answer("**12**", strict=True).answer is None
    assert extract_answer("<answer>12</answer>", strict=True).answer == "12"
    assert extract_answer("\\boxed{12}", ExtractOptions(strict=True)).answer == "12"


def test_priority_is_configurable() -> None:
    text = "Answer: 3\nbut \\boxed{4}"
    assert extract_answer(text).answer == "4"
    assert extract_answer(text, priority=("answer_line", "boxed")).answer == "3"


def test_first_box_on_request() -> None:
    assert extract_answer("\\boxed{1} \\boxed{2}", boxed="first").answer == "1"


def test_unknown_source_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="unknown extraction source"):
        ExtractOptions(priority=("boxed", "vibes"))


def test_unclosed_box_is_skipped() -> None:
    assert find_boxed("\\boxed{1} and \\boxed{2") == ["1"]


def test_megabyte_response_is_linear_time() -> None:
    text = "x" * 1_000_000 + " {{{{ $ \\( " * 1000 + "\\boxed{9}"
    started = time.perf_counter()
    assert extract_answer(text).answer == "9"
    no_box = "1 " * 500_000 + "**" * 1000
    assert extract_answer(no_box).source == "last_number"
    assert time.perf_counter() - started < 2.0


def test_hedged_box_is_extracted_whole() -> None:
    # extraction keeps "1 or 2"; the check (not extraction) refuses to read it as 2
    assert extract_answer("\\boxed{1 \\text{ or } 2}").answer == "1 \\text{ or } 2"
