"""Data sets' own graders (official.py): verdict tables from each grader's rules, and the same
judges against the graders' published code on the same (expected, actual) outputs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from official_graders import code_contests_verdicts, official_call_verdicts, official_verdicts

from rewardlab.verify.code.judges import make_judge
from rewardlab.verify.code.official import (
    AppsCompare,
    CodeContestsMatch,
    LiveCodeBenchLines,
    TacoCompare,
    absl_simple_atod,
)


@pytest.mark.parametrize(
    ("expected", "actual", "passes"),
    [
        ("YES\n", "Yes\n", True),  # tokens are lowercased
        ("1.500000000\n", "1.5", True),  # numbers within 1e-5
        ("5\n6\n", "5 6", True),  # line breaks are separators
        ("0.3333333\n", "0.33333", True),  # 3.3e-6 apart: within 1e-5
        ("0.33333\n", "0.333321", True),
        ("0.33333\n", "0.33332", False),  # 1.0000000000010001e-05 apart in doubles: not < 1e-5
        ("0.33333\n", "0.33331", False),  # 2e-5 apart
        ("0.5\n", "0.51", False),
        ("1 2\n", "1 2 3", False),
        ("100000\n", "100000.000001", True),
        ("7\n", "7.00002", False),  # 2e-5 apart
        ("inf\n", "INF", True),  # equal token lists pass before any number is read
        ("inf 1\n", "inf 1.0", False),  # inf - inf is NaN, never < 1e-5
        ("nan\n", "NaN", True),
        ("9007199254740993\n", "9007199254740992", True),  # both read as the same double
        ("1e5\n", "100000", True),
        ("0x10\n", "16", True),  # abseil reads a 0x hex float in general mode
        ("0x1.8p1\n", "3", True),
        ("0xg\n", "0", False),
        ("+5\n", "5", True),
        ("+-5\n", "-5", False),
        ("\f5", "5", True),  # \f is no separator, but SimpleAtod strips it
        ("caf\u00c9", "caf\u00e9", False),  # ASCII lowercasing only
    ],
)
def test_code_contests_outputs_match(expected: str, actual: str, passes: bool) -> None:
    assert CodeContestsMatch().judge(expected, actual).passed is passes


@pytest.mark.parametrize(
    ("token", "value"),
    [("1", 1.0), ("-2.5e3", -2500.0), (".5", 0.5), ("5.", 5.0), ("1e999", float("inf")), ("+7", 7.0),
     ("0x1p3", 8.0), ("-0x.8", -0.5), ("0x1p99999", float("inf")), ("0x", None), ("0xp1", None),
     ("1e", None), ("1_000", None), ("", None), ("-", None), ("+-1", None), ("--1", None), ("-+1", None)],
)  # fmt: skip
def test_absl_simple_atod_reads_what_abseil_reads(token: str, value: float | None) -> None:
    assert absl_simple_atod(token) == value


@pytest.mark.parametrize(
    ("expected", "actual", "passes"),
    [
        ("3\n4\n", "\n3\n4\n", True),  # a leading blank line: the whole output is stripped
        ("3 4\n", "   3 4", True),  # leading spaces on a line
        ("2\n", "2.0\n", True),  # numbers compared as Decimals
        ("1000\n", "1e3\n", True),
        ("0.1\n", "0.10000001\n", False),  # no tolerance
        ("3\n4\n", "3\n\n4\n", False),  # a blank line inside counts
        ("3 4\n", "3\n4\n", False),  # line structure counts
        ("3  4\n", "3 4\n", True),  # inside a line, numbers are split on any whitespace
        ("Yes\n", "YES\n", False),
        ("a b\n", "a  b\n", False),  # words: the stripped lines must be equal
        ("NaN\n", "NaN\n", True),  # equal lines before any Decimal
        ("NaN 1\n", "NaN 1.0\n", False),  # Decimal NaN equals nothing
        ("1\r\n2\r\n", "1\n2\n", True),  # each line is stripped of its \r
    ],
)
def test_live_code_bench_grade_stdio(expected: str, actual: str, passes: bool) -> None:
    assert LiveCodeBenchLines().judge(expected, actual).passed is passes


@pytest.mark.parametrize(
    ("expected", "actual", "apps", "taco"),
    [
        ("3\n", " 3\n", True, True),  # a leading space on a stdin problem
        ("1 2\n3\n", "1 2  \n  3", True, False),  # APPS strips each line; TACO only the whole
        ("1\n2\n", "2\n1\n", True, True),  # both compare sets of token sets, in any order
        ("1 2\n", "2 1\n", True, False),
        ("a b\n", "ab\n", False, True),  # TACO compares each token's characters
        ("0.5\n", "0.500001\n", True, False),  # numpy allclose on lines (APPS)
        ("1\n2\n", "12", False, True),  # TACO: each character read as a number
        ("1.0004\n", "1.0001\n", True, False),  # APPS: allclose, rtol 1e-5
        ("3\n", "4\n", False, False),
        ("YES\n", "yes\n", False, False),
        ("1 2\n", "1 2 3\n", False, False),
        ("1\r\n2\r\n", "1\r\n2\r\n", True, True),
    ],
)
def test_apps_and_taco_cascades(expected: str, actual: str, apps: bool, taco: bool) -> None:
    assert AppsCompare().judge(expected, actual).passed is apps
    assert TacoCompare().judge(expected, actual).passed is taco


def test_every_official_judge_is_reachable_by_name() -> None:
    for name in ("code_contests", "live_code_bench", "apps", "taco"):
        assert make_judge(name).name == name


def _fuzz_pairs(seed: int, count: int) -> list[tuple[str, str]]:
    """(expected, actual) outputs near each other in the ways graders normalise: number
    formats, case, spaces, blank lines, line breaks, order, \\r."""
    rng = random.Random(seed)
    words = ["yes", "YES", "Yes", "no", "-1", "0", "2", "2.0", "2.00001", "1e3", "1000", "0.5", ".5", "1_000", "inf",
             "nan", "NaN", "3.14159", "3.1416", "a", "ab", "b", "-0", "+3", "3", "1e-9", "12", "1"]  # fmt: skip

    def text() -> str:
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
        return "\n".join(lines) + rng.choice(["", "\n", "\n\n"])

    def variant(s: str) -> str:
        ops = [lambda t: t.upper(), lambda t: t.replace("\n", " "), lambda t: " " + t, lambda t: "\n" + t,
               lambda t: t.replace(" ", "  "), lambda t: t.replace("\n", "\r\n"), lambda t: "\n".join(reversed(t.split("\n"))),
               lambda t: t.replace(" ", ""), lambda t: t.replace("2", "2.0"), lambda t: t.rstrip(), lambda t: t + " ",
               lambda t: t.replace(" ", "\n"), lambda t: text()]  # fmt: skip
        for _ in range(rng.randint(0, 2)):
            s = rng.choice(ops)(s)
        return s

    pairs = []
    for _ in range(count):
        expected = text()
        pairs.append((expected, variant(expected)))
    return pairs


@pytest.mark.parametrize("grader", ["live_code_bench", "taco", "apps"])
def test_official_judges_agree_with_the_graders_own_code(grader: str, tmp_path: Path) -> None:
    pairs = [
        *_fuzz_pairs(43, 400),
        ("3\n", " 3\n"), ("3\n4\n", "\n3\n4\n"), ("2\n", "2.0\n"), ("a b\n", "ab\n"), ("1\n2\n", "2\n1\n"),
        ("0.5\n", "0.500001\n"), ("1\n2\n", "12"), ("NaN 1\n", "NaN 1.0\n"), ("", ""), ("", "\n"),
    ]  # fmt: skip
    official = official_verdicts(grader, pairs, tmp_path)
    judge = make_judge(grader)
    ours = [judge.judge(expected, actual).passed for expected, actual in pairs]
    differ = [(pair, theirs) for pair, mine, theirs in zip(pairs, ours, official, strict=True) if mine != theirs]
    assert not differ, f"{len(differ)} of {len(pairs)} differ from {grader}'s grader, e.g. {differ[:5]}"
    assert 0 < sum(official) < len(pairs)  # the pairs exercise both verdicts


def test_code_contests_judge_agrees_with_outputs_match_built_from_its_source(tmp_path: Path) -> None:
    table = [("YES\n", "Yes\n"), ("1.500000000\n", "1.5"), ("5\n6\n", "5 6"), ("0.33333\n", "0.33332"), ("inf 1\n", "inf 1.0"),
             ("9007199254740993\n", "9007199254740992"), ("0x10\n", "16"), ("+5\n", "5"), ("\f5", "5"), ("1e\n", "1"), ("0x1p3", "8"), ("0xA\n", "10"),
             ("-0x.8", "-0.5"), ("0x1p99999", "inf"), ("0x", "0"), ("+-1", "-1"), ("-+1", "1"), ("infinity", "inf"), ("nan(12)", "nan"),
             ("caf\u00c9", "caf\u00e9"), ("1e999\n", "1e998"), ("-nan\n", "nan"), (".5\n", "0.5"), ("5.\n", "5")]  # fmt: skip
    pairs = [*_fuzz_pairs(5, 400), *table]
    official = code_contests_verdicts(pairs, tmp_path)
    judge = CodeContestsMatch()
    differ = [(pair, theirs) for pair, theirs in zip(pairs, official, strict=True) if judge.judge(*pair).passed != theirs]
    assert not differ, f"{len(differ)} of {len(pairs)} differ from OutputsMatch, e.g. {differ[:5]}"
    assert 0 < sum(official) < len(pairs)


# (expected value as the row holds it, the function's answer as Python source)
CALL_CASES: list[tuple[object, str]] = [
    ([[[1, 2], [3, 4]]], "[(1, 2), (3, 4)]"), ([[1, 2], [3, 4]], "[(1, 2), (3, 4)]"), ([[[1, 2], [3]]], "[(1, 2), (3,)]"),
    ([[[1, 2]]], "((1, 2),)"), ([[1, 2]], "(1, 2)"), ([[3]], "[3]"), ([[3]], "3"), ([3, 9], "3"), ([3, 9], "9"),
    ([[]], "[]"), ([], "[]"), (5, "5"), (5, "5.0"), (5, "6"), ("a", "'a'"), (["a"], "'a'"), (["a", "b"], "['a', 'b']"),
    ({"1": 2}, "{1: 2}"), ({"1": 2}, "{'1': 2}"), ([{"1": 2}], "{1: 2}"), ({"x": 2}, "{'x': 2}"), ([None], "None"),
    ([[1.0]], "[1]"), (True, "1"), ([[[1, 2], [3, 4]]], "[[1, 2], (3, 4)]"), ([[["a", 1]]], "[('a', 1)]"),
    ([[[1, 2], [3, 4]]], "((1, 2), [3, 4])"), ([[1, 2]], "[[1, 2]]"), ([[[1, 2]]], "[[(1, 2)]]"),
]  # fmt: skip


def _rewardlab_call_verdicts(cases: list[tuple[object, str]]) -> list[bool]:
    import ast
    import json

    from rewardlab.verify.code.formats import read_reference

    verdicts = []
    for expected, answer in cases:
        ref = read_reference({"input_output": json.dumps({"fn_name": "f", "inputs": [[0]], "outputs": [expected]})})
        assert isinstance(ref, dict)
        namespace: dict[str, object] = {}
        exec(ref["tests"], namespace)
        value = ast.literal_eval(answer)
        try:
            namespace["check"](lambda _i, value=value: value)  # type: ignore[operator]
            verdicts.append(True)
        except AssertionError:
            verdicts.append(False)
    return verdicts


@pytest.mark.parametrize("grader", ["taco", "apps"])
def test_call_based_answers_agree_with_the_graders_own_code(grader: str, tmp_path: Path) -> None:
    official = official_call_verdicts(grader, CALL_CASES, tmp_path)
    ours = _rewardlab_call_verdicts(CALL_CASES)
    differ = [(case, theirs) for case, mine, theirs in zip(CALL_CASES, ours, official, strict=True) if mine != theirs]
    assert not differ, f"{len(differ)} of {len(CALL_CASES)} differ from {grader}'s grader: {differ}"
    assert 0 < sum(official) < len(CALL_CASES)
