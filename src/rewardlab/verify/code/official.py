"""The data sets' own output comparisons, reproduced: a row of a data set is judged as its
published grader judges it, so a reward agrees with the numbers reported on that data set.

Each judge re-states one grader's rules in plain Python (no code of the data sets is loaded or
run here); the tests compare them with the graders' own code on the same outputs.

* `code_contests`: deepmind/code_contests `execution/tester_sandboxer.cc` (`OutputsMatch`,
  `SplitAndLowercase`, `ValuesMatch`, commit fa7a4f8): tokens split on space, \\n, \\t, \\r,
  \\v, ASCII-lowercased; equal token lists pass; otherwise the counts must match and each pair
  must be equal strings, or both numbers (abseil `SimpleAtod`, which also reads `0x` hex
  floats, `inf` and `nan`) less than 1e-5 apart.
* `live_code_bench`: LiveCodeBench `lcb_runner/evaluation/testing_util.py` (`grade_stdio`,
  `get_stripped_lines`, `convert_line_to_decimals`, commit 28fef95): the whole output is
  stripped, split on \\n and each line stripped; the line counts must match; a line passes
  when equal, or when both lines are whitespace-separated `Decimal`s and the lists are equal
  (`2.0` for `2`, `1e3` for `1000`; no tolerance).
* `apps`: hendrycks/apps `eval/testing_util.py` (`run_test`, standard-input branch, and
  `custom_compare_`, commit 362aedc): the output as `str.splitlines()`, then a cascade of
  relaxations (stripped text, stripped lines, numbers within numpy's `allclose`, each line's
  set of tokens in any line order, numbers rounded to 3 places).
* `taco`: FlagOpen/TACO `metrics/testing_util.py` (`compare_std_results`, commit 245eba3): the
  same cascade applied to the program's whole stdout as one string (as a subprocess with
  `text=True` returns it, so `\\r\\n` reads as `\\n`); where APPS walks lines, this one walks
  the string's characters, and the judge does the same.

The APPS and TACO cascades accept some outputs a human would call wrong (APPS ignores the
order of lines; TACO accepts `ab` for `a b`): that is the data set's own verdict. Pick
`judge="lines"` or `"tokens"` for a stricter one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from rewardlab.verify.code.judges import Judgement

# deepmind/code_contests SplitAndLowercase: absl::ByAnyChar(" \n\t\r\v"), SkipEmpty
_CC_SEPARATORS = re.compile("[ \n\t\r\v]+")
_ASCII_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# what abseil's from_chars (chars_format::general) reads as a whole double: decimal or exponent
# notation, a 0x hex float (absl takes the prefix in general mode, like strtod), inf/infinity,
# nan(...); never digit separators
_ABSL_DECIMAL = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|infinity|inf|nan(?:\([0-9a-z_]*\))?")
_ABSL_HEX = re.compile(r"0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?[0-9]+)?")
_ASCII_SPACE = " \t\n\v\f\r"  # absl::StripAsciiWhitespace
CODE_CONTESTS_TOLERANCE = 1e-5  # ValuesMatch's kDoublePrecision


def _fail(expected: str, actual: str, why: str = "") -> Judgement:
    return Judgement(False, 0.0, why or f"expected {expected[:80]!r}, got {actual[:80]!r}")


def absl_simple_atod(token: str) -> float | None:
    """abseil's `SimpleAtod` on a lowercased token: the double it reads, or None when the
    token is not one number (surrounding ASCII whitespace is ignored, one leading `+` allowed
    but not `+-`; overflow reads as an infinity)."""
    text = token.strip(_ASCII_SPACE)
    if text.startswith("+"):
        text = text[1:]
        if text.startswith("-"):
            return None
    body = text[1:] if text.startswith("-") else text
    sign = -1.0 if body is not text else 1.0
    if _ABSL_HEX.fullmatch(body):
        try:
            return sign * float.fromhex(body)
        except OverflowError:
            return sign * math.inf
    if not _ABSL_DECIMAL.fullmatch(body):
        return None
    if body.startswith("nan"):
        return math.nan
    return sign * float(body)  # correctly rounded, like from_chars; 1e999 -> inf as SimpleAtod returns


def _values_match(actual: str, expected: str) -> bool:
    a, b = absl_simple_atod(actual), absl_simple_atod(expected)
    if a is None or b is None:
        return actual == expected
    # every integer also reads as a double, so ValuesMatch's integer branch is never reached
    return abs(a - b) < CODE_CONTESTS_TOLERANCE


@dataclass(frozen=True)
class CodeContestsMatch:
    """deepmind/code_contests' `OutputsMatch` (module doc): `YES` for `Yes`, `1.5` for
    `1.500000000`, `5 6` for `5\\n6`."""

    name: str = "code_contests"

    def judge(self, expected: str, actual: str) -> Judgement:
        got = [t.translate(_ASCII_UPPER) for t in _CC_SEPARATORS.split(actual) if t]
        want = [t.translate(_ASCII_UPPER) for t in _CC_SEPARATORS.split(expected) if t]
        if got == want:
            return Judgement(True, 1.0)
        if len(got) != len(want):
            return _fail(expected, actual, f"expected {len(want)} tokens, got {len(got)}")
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            if not _values_match(g, w):
                return _fail(expected, actual, f"token {i + 1}: expected {w[:40]!r}, got {g[:40]!r}")
        return Judgement(True, 1.0)


def _stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def _decimal_lists_equal(a: list[Decimal], b: list[Decimal]) -> bool:
    try:
        return a == b
    except InvalidOperation:  # a signalling NaN refuses comparison: the grader errs, no pass
        return False


@dataclass(frozen=True)
class LiveCodeBenchLines:
    """LiveCodeBench's `grade_stdio` comparison (module doc): a leading blank line, leading
    spaces and `2.0` for `2` pass; a different line count does not."""

    name: str = "live_code_bench"

    def judge(self, expected: str, actual: str) -> Judgement:
        got, want = _stripped_lines(actual), _stripped_lines(expected)
        if len(got) != len(want):
            return _fail(expected, actual, f"expected {len(want)} lines, got {len(got)}")
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            if g == w:
                continue
            g_numbers, w_numbers = _decimals(g), _decimals(w)
            if g_numbers is None or w_numbers is None or not _decimal_lists_equal(g_numbers, w_numbers):
                return _fail(expected, actual, f"line {i + 1}: expected {w[:40]!r}, got {g[:40]!r}")
        return Judgement(True, 1.0)


def _allclose(actual: list[float], expected: list[float]) -> bool:
    """numpy.allclose(actual, expected) with its defaults (rtol 1e-5, atol 1e-8, relative to
    the second argument; infinities equal only themselves, NaN nothing)."""
    for a, b in zip(actual, expected, strict=True):
        close = abs(a - b) <= 1e-8 + 1e-5 * abs(b) if math.isfinite(a) and math.isfinite(b) else a == b
        if not close:
            return False
    return True


def _floats(items: list[str]) -> list[float] | None:
    try:
        return [float(item) for item in items]
    except ValueError:
        return None


def _numbers_close(actual: list[str], expected: list[str]) -> bool:
    a, b = _floats(actual), _floats(expected)
    return a is not None and b is not None and len(a) == len(b) and _allclose(a, b)


def _rounded(groups: Sequence[Sequence[str]]) -> set[frozenset[float]] | None:
    try:
        return {frozenset(round(float(t), 3) for t in group) for group in groups}
    except (ValueError, OverflowError):
        return None


def _cascade_tail(pieces: Sequence[Sequence[str]], expected_lines: list[str]) -> bool:
    """The shared end of the APPS/TACO cascades: `pieces` are the output's lines (APPS) or
    its tokens (TACO, whose grader then iterates each token's characters)."""
    expected_sets = [line.split() for line in expected_lines]
    if {frozenset(p) for p in pieces} == {frozenset(s) for s in expected_sets}:
        return True
    got, want = _rounded(pieces), _rounded(expected_sets)
    return got is not None and want is not None and got == want


def _expected_lines(expected: str) -> list[str]:
    """The graders' "try one more time without \\n": non-empty lines, then stripped."""
    return [line.strip() for line in expected.split("\n") if line]


@dataclass(frozen=True)
class AppsCompare:
    """hendrycks/apps' standard-input comparison (module doc)."""

    name: str = "apps"

    def judge(self, expected: str, actual: str) -> Judgement:
        output = actual.splitlines()
        target = expected.strip()
        if "\n".join(output).strip() == target or "\n".join(o.strip() for o in output).strip() == target:
            return Judgement(True, 1.0)
        lines = _expected_lines(expected)
        if output in ([expected], lines):
            return Judgement(True, 1.0)
        output = [o for o in output if o]
        if output == lines or _numbers_close(output, lines):
            return Judgement(True, 1.0)
        token_lines = [o.split() for o in output]
        if _cascade_tail([t for t in token_lines if t], lines):
            return Judgement(True, 1.0)
        return _fail(expected, actual)


@dataclass(frozen=True)
class TacoCompare:
    """FlagOpen/TACO's `compare_std_results` (module doc)."""

    name: str = "taco"

    def judge(self, expected: str, actual: str) -> Judgement:
        output = actual.replace("\r\n", "\n").replace("\r", "\n")  # subprocess text=True
        if output.strip() == expected.strip():
            return Judgement(True, 1.0)
        lines = _expected_lines(expected)
        if _numbers_close(list(output), lines):  # the grader iterates the string's characters
            return Judgement(True, 1.0)
        tokens = {t for t in output.split() if t}
        if _cascade_tail(list(tokens), lines):
            return Judgement(True, 1.0)
        return _fail(expected, actual)


OFFICIAL_JUDGES = {"code_contests": CodeContestsMatch, "live_code_bench": LiveCodeBenchLines, "apps": AppsCompare, "taco": TacoCompare}
