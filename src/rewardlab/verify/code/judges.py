"""Output judges: is a program's stdout a right answer to one test?

Pure comparisons run here, in the trusted process; a problem's own checker program runs in
the sandbox (`stdio.py`) with testlib's calling convention and exit codes. Each judge is a
frozen dataclass with `judge(expected, actual) -> Judgement`.

    >>> Lines().judge("3\\n", "3   \\n\\n").passed
    True
    >>> FloatTokens(abs_tol=1e-6, rel_tol=1e-6).judge("0.333333", "0.3333334").passed
    True
    >>> TokenSet().judge("1 2 3", "3\\n2 1").passed
    True
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from rewardlab.errors import ConfigError


@dataclass(frozen=True)
class Judgement:
    """One test's verdict from the judge: passed, a score in [0, 1] (partial credit), why."""

    passed: bool
    score: float
    detail: str = ""


class Judge(Protocol):
    @property
    def name(self) -> str: ...

    def judge(self, expected: str, actual: str) -> Judgement: ...


def _verdict(same: bool, expected: str, actual: str) -> Judgement:
    return Judgement(True, 1.0) if same else Judgement(False, 0.0, f"expected {expected[:80]!r}, got {actual[:80]!r}")


@dataclass(frozen=True)
class Exact:
    """Byte-for-byte equal (after decoding): for problems where whitespace is the answer."""

    name: str = "exact"

    def judge(self, expected: str, actual: str) -> Judgement:
        return _verdict(actual == expected, expected, actual)


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


@dataclass(frozen=True)
class Lines:
    """Line by line, ignoring trailing spaces on each line and blank lines at the end (what
    most judges call the default comparison). LiveCodeBench's grader is more lenient: see
    `official.LiveCodeBenchLines`."""

    name: str = "lines"

    def judge(self, expected: str, actual: str) -> Judgement:
        return _verdict(_lines(actual) == _lines(expected), expected, actual)


@dataclass(frozen=True)
class Tokens:
    """The same whitespace-separated tokens in the same order; line breaks do not matter
    (testlib's `wcmp`, the usual Codeforces checker)."""

    name: str = "tokens"

    def judge(self, expected: str, actual: str) -> Judgement:
        want, got = expected.split(), actual.split()
        if want == got:
            return Judgement(True, 1.0)
        for i, (w, g) in enumerate(zip(want, got, strict=False)):
            if w != g:
                return Judgement(False, 0.0, f"token {i + 1}: expected {w[:40]!r}, got {g[:40]!r}")
        return Judgement(False, 0.0, f"expected {len(want)} tokens, got {len(got)}")


# what testlib's `stringToDouble` reads as a double (testlib.h): only the characters 0-9 . e E + -,
# and sscanf("%lf") must consume all of them; "nan", "inf" and hex are not numbers to testlib
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
TESTLIB_EPSILON = 1e-15  # doubleCompare adds it to the allowed error before comparing


def _testlib_infinite(value: float) -> bool:
    return value > 1e300 or value < -1e300  # __testlib_isInfinite: beyond 1e300 counts as infinite


def close_enough(expected: float, actual: float, *, abs_tol: float, rel_tol: float) -> bool:
    """testlib's `doubleCompare(expected, result, error)` (testlib.h), with the error split in
    two: within `abs_tol` + 1e-15 of the reference, or inside the interval
    [expected * (1 - e), expected * (1 + e)] for e = `rel_tol` + 1e-15 (relative to the
    reference, not to the larger of the two as `math.isclose` takes it). NaN matches only NaN;
    a value beyond +-1e300 counts as infinite and matches only an infinite one of its sign.
    With `abs_tol == rel_tol` it is testlib's function exactly."""
    abs_error, rel_error = abs_tol + TESTLIB_EPSILON, rel_tol + TESTLIB_EPSILON
    if math.isnan(expected):
        return math.isnan(actual)
    if _testlib_infinite(expected):
        return _testlib_infinite(actual) and (actual > 0) == (expected > 0)
    if math.isnan(actual) or _testlib_infinite(actual):
        return False
    if abs(actual - expected) <= abs_error:
        return True
    low, high = expected * (1.0 - rel_error), expected * (1.0 + rel_error)
    return min(low, high) <= actual <= max(low, high)


