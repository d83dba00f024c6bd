"""Refuse input that would make sympy run for minutes or eat gigabytes, before it gets there.

The worker timeout is the real guarantee (a killed process stops even inside a C-level
big-integer multiply); screening makes the common attacks cheap: no worker is killed and
restarted (~0.5 s) for `9^9^9^9`. Each check is one linear scan.

What is refused, and why:
- answers longer than `max_chars` (megabyte strings): no real final answer is that long;
- bracket nesting deeper than `MAX_DEPTH` (10,000-deep nesting): recursive parsers overflow;
- powers whose exponent is above `MAX_EXPONENT`, written (`2^{100000}`) or estimated without
  evaluating it (the towers `9^9^9`, `9**9**9`, `2^{3^{10}}`): exact evaluation is astronomically
  large. A tower whose exponent is small (`3^{2^{2}}` is 81) or names a variable
  (`e^{-x^2/2}`) is harmless and passes; the upper bound of a sum (`\\sum_{k=1}^{10^{9}}`) is
  no exponent;
- factorials of numbers above `MAX_FACTORIAL` (`2004!`) and nested factorials (`(10!)!`);
- integer literals longer than `MAX_DIGITS` (Python refuses `int()` past 4300 digits anyway).

Two plain number literals never get here, whatever their length: they are compared exactly
before (fastpath.parse_long_number). A long literal against an expression still does.
"""

from __future__ import annotations

import ast
import math
import re

__all__ = ["MAX_DEPTH", "bracket_depth", "screen"]

MAX_DEPTH = 50
MAX_EXPONENT = 10_000
MAX_FACTORIAL = 500
MAX_DIGITS = 1000

_POWER_RE = re.compile(r"\^\s*(\{|\\left|\(|[^\s{(\\])")
_FACTORIAL_RE = re.compile(r"(\d+|[)}\]])\s*!")
_DIGITS_RE = re.compile(r"\d{" + str(MAX_DIGITS + 1) + ",}")
_INT_RE = re.compile(r"\d+")


def bracket_depth(s: str) -> int:
    """The deepest nesting of `(`, `{`, `[` in `s` (one pass)."""
    depth = deepest = 0
    for ch in s:
        if ch in "({[":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif ch in ")}]":
            depth -= 1
    return deepest


def _exponent_text(s: str, start: int) -> str:
    """The exponent that begins at `start` (just after `^` and spaces): a brace group or a token."""
    if start >= len(s):
        return ""
    if s[start] == "{":
        depth = 0
        for i in range(start, len(s)):
            if s[i] == "{":
                depth += 1
            elif s[i] == "}":
                depth -= 1
                if depth == 0:
                    return s[start + 1 : i]
        return s[start + 1 :]
    m = _TOKEN_RE.match(s, start)
    return m.group(0) if m else ""


_TOKEN_RE = re.compile(r"\d+|\\?[a-zA-Z]+|.")
# `^` right after a sum's or an integral's lower limit is an upper bound, not an exponent.
_BOUND_RE = re.compile(r"\\(?:sum|int|oint|iint|bigcup|bigcap)\s*(?:_\s*(?:\{[^{}]{0,80}\}|\S))?\s*$")
_EXPONENT_NOISE_RE = re.compile(r"\\(?:left|right|cdot|times|[dt]?frac)(?![a-zA-Z])")
_NUMERIC_RE = re.compile(r"[\d\s+\-*/().]{1,200}")
_HUGE = float(MAX_EXPONENT) * 1e6


