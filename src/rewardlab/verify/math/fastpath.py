"""Numbers without sympy: integers, decimals, fractions, mixed numbers, percentages, scientific
notation and repeating decimals, parsed into exact `Fraction`s in microseconds.

A whole number before a proper fraction, `9999\\frac{6}{7}`, is a mixed number (9999 + 6/7); before
an improper one (`2\\frac{3}{2}`) it is a product, since a mixed numeral's fraction is proper.

Comparison rules (`numbers_equal`), the reason each exists:

- Exact values (integers, fractions, repeating decimals) compare exactly: `1/2^99` is not
  `1/2^98`, and `0.0000001` is not `0.0000002` (both are exact decimals; Math-Verify rounds both
  to 6 decimals and calls them equal).
- A decimal written with `p` significant figures is read as a rounding *only* when that is the
  plausible reading, with a tolerance of half a unit in its last place (relative, by
  construction, never absolute):
  * the reference is a decimal with >= `min_sig_figs` figures (`13.18`): a more precise
    candidate (`13.1849`, or the exact `\\frac{659}{50}`) must round to it; a less precise one
    (`13.2`) is wrong;
  * the reference is exact (`\\frac{1}{3}`, or sympy's value of `\\sqrt{2}`): a decimal candidate
    with >= `min_sig_figs` figures must be its correct rounding (`0.333` yes, `0.33` no).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from rewardlab.verify.math.options import CheckOptions

__all__ = ["Num", "numbers_equal", "parse_number"]

_MAX_DIGITS = 400  # longer literals go to the screen/sympy path (int() has a 4300-digit cap)
_MAX_EXP = 400

_DEC = r"(?:\d+\.?\d*|\.\d+)"
_NUM_RE = re.compile(
    rf"^(?P<sign>[-+]?)(?P<mant>{_DEC})"
    rf"(?:[eE](?P<eexp>[-+]?\d+)|(?:\\times10\^|\\cdot10\^|\*10\^|×10\^)(?P<exp>\{{[-+]?\d+\}}|[-+]?\d))?"
    r"(?P<pct>%)?$"
)
_REPEAT_RE = re.compile(r"^(?P<sign>-?)(?P<int>\d*)\.(?P<fixed>\d*)\\overline\{(?P<rep>\d+)\}(?P<pct>%)?$")
_FRAC_RE = re.compile(
    r"^(?P<sign>[-+]?)(?P<whole>\d+)?\\frac(?:\{(?P<a>[-+]?\d+)\}|(?P<a1>\d))(?:\{(?P<b>[-+]?\d+)\}|(?P<b1>\d))(?P<pct>%)?$"
)
_SLASH_RE = re.compile(r"^(?P<sign>[-+]?)(?P<a>\d+)/(?P<b>\d+)(?P<pct>%)?$")


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


def _decimal(sign: str, mant: str, exp: int) -> Num:
    int_part, _, frac_part = mant.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    value = Fraction(int(int_part or "0") * 10 ** len(frac_part) + int(frac_part or "0"), 10 ** len(frac_part))
    value *= Fraction(10) ** exp
    if sign == "-":
        value = -value
    if "." not in mant and exp >= 0:
        return Num(value)  # an integer (possibly `3e5`): exact
    return Num(value, -len(frac_part) + exp, max(len(digits), 1))


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
    return None


def _repeating(m: re.Match[str]) -> Num:
    """`0.1\\overline{6}` = 1/6: fixed part plus rep / (10^len(rep) - 1), shifted."""
    fixed, rep = m.group("fixed"), m.group("rep")
    value = Fraction(int(m.group("int") or "0"))
    if fixed:
        value += Fraction(int(fixed), 10 ** len(fixed))
    value += Fraction(int(rep), (10 ** len(rep) - 1) * 10 ** len(fixed))
    return Num(-value if m.group("sign") == "-" else value, percent=bool(m.group("pct")))


def _readings(n: Num, opts: CheckOptions) -> list[Num]:
    """The values a number may stand for: `50%` is 50, 0.5 or both (`opts.percent`)."""
    if not n.percent:
        return [n]
    as_fraction = Num(n.value / 100, None if n.place is None else n.place - 2, n.sig)
    plain = Num(n.value, n.place, n.sig)
    return {"either": [plain, as_fraction], "strip": [plain], "fraction": [as_fraction]}[opts.percent]


def _rounds_to(exact: Fraction, decimal: Num) -> bool:
    """Whether `decimal` is `exact` rounded at its last place (half a unit either way)."""
    if decimal.place is None:
        return exact == decimal.value
    return abs(exact - decimal.value) <= Fraction(1, 2) * Fraction(10) ** decimal.place


def _equal(ref: Num, cand: Num, opts: CheckOptions) -> bool:
    if ref.value == cand.value:
        return True
    if ref.place is not None:
        if ref.sig < opts.min_sig_figs:
            return False  # `0.5`: too few figures to be read as a rounding; exact only
        if cand.place is not None and cand.place >= ref.place:
            return False  # candidate less (or as) precise than the reference, and different
        return _rounds_to(cand.value, ref)
    if cand.place is not None:
        return cand.sig >= opts.min_sig_figs and _rounds_to(ref.value, cand)
    return False


def numbers_equal(ref: Num, cand: Num, opts: CheckOptions) -> bool:
    """Whether the candidate number equals the reference (rules in the module docstring)."""
    return any(_equal(r, c, opts) for r in _readings(ref, opts) for c in _readings(cand, opts))