@dataclass(frozen=True)
class FloatTokens:
    """Tokens in order; where the expected token is a number (as testlib reads one), the
    answer's must be a number within the tolerance (`close_enough`: testlib's `doubleCompare`,
    absolute OR relative, as `rcmp6` / `rcmp9` with abs_tol = rel_tol = 1e-6 / 1e-9); other
    tokens must be equal."""

    abs_tol: float = 1e-6
    rel_tol: float = 1e-6
    name: str = "float"

    def __post_init__(self) -> None:
        if not (self.abs_tol >= 0 and self.rel_tol >= 0):
            raise ConfigError(f"float judge tolerances must be >= 0, got abs_tol={self.abs_tol}, rel_tol={self.rel_tol}")

    def judge(self, expected: str, actual: str) -> Judgement:
        want, got = expected.split(), actual.split()
        if len(want) != len(got):
            return Judgement(False, 0.0, f"expected {len(want)} tokens, got {len(got)}")
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            if _NUMBER.fullmatch(w):
                if not _NUMBER.fullmatch(g):
                    return Judgement(False, 0.0, f"token {i + 1}: expected a number near {w[:40]}, got {g[:40]!r}")
                if not close_enough(float(w), float(g), abs_tol=self.abs_tol, rel_tol=self.rel_tol):
                    return Judgement(False, 0.0, f"token {i + 1}: {g[:40]} is not within abs {self.abs_tol:g} / rel {self.rel_tol:g} of {w[:40]}")
            elif w != g:
                return Judgement(False, 0.0, f"token {i + 1}: expected {w[:40]!r}, got {g[:40]!r}")
        return Judgement(True, 1.0)


@dataclass(frozen=True)
class TokenSet:
    """The same tokens in any order (as a multiset unless `multiset=False`): for "print the
    elements in any order" problems."""

    multiset: bool = True
    case_sensitive: bool = True
    name: str = "token_set"

    def judge(self, expected: str, actual: str) -> Judgement:
        want, got = expected.split(), actual.split()
        if not self.case_sensitive:
            want, got = [t.lower() for t in want], [t.lower() for t in got]
        same = Counter(want) == Counter(got) if self.multiset else set(want) == set(got)
        if same:
            return Judgement(True, 1.0)
        missing = (Counter(want) - Counter(got)) if self.multiset else Counter(set(want) - set(got))
        extra = (Counter(got) - Counter(want)) if self.multiset else Counter(set(got) - set(want))
        return Judgement(False, 0.0, f"missing {sorted(missing)[:5]}, unexpected {sorted(extra)[:5]}")


JUDGES = {"exact": Exact, "lines": Lines, "tokens": Tokens, "float": FloatTokens, "token_set": TokenSet}


def make_judge(name: str, *, abs_tol: float = 1e-6, rel_tol: float = 1e-6) -> Judge:
    """The judge called `name`: "exact", "lines", "tokens", "float", "token_set", or a data
    set's own grader ("code_contests", "live_code_bench", "apps", "taco": `official.py`)."""
    # imported here: official.py builds on this module's Judgement
    from rewardlab.verify.code.official import OFFICIAL_JUDGES

    if name == "float":
        return FloatTokens(abs_tol=abs_tol, rel_tol=rel_tol)
    factory = JUDGES.get(name) or OFFICIAL_JUDGES.get(name)
    if factory is None:
        names = ", ".join([*JUDGES, *OFFICIAL_JUDGES])
        raise ConfigError(f"judge must be one of {names} (or a checker in the reference), got {name!r}")
    judge: Judge = factory()
    return judge


# testlib's exit codes (testlib.h, not built with CONTESTER): what a checker's status means.
CHECKER_OK, CHECKER_WA, CHECKER_PE, CHECKER_FAIL, CHECKER_POINTS = 0, 1, 2, 3, 7
_POINTS = re.compile(r"^\s*(?:points\s+)?([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def checker_judgement(exit_code: int | None, message: str) -> Judgement | None:
    """A testlib-style checker's verdict from its exit code and message (its stderr); None
    when the checker itself failed (exit 3 `_fail`, or anything unknown): that is an error
    of the problem, never a wrong answer. Exit 7 is partial credit: the first number of the
    message is the score in [0, 1] (testlib's `quitp`)."""
    message = message.strip()
    if exit_code == CHECKER_OK:
        return Judgement(True, 1.0, message[:200])
    if exit_code in (CHECKER_WA, CHECKER_PE):
        kind = "wrong answer" if exit_code == CHECKER_WA else "presentation error"
        return Judgement(False, 0.0, f"checker: {kind}: {message[:200]}")
    if exit_code == CHECKER_POINTS and (match := _POINTS.match(message)):
        score = min(1.0, max(0.0, float(match.group(1))))
        return Judgement(score >= 1.0, score, f"checker: points {score:g}: {message[:200]}")
    return None