def _tower(s: str, start: int) -> str:
    """The exponent of the power whose exponent starts at `start`, with every power stacked on
    it without braces (`9^9^9` is `9^(9^9)`, so the first exponent is `9^{9}`)."""
    parts: list[str] = []
    while start < len(s):
        exponent = _exponent_text(s, start)
        if not exponent:
            break
        parts.append(exponent)
        rest = start + len(exponent) + (2 if s[start] == "{" else 0)
        while rest < len(s) and s[rest] == " ":
            rest += 1
        if rest >= len(s) or s[rest] != "^":
            break
        start = rest + 1
        while start < len(s) and s[start] == " ":
            start += 1
    if len(parts) <= 1:
        return parts[0] if parts else ""
    return parts[0] + "".join("^{" + part for part in parts[1:]) + "}" * (len(parts) - 1)


def _estimate(node: ast.expr) -> float:
    """An upper bound of the absolute value of an arithmetic expression of numbers, without
    computing anything large (a power past `_HUGE` is infinite)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return abs(float(node.value))
    if isinstance(node, ast.UnaryOp):
        return _estimate(node.operand)
    if isinstance(node, ast.BinOp):
        a, b = _estimate(node.left), _estimate(node.right)
        if isinstance(node.op, ast.Add | ast.Sub):
            return a + b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            return a  # divisors of exponents are whole numbers or fractions of them: a bound
        if isinstance(node.op, ast.Pow):
            if a <= 1:
                return 1.0
            return math.inf if b * math.log10(a) > math.log10(_HUGE) else a**b
    raise ValueError("not arithmetic")


def _numeric_exponent(exponent: str) -> float | None:
    """An upper bound of a numeric exponent's value (`2^{2}` is 4, `9^9` is about 3.9e8), or
    None when it names a variable (`-x^2/2`: each power inside is screened on its own)."""
    text = _EXPONENT_NOISE_RE.sub(" ", exponent).replace("}{", ")/(").replace("{", "(").replace("}", ")")
    if not _NUMERIC_RE.fullmatch(text.replace("^", "*")):
        return None
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
        return _estimate(tree.body)
    except (SyntaxError, ValueError, OverflowError, RecursionError):
        return math.inf  # numeric but unreadable: its cost is unknown


def _power_problem(s: str) -> str | None:
    s = s.replace("**", "^")  # Python's power, `9**9**9`
    for m in _POWER_RE.finditer(s):
        if _BOUND_RE.search(s, max(0, m.start() - 120), m.start()):
            continue  # `\sum_{k=1}^{10^{9}}`: a bound; its own powers are matched separately
        exponent = _tower(s, m.start(1))
        if "^" not in exponent:
            for digits in _INT_RE.findall(exponent):
                if len(digits) > 6 or int(digits) > MAX_EXPONENT:
                    return f"exponent {digits[:12]} is above {MAX_EXPONENT}"
            continue
        value = _numeric_exponent(exponent)
        if value is not None and value > MAX_EXPONENT:
            size = f"about {value:.3g}" if value < _HUGE else f"over {_HUGE:.0e}"
            return f"power tower: the exponent {exponent[:20]} is {size}, above {MAX_EXPONENT}"
    return None


def screen(s: str, *, max_chars: int = 2000) -> str | None:
    """Why `s` must not reach sympy, or None when it may.

    Args:
        s: a cleaned answer (reference or candidate).
        max_chars: the longest answer accepted.
    """
    if len(s) > max_chars:
        return f"answer is {len(s)} characters long (limit {max_chars})"
    depth = bracket_depth(s)
    if depth > MAX_DEPTH:
        return f"brackets nested {depth} deep (limit {MAX_DEPTH})"
    if _DIGITS_RE.search(s):
        return f"a number has more than {MAX_DIGITS} digits"
    if "^" in s or "**" in s:
        problem = _power_problem(s)
        if problem:
            return problem
    if "!" in s:
        for m in _FACTORIAL_RE.finditer(s):
            token = m.group(1)
            if not token.isdigit():
                # `(n+1)!` is a fine symbolic answer; `(10!)!` is not
                if s.count("!") > 1:
                    return "nested factorial"
                continue
            if int(token) > MAX_FACTORIAL:
                return f"factorial of {token} (limit {MAX_FACTORIAL})"
    return None
