"""Output judges: (judge, expected, actual, passes) tables, and testlib checker exit codes."""

from __future__ import annotations

import math
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from official_graders import official_files

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


def test_doubles_one_tolerance_apart_pass_as_in_testlib() -> None:
    # 0.100001 - 0.1 is 1.0000000000010001e-06 in doubles: testlib's 1e-15 slack lets it in
    assert FloatTokens(abs_tol=1e-6, rel_tol=1e-6).judge("0.1", "0.100001").passed
    assert not FloatTokens(abs_tol=1e-6, rel_tol=1e-6).judge("0.1", "0.1000011").passed


def double_compare_as_testlib(expected: float, result: float, max_double_error: float) -> bool:
    """testlib.h's doubleCompare, line by line (the C++ reads as it is written there)."""
    max_double_error += 1e-15

    def is_infinite(r: float) -> bool:
        return r > 1e300 or r < -1e300

    if math.isnan(expected):
        return math.isnan(result)
    if is_infinite(expected):
        if expected > 0:
            return result > 0 and is_infinite(result)
        return result < 0 and is_infinite(result)
    if math.isnan(result) or is_infinite(result):
        return False
    if abs(result - expected) <= max_double_error:
        return True
    minv = min(expected * (1.0 - max_double_error), expected * (1.0 + max_double_error))
    maxv = max(expected * (1.0 - max_double_error), expected * (1.0 + max_double_error))
    return minv <= result <= maxv


_doubles = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.1, 1e300, -1e301, 1e-7, 123456.789])


@settings(max_examples=3000, deadline=None)
@given(expected=_doubles, ulps=st.integers(-3, 3), step=st.sampled_from([0.0, 1e-9, 1e-6, 1e-5, 1e-4]), sign=st.sampled_from([-1, 1]),
       tol=st.sampled_from([0.0, 1e-9, 1e-6, 1e-4, 0.1]))  # fmt: skip
def test_float_closeness_is_double_compare_as_testlib(expected: float, ulps: int, step: float, sign: int, tol: float) -> None:
    # answers at and around the edge of the tolerance, where the 1e-15 slack decides
    result = expected + sign * step * max(1.0, abs(expected)) if math.isfinite(expected) else expected
    for _ in range(abs(ulps)):
        result = math.nextafter(result, math.copysign(math.inf, ulps))
    assert close_enough(expected, result, abs_tol=tol, rel_tol=tol) is double_compare_as_testlib(expected, result, tol)


def test_issue_style_sixth_decimal_answers_match_testlib() -> None:
    rng = random.Random(6)
    for _ in range(20_000):
        expected = round(rng.uniform(-1e3, 1e3), 6)
        result = round(expected + rng.choice([-1e-6, 1e-6]), 6)
        assert close_enough(expected, result, abs_tol=1e-6, rel_tol=1e-6) is double_compare_as_testlib(expected, result, 1e-6)


def test_float_judge_agrees_with_testlib_rcmp6_built_from_source(tmp_path: Path) -> None:
    """testlib's own rcmp6 checker, compiled from testlib.h, on the same answers."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    files = official_files("testlib", tmp_path)
    binary = tmp_path / "rcmp6"
    built = subprocess.run(["g++", "-O1", "-o", str(binary), str(files["rcmp6.cpp"])], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-2000:]
    rng = random.Random(7)
    pairs = [("0.1", "0.100001"), ("0.1", "0.1000011"), ("1e301", "1e302"), ("1e301", "-1e302"), ("5", "abc"),
             ("1000000", "1000001"), ("1000000", "1000001.1"), ("0", "1e-6"), ("0", "-1.000001e-6"), ("2.5 3", "2.5 3.0000005")]  # fmt: skip
    for _ in range(150):
        expected = rng.choice([round(rng.uniform(-10, 10), 6), round(rng.uniform(-1e7, 1e7), 2), 0.0])
        delta = rng.choice([0, 1e-6, -1e-6, 1.0000001e-6, 2e-6, 1e-7]) * rng.choice([1, max(1.0, abs(expected))])
        pairs.append((repr(expected), repr(expected + delta)))
    judge = FloatTokens(abs_tol=1e-6, rel_tol=1e-6)
    for expected, actual in pairs:
        for name, text in (("input.txt", ""), ("answer.txt", expected), ("output.txt", actual)):
            (tmp_path / name).write_text(text + "\n")
        verdict = subprocess.run([str(binary), "input.txt", "output.txt", "answer.txt"], cwd=tmp_path, capture_output=True, check=False)
        assert verdict.returncode in (0, 1, 2), verdict.stderr
        assert judge.judge(expected, actual).passed is (verdict.returncode == 0), (expected, actual, verdict.stderr)
