"""Refuse input that would make sympy run for minutes or eat gigabytes, before it gets there.

The worker timeout is the real guarantee (a killed process stops even inside a C-level
big-integer multiply); screening makes the common attacks cheap: no worker is killed and
restarted (~0.5 s) for `9^9^9^9`. Each check is one linear scan.

What is refused, and why:
- answers longer than `max_chars` (megabyte strings): no real final answer is that long;
- bracket nesting deeper than `MAX_DEPTH` (10,000-deep nesting): recursive parsers overflow;
- power towers (`9^9^9^9`, `2^{3^{4}}`) and exponents above `MAX_EXPONENT`: exact evaluation
  is astronomically large;
- factorials of numbers above `MAX_FACTORIAL` (`2004!`) and nested factorials (`(10!)!`);
- integer literals longer than `MAX_DIGITS` (Python refuses `int()` past 4300 digits anyway).

Two plain number literals never get here, whatever their length: they are compared exactly
before (fastpath.parse_long_number). A long literal against an expression still does.
"""

from __future__ import annotations

import re

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "MAX_EXPONENT", "MAX_FACTORIAL", "bracket_depth", "screen"]

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
    m = re.match(r"\d+|\\?[a-zA-Z]+|.", s[start:])
    return m.group(0) if m else ""


def _power_problem(s: str) -> str | None:
    for m in _POWER_RE.finditer(s):
        start = m.start(1)
        exponent = _exponent_text(s, start)
        end = start + len(exponent) + (2 if s[start] == "{" else 0)
        rest = s[end:].lstrip()
        if "^" in exponent or rest.startswith("^"):
            return "power tower (an exponent raised to a power)"
        for digits in _INT_RE.findall(exponent):
            if len(digits) > 6 or int(digits) > MAX_EXPONENT:
                return f"exponent {digits[:12]} is above {MAX_EXPONENT}"
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
    if "^" in s:
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
