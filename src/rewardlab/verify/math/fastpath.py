"""Numbers without sympy: integers, decimals, fractions, mixed numbers, percentages, scientific
notation, integer powers (`10^{9}`, `2^{-3}`) and repeating decimals, parsed into exact `Fraction`s in microseconds.

A whole number before a proper fraction, `9999\\frac{6}{7}`, is a mixed number (9999 + 6/7); before
an improper one (`2\\frac{3}{2}`) it is a product, since a mixed numeral's fraction is proper.

Comparison rules (`numbers_equal`), the reason each exists:

- Exact values (integers, fractions, repeating decimals) compare exactly: `1/2^99` is not
  `1/2^98`, and `0.0000001` is not `0.0000002` (both are exact decimals; Math-Verify rounds both
  to 6 decimals and calls them equal).
- Literals longer than `_MAX_DIGITS` (a 3,000-digit integer, a megabyte of digits) are exact
  too (`parse_long_number`): `int()` refuses more than 4300 digits and is quadratic, so their
  value is a pair of `decimal.Decimal` integers compared in an exact context (linear in the
  length; a product of two long literals is libmpdec's number-theoretic transform,
  n log n). The same rules below apply to them.
- A decimal written with `p` significant figures is read as a rounding *only* when that is the
  plausible reading, with a tolerance of half a unit in its last place (relative, by
  construction, never absolute):
  * the reference is a decimal with >= `min_sig_figs` figures (`13.18`): a more precise
    candidate (`13.1849`, or the exact `\\frac{659}{50}`) must round to it; a less precise one
    (`13.2`) is wrong;
  * the reference is exact (`\\frac{1}{3}`, or sympy's value of `\\sqrt{2}`): a decimal candidate
    with >= `PRINTED_SIG_FIGS` (6) figures that is its correct rounding is the value as printed
    (`0.333333` for 1/3); a shorter one is an approximation and wrong (the graders' convention:
    the question asked for the value), unless `CheckOptions.approximate` is set; then
    `min_sig_figs` figures will do (`0.333` yes, `0.33` no).
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from rewardlab.verify.math.normalize import comparison_key
from rewardlab.verify.math.options import CheckOptions

__all__ = ["MAX_LITERAL_CHARS", "SHORT_LITERAL_CHARS", "LongNum", "Num", "numbers_equal", "parse_literal", "parse_long_number", "parse_number"]

# A decimal correct to this many significant figures is an exact value as a computer prints it
# (`0.0833333333333333` for 1/12, `3.141593` for pi), not an approximation by hand; Math-Verify
# reads 6 decimal places the same way (absolutely).
PRINTED_SIG_FIGS = 6
_MAX_DIGITS = 400  # longer literals are `LongNum`s (int() is quadratic and has a 4300-digit cap)
_MAX_EXP = 400
SHORT_LITERAL_CHARS = _MAX_DIGITS  # `parse_number` takes up to this many characters
# A long literal's exponent may reach the screen's (`1e3000` against 3,001 digits): the exact
# value then has at most 10,000 more digits than its text, a bounded cost.
_MAX_LONG_EXP = 10_000
# Longest literal compared at all: a 2 MB literal costs ~0.1 s end to end (linear steps); past
# it no final answer is plausible and the text is not even cleaned.
MAX_LITERAL_CHARS = 2_000_000

# Exact arithmetic on long literals: any rounding traps (so a wrong answer is never produced);
# sizes stay bounded because operands are at most MAX_LITERAL_CHARS digits and exponents _MAX_EXP.
_EXACT = decimal.Context(
    prec=decimal.MAX_PREC,
    Emax=decimal.MAX_EMAX,
    Emin=decimal.MIN_EMIN,
    traps=[decimal.Inexact, decimal.Rounded, decimal.InvalidOperation, decimal.Overflow, decimal.DivisionByZero],
)

# A decimal mantissa: `12`, `12.`, `12.5`, `.5`. The old `\d+\.?\d*` could split a digit run
# between its two quantifiers in n ways and backtracked through all of them when the rest
# failed: quadratic on `777...7x`. Here each digit run has one quantifier, and it is possessive
# (`++`, `*+`, Python >= 3.11): it never gives digits back, which changes nothing accepted,
# because no token after a digit run can begin with a digit. So a match is one linear scan.
_DEC = r"(?:\d++(?:\.\d*+)?+|\.\d++)"
_NUM_RE = re.compile(
    rf"^(?P<sign>[-+]?)(?P<mant>{_DEC})"
    rf"(?:[eE](?P<eexp>[-+]?\d++)|(?:\\times10\^|\\cdot10\^|\*10\^|×10\^)(?P<exp>\{{[-+]?\d++\}}|[-+]?\d))?"
    r"(?P<pct>%)?$"
)
_REPEAT_RE = re.compile(r"^(?P<sign>-?)(?P<int>\d*)\.(?P<fixed>\d*)\\overline\{(?P<rep>\d+)\}(?P<pct>%)?$")
_FRAC_RE = re.compile(
    r"^(?P<sign>[-+]?)(?P<whole>\d+)?\\frac(?:\{(?P<a>[-+]?\d+)\}|(?P<a1>\d))(?:\{(?P<b>[-+]?\d+)\}|(?P<b1>\d))(?P<pct>%)?$"
)
_SLASH_RE = re.compile(r"^(?P<sign>[-+]?)(?P<a>\d+)/(?P<b>\d+)(?P<pct>%)?$")
# An integer power `10^{9}`, `2^{10}`, `10^{-3}` (the sign in front applies to the power: `-2^2` is -4).
_POWER_RE = re.compile(r"^(?P<sign>[-+]?)(?P<base>[1-9]\d{0,5})\^(?:\{(?P<e>[-+]?\d{1,4})\}|(?P<e1>\d))$")


@dataclass(frozen=True, slots=True)
class Num:
    """A parsed number.

    Attributes:
        value: the exact value as written (a percentage is stored without the /100).
        place: for a finite decimal literal, the power of ten of its last digit (`13.18` -> -2);
            None for exact forms (integers, fractions, repeating decimals).
        sig: significant figures of a decimal literal (0 for exact forms).
        percent: written with `%`.
    """

    value: Fraction
    place: int | None = None
    sig: int = 0
    percent: bool = False


@dataclass(frozen=True, slots=True)
class LongNum:
    """A literal longer than `_MAX_DIGITS`: value `num / den`, both integral `Decimal`s.

    Attributes:
        num: the signed numerator (a decimal literal's exact value, `den` then 1).
        den: the positive denominator.
        place, sig, percent: as in `Num`.
    """

    num: Decimal
    den: Decimal
    place: int | None = None
    sig: int = 0
    percent: bool = False


def _precision(mant: str, exp: int) -> tuple[int | None, int]:
    """(place, significant figures) of a decimal mantissa times 10^exp; (None, 0) if exact."""
    int_part, _, frac_part = mant.partition(".")
    if "." not in mant and exp >= 0:
        return None, 0  # an integer (possibly `3e5`): exact
    return -len(frac_part) + exp, max(len((int_part + frac_part).lstrip("0")), 1)


def _decimal(sign: str, mant: str, exp: int) -> Num:
    int_part, _, frac_part = mant.partition(".")
    value = Fraction(int(int_part or "0") * 10 ** len(frac_part) + int(frac_part or "0"), 10 ** len(frac_part))
    value *= Fraction(10) ** exp
    if sign == "-":
        value = -value
    place, sig = _precision(mant, exp)
    return Num(value, place, sig)


def parse_number(s: str) -> Num | None:
    """A `Num` for a plain numeric answer (already `clean`ed, spaces removed), else None."""
    if len(s) > _MAX_DIGITS or not s:
        return None
    m = _NUM_RE.match(s)
    if m:
        exp_text = m.group("exp") or m.group("eexp")
        exp = int(exp_text.strip("{}")) if exp_text else 0
        if abs(exp) > _MAX_EXP:
            return None
        num = _decimal(m.group("sign"), m.group("mant"), exp)
        return Num(num.value, num.place, num.sig, bool(m.group("pct"))) if m.group("pct") else num
    m = _FRAC_RE.match(s)
    if m:
        a = int(m.group("a") or m.group("a1"))
        b = int(m.group("b") or m.group("b1"))
        if b == 0:
            return None
        value = Fraction(a, b)
        if m.group("whole"):
            if a < 0 or b < 0:
                return None
            whole = int(m.group("whole"))
            # `12\frac{3}{5}` is the mixed number 12 3/5 (MATH's convention): a mixed numeral's
            # fraction is proper. `2\frac{3}{2}` or `2\frac{0}{5}` is none, so it is what
            # juxtaposition means everywhere else: a product.
            value = whole + value if 0 < a < b else whole * value
        return Num(-value if m.group("sign") == "-" else value, percent=bool(m.group("pct")))
    m = _SLASH_RE.match(s)
    if m:
        if int(m.group("b")) == 0:
            return None
        value = Fraction(int(m.group("a")), int(m.group("b")))
        return Num(-value if m.group("sign") == "-" else value, percent=bool(m.group("pct")))
    m = _REPEAT_RE.match(s)
    if m:
        return _repeating(m)
    m = _POWER_RE.match(s)
    if m:
        return _power(m)
    return None


def _power(m: re.Match[str]) -> Num | None:
    """`base^exp` exactly, when the value has at most `_MAX_DIGITS` digits (else sympy decides)."""
    base, exp = int(m.group("base")), int(m.group("e") or m.group("e1"))
    if abs(exp) * len(m.group("base")) > _MAX_DIGITS:
        return None
    value = Fraction(base) ** exp
    return Num(-value if m.group("sign") == "-" else value)


def _repeating(m: re.Match[str]) -> Num:
    """`0.1\\overline{6}` = 1/6: fixed part plus rep / (10^len(rep) - 1), shifted."""
    fixed, rep = m.group("fixed"), m.group("rep")
    value = Fraction(int(m.group("int") or "0"))
    if fixed:
        value += Fraction(int(fixed), 10 ** len(fixed))
    value += Fraction(int(rep), (10 ** len(rep) - 1) * 10 ** len(fixed))
    return Num(-value if m.group("sign") == "-" else value, percent=bool(m.group("pct")))


_EXP_MARKERS = ("\\times10^", "\\cdot10^", "*10^", "×10^", "e", "E")


def _digits(s: str) -> bool:
    return s.isascii() and s.isdigit()


def _long_exponent(marker: str, text: str) -> int | None:
    """The exponent after `marker`: `e-12`, `^{12}`, `^5` (unbraced after `^`: one digit, as in TeX)."""
    braced = text.startswith("{") and text.endswith("}")
    body = text[1:-1] if braced else text
    digits = body[1:] if body[:1] in "+-" else body
    if not _digits(digits) or len(digits) > 6 or (marker.endswith("^") and not braced and len(digits) > 1):
        return None
    exp = int(body)
    return exp if abs(exp) <= _MAX_LONG_EXP else None


def _long_ratio(body: str) -> tuple[str, str] | None:
    """(numerator, denominator) digit strings of `a/b` or `\\frac{a}{b}`, else None."""
    if body.startswith("\\frac{") and body.endswith("}"):
        a, sep, b = body[6:-1].partition("}{")
    else:
        a, sep, b = body.partition("/")
    return (a, b) if sep and _digits(a) and _digits(b) and b.strip("0") else None


def parse_long_number(s: str) -> LongNum | None:
    """A `LongNum` for a plain literal of any length up to `MAX_LITERAL_CHARS` (spaces removed):
    an integer or decimal with optional sign, exponent (`e5`, `\\times10^{5}`) and `%`, or a
    fraction `a/b`, `\\frac{a}{b}` of two integers; None for anything else. Used when either
    answer is longer than `SHORT_LITERAL_CHARS` (shorter ones are `parse_number`'s). Linear in
    `len(s)`: plain string scans."""
    if not s or len(s) > MAX_LITERAL_CHARS:
        return None
    percent = s.endswith("%")
    body = s[:-1] if percent else s
    sign = body[:1] if body[:1] in "+-" else ""
    body = body[len(sign) :]
    ratio = _long_ratio(body)
    if ratio is not None:
        return LongNum(Decimal(sign + ratio[0]), Decimal(ratio[1]), percent=percent)
    mant, exp = body, 0
    for marker in _EXP_MARKERS:
        head, sep, tail = body.partition(marker)
        if sep:
            found = _long_exponent(marker, tail)
            if found is None:
                return None
            mant, exp = head, found
            break
    int_part, _, frac_part = mant.partition(".")
    if not (int_part or frac_part) or not all(_digits(p) for p in (int_part, frac_part) if p):
        return None
    place, sig = _precision(mant, exp)
    num = Decimal(f"{sign}{int_part}{frac_part}E{exp - len(frac_part)}")  # exact: no context rounding
    return LongNum(num, Decimal(1), place, sig, percent)


def parse_literal(s: str) -> Num | LongNum | None:
    """`s` as a number literal of any length (read from its comparison key when `s` itself is
    not one, e.g. `1 000`): `parse_number`, else `parse_long_number`."""
    if len(s) > MAX_LITERAL_CHARS:
        return None
    found = parse_number(s) or parse_long_number(s)
    if found is None:
        key = comparison_key(s)
        if key != s:
            found = parse_number(key) or parse_long_number(key)
    return found


def _as_long(n: Num | LongNum) -> LongNum:
    if isinstance(n, LongNum):
        return n
    return LongNum(Decimal(n.value.numerator), Decimal(n.value.denominator), n.place, n.sig, n.percent)


def _readings(n: Num, opts: CheckOptions) -> list[Num]:
    """The values a number may stand for: `50%` is 50, 0.5 or both (`opts.percent`)."""
    if not n.percent:
        return [n]
    as_fraction = Num(n.value / 100, None if n.place is None else n.place - 2, n.sig)
    plain = Num(n.value, n.place, n.sig)
    return {"either": [plain, as_fraction], "strip": [plain], "fraction": [as_fraction]}[opts.percent]


def _long_readings(n: LongNum, opts: CheckOptions) -> list[LongNum]:
    """`_readings` for a `LongNum` (the same three percent conventions)."""
    if not n.percent:
        return [n]
    as_fraction = LongNum(n.num, _EXACT.multiply(n.den, 100), None if n.place is None else n.place - 2, n.sig)
    plain = LongNum(n.num, n.den, n.place, n.sig)
    return {"either": [plain, as_fraction], "strip": [plain], "fraction": [as_fraction]}[opts.percent]


def _same(a: Num | LongNum, b: Num | LongNum) -> bool:
    if isinstance(a, Num) and isinstance(b, Num):
        return a.value == b.value
    x, y = _as_long(a), _as_long(b)
    return _EXACT.compare(_EXACT.multiply(x.num, y.den), _EXACT.multiply(y.num, x.den)) == 0


def _rounds_to(exact: Num | LongNum, decimal: Num | LongNum) -> bool:
    """Whether `decimal` is `exact` rounded at its last place (half a unit either way)."""
    if decimal.place is None:
        return _same(exact, decimal)
    if isinstance(exact, Num) and isinstance(decimal, Num):
        return abs(exact.value - decimal.value) <= Fraction(1, 2) * Fraction(10) ** decimal.place
    x, d = _as_long(exact), _as_long(decimal)
    # |x.num/x.den - d.num/d.den| <= 5*10^(place-1), multiplied out by both (positive) denominators
    gap = _EXACT.abs(_EXACT.subtract(_EXACT.multiply(x.num, d.den), _EXACT.multiply(d.num, x.den)))
    half_unit = _EXACT.multiply(Decimal(f"5E{decimal.place - 1}"), _EXACT.multiply(x.den, d.den))
    return _EXACT.compare(gap, half_unit) <= 0


def _equal(ref: Num | LongNum, cand: Num | LongNum, opts: CheckOptions) -> bool:
    if _same(ref, cand):
        return True
    if ref.place is not None:
        if ref.sig < opts.min_sig_figs:
            return False  # `0.5`: too few figures to be read as a rounding; exact only
        if cand.place is not None and cand.place >= ref.place:
            return False  # candidate less (or as) precise than the reference, and different
        return _rounds_to(cand, ref)
    if cand.place is not None:  # a decimal for an exact value: its value printed, or a rounding
        figures = opts.min_sig_figs if opts.approximate else max(opts.min_sig_figs, PRINTED_SIG_FIGS)
        return cand.sig >= figures and _rounds_to(ref, cand)
    return False


def numbers_equal(ref: Num | LongNum, cand: Num | LongNum, opts: CheckOptions) -> bool:
    """Whether the candidate number equals the reference (rules in the module docstring)."""
    if isinstance(ref, Num) and isinstance(cand, Num):
        return any(_equal(r, c, opts) for r in _readings(ref, opts) for c in _readings(cand, opts))
    refs, cands = _long_readings(_as_long(ref), opts), _long_readings(_as_long(cand), opts)
    return any(_equal(r, c, opts) for r in refs for c in cands)
