"""Output judges: (judge, expected, actual, passes) tables, and testlib checker exit codes."""

from __future__ import annotations

import math

import pytest

from rewardlab.verify.code.judges import (
    Exact,
    FloatTokens,
    Lines,
    Tokens,
    TokenSet,
    checker_judgement,
    close_enough,
    make_judge,
)


@pytest.mark.parametrize(
    ("judge", "expected", "actual", "passes"),
    [
        (Exact(), "1 2\n", "1 2\n", True),
        (Exact(), "1 2\n", "1 2", False),
        (Exact(), "1 2\n", "1  2\n", False),
        (Lines(), "1 2\n3\n", "1 2   \n3\n\n\n", True),
        (Lines(), "1 2\n3\n", "1 2\r\n3\r\n", True),
        (Lines(), "1 2\n3\n", "1  2\n3\n", False),  # spaces inside a line count
        (Lines(), "1\n2\n", "1 2\n", False),
        (Tokens(), "1 2\n3\n", "1\n2 3", True),
        (Tokens(), "1 2 3", "1 2", False),
        (Tokens(), "YES", "yes", False),
        (FloatTokens(abs_tol=1e-6, rel_tol=1e-6), "0.333333", "0.3333334", True),
        (FloatTokens(abs_tol=1e-6, rel_tol=1e-6), "1000000.0", "1000000.9", True),  # relative
        (FloatTokens(abs_tol=1e-6, rel_tol=1e-6), "1000000.0", "1000002.0", False),
        (FloatTokens(abs_tol=1e-6, rel_tol=0), "0.5", "0.500002", False),
        (FloatTokens(), "2 0.5", "2 5e-1", True),
        (FloatTokens(), "Case 1: 0.5", "Case 1: 0.5000001", True),
        (FloatTokens(), "Case 1: 0.5", "case 1: 0.5", False),  # words stay exact
        (FloatTokens(), "0.5", "abc", False),
        (FloatTokens(), "0.5", "nan", False),
        (FloatTokens(), "inf", "inf", True),
        (FloatTokens(), "1 2", "1", False),
        (TokenSet(), "1 2 3", "3\n2 1", True),
        (TokenSet(), "1 1 2", "1 2 2", False),  # a multiset by default
        (TokenSet(multiset=False), "1 1 2", "1 2 2", True),
        (TokenSet(case_sensitive=False), "Yes No", "no YES", True),
        (TokenSet(), "1 2", "1 2 4", False),
    ],
)
def test_judges(judge: object, expected: str, actual: str, passes: bool) -> None:
    verdict = judge.judge(expected, actual)  # type: ignore[attr-defined]
    assert verdict.passed is passes
    assert verdict.score == float(passes)
    assert bool(verdict.detail) is not passes  # a failure says why


def test_float_tolerance_is_relative_to_the_reference_like_testlib() -> None:
    # 1.105 is within 10% of itself from 1.0 (math.isclose scales by the larger value), but not
    # within 10% of the reference 1.0, which is what testlib's doubleCompare asks
    assert math.isclose(1.0, 1.105, rel_tol=0.1, abs_tol=0.0)
    assert not close_enough(1.0, 1.105, abs_tol=0.0, rel_tol=0.1)
    assert close_enough(1.0, 1.095, abs_tol=0.0, rel_tol=0.1)


def test_unknown_judge_and_negative_tolerance_are_config_errors() -> None:
    with pytest.raises(ValueError, match="judge must be one of"):
        make_judge("fuzzy")
    with pytest.raises(ValueError, match="tolerances"):
        make_judge("float", abs_tol=-1.0)


@pytest.mark.parametrize(
    ("exit_code", "message", "passed", "score"),
    [
        (0, "ok 3 numbers", True, 1.0),
        (1, "wrong answer 2nd number differs", False, 0.0),
        (2, "expected a number", False, 0.0),
        (7, "points 0.25 half right", False, 0.25),
        (7, "0.5", False, 0.5),
        (7, "1.0 all", True, 1.0),
        (7, "3.5 more than full", True, 1.0),  # clipped to [0, 1]
    ],
)
def test_testlib_exit_codes(exit_code: int, message: str, passed: bool, score: float) -> None:
    verdict = checker_judgement(exit_code, message)
    assert verdict is not None and verdict.passed is passed and verdict.score == score


@pytest.mark.parametrize(("exit_code", "message"), [(3, "FAIL jury answer is wrong"), (7, "no number here"), (42, ""), (None, "")])
def test_a_failing_checker_is_not_a_verdict(exit_code: int | None, message: str) -> None:
    assert checker_judgement(exit_code, message) is None
