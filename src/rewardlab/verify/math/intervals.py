"""Inequalities in one variable read as the intervals they describe.

`x \\ge 3` is `[3,\\infty)`, `-1 < x \\le 4` is `(-1,4]`; an inequality in the absolute value of
the variable describes a symmetric set: `|x| < 2` is `(-2,2)`, `|x| > 1` is
`(-\\infty,-1)\\cup(1,\\infty)`, `1 \\le |z| \\le 3/2` is `[-3/2,-1]\\cup[1,3/2]` (the real
solutions; the reading is used only when the other answer is written as intervals). For `|x|` the
bounds must be numbers, since which set it is depends on their signs (`|x| > -1` is every real
number, `(-\\infty,\\infty)`; `|x| < 0` has no solution and no interval reading); other bounds
are left alone (None).
"""

from __future__ import annotations

import re

from rewardlab.verify.math.fastpath import parse_number
from rewardlab.verify.math.normalize import comparison_key

__all__ = ["inequality_interval", "inequality_variable"]

_INEQ_SPLIT_RE = re.compile(r"(<=|>=|<|>|\\(?:leqslant|geqslant|leq|geq|le|ge|lt|gt)(?![a-zA-Z]))")
_STRICT = {"<", ">", "\\lt", "\\gt"}
_LESS = {"<", "<=", "\\lt", "\\le", "\\leq", "\\leqslant"}
# `x`, `\\theta`, `a_1`, and a function of one variable `f(x)` (`0 < f(x) < 1`)
_VARIABLE_RE = re.compile(r"^(?:[a-zA-Z]|\\(?!infty\b|pi\b)[a-zA-Z]+)(?:_\{?\w+\}?)?(?:\([a-zA-Z]\))?$")
_ABS_RE = re.compile(r"^(?:\|(?P<bar>[^|]+)\||\\lvert(?P<lvert>.+)\\rvert|\\vert(?P<vert>.+)\\vert)$")


def _abs_of_variable(s: str) -> bool:
    m = _ABS_RE.match(s)
    return m is not None and _VARIABLE_RE.match(next(g for g in m.groups() if g is not None).strip()) is not None


def _is_variable(s: str) -> bool:
    return _VARIABLE_RE.match(s) is not None or _abs_of_variable(s)


def inequality_interval(s: str) -> str | None:
    """The interval (or union) an inequality in one variable describes, else None.

    `x \\ge 3` -> `[3,\\infty)`, `x < 2` -> `(-\\infty,2)`, `-1 < x \\le 4` -> `(-1,4]`,
    `5 > x` -> `(-\\infty,5)`, `4 \\ge x > -1` -> `(-1,4]`, `|x| \\le 2` -> `[-2,2]`.
    """
    parts = [part.strip() for part in _INEQ_SPLIT_RE.split(s)]
    if len(parts) == 3:  # `x op b` or `a op x`
        a, op, b = parts
        if _is_variable(a) and b and not _is_variable(b):
            variable, bound, less = a, b, op in _LESS
        elif _is_variable(b) and a and not _is_variable(a):
            variable, bound, less = b, a, op not in _LESS
        else:
            return None
        strict = op in _STRICT
        if _abs_of_variable(variable):
            return _abs_one_sided(bound, less, strict)
        if less:
            return f"(-\\infty,{bound}{')' if strict else ']'}"
        return f"{'(' if strict else '['}{bound},\\infty)"
    if len(parts) == 5 and _is_variable(parts[2]) and all(parts):  # `a op x op c`
        a, op1, variable, op2, c = parts
        if (op1 in _LESS) != (op2 in _LESS):
            return None  # `1 < x > 3` is no interval
        if op1 not in _LESS:  # `a > x > c` is `c < x < a`
            a, op1, op2, c = c, op2, op1, a
        if _abs_of_variable(variable):
            return _abs_band(a, c, op1 in _STRICT, op2 in _STRICT)
        return f"{'(' if op1 in _STRICT else '['}{a},{c}{')' if op2 in _STRICT else ']'}"
    return None


def inequality_variable(s: str) -> str | None:
    """The variable whose values `inequality_interval(s)` describes (`x` for `-1 < x \\le 4`, and
    for `|x| < 2`), or None when `s` is not an inequality in one variable."""
    parts = [part.strip() for part in _INEQ_SPLIT_RE.split(s)]
    if len(parts) == 3:
        found = [part for part in (parts[0], parts[2]) if _is_variable(part)]
        return _unbarred(found[0]) if len(found) == 1 else None
    if len(parts) == 5 and _is_variable(parts[2]):
        return _unbarred(parts[2])
    return None


def _unbarred(variable: str) -> str:
    m = _ABS_RE.match(variable)
    return next(g for g in m.groups() if g is not None).strip() if m is not None else variable


def _sign(bound: str) -> int | None:
    """-1, 0 or 1 for a numeric bound, None when it is not a plain number."""
    num = parse_number(comparison_key(bound))
    if num is None:
        return None
    return (num.value > 0) - (num.value < 0)


def _negated(bound: str) -> str:
    if bound.startswith("-"):
        return bound[1:]
    return f"-{bound}" if re.fullmatch(r"[\w.\\{}]+", bound) else f"-({bound})"


def _abs_one_sided(bound: str, less: bool, strict: bool) -> str | None:
    """`|x| < b` is `(-b,b)`; `|x| > a` is `(-\\infty,-a)\\cup(a,\\infty)` (a >= 0)."""
    sign = _sign(bound)
    if sign is None:
        return None
    neg = _negated(bound)
    if less:
        if sign < 0 or (sign == 0 and strict):
            return None  # no real solution: not an interval answer
        return f"({neg},{bound})" if strict else f"[{neg},{bound}]"
    if sign < 0 or (sign == 0 and not strict):
        return "(-\\infty,\\infty)"  # every real number
    return f"(-\\infty,{neg}{')' if strict else ']'}\\cup{'(' if strict else '['}{bound},\\infty)"


def _abs_band(low: str, high: str, strict_low: bool, strict_high: bool) -> str | None:
    """`a < |x| < b` with 0 < a < b is `(-b,-a)\\cup(a,b)` (brackets following the relations)."""
    lo, hi = parse_number(comparison_key(low)), parse_number(comparison_key(high))
    if lo is None or hi is None or not 0 < lo.value < hi.value:
        return None
    left, right = "(" if strict_low else "[", ")" if strict_low else "]"
    outer_left, outer_right = "(" if strict_high else "[", ")" if strict_high else "]"
    return f"{outer_left}{_negated(high)},{_negated(low)}{right}\\cup{left}{low},{high}{outer_right}"
