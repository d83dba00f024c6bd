"""Units written after a number, and `\\text{}`-style wrappers, found by right-to-left scans.

A final answer often carries its unit: `5 \\text{ cm}`, `12\\textbf{ meters}`,
`3\\,\\textnormal{miles}`, `20 dollars`, `4 \\text{cm}^2`. These functions find that tail in one
pass from the end (every character is looked at a bounded number of times), because a regex
for "words until the end" backtracks on ordinary prose that does not end in a unit.

A unit is only recognised after a number (a digit, or the `}` of `\\frac{..}{..}`), so
`x \\text{ cm}` and `\\text{meters}` alone are left alone.
"""

from __future__ import annotations

import re

__all__ = ["number_before_symbol", "split_unit_tail", "unwrap_text"]

# Commands whose argument is words, not maths (`\text{ miles}`, `\textbf{meters}`).
TEXT_COMMANDS = ("text", "textbf", "textit", "textrm", "textnormal", "textsf", "mbox", "mathrm", "mathbf", "operatorname")
_UNIT_COMMANDS = frozenset({"text", "textbf", "textit", "textrm", "textnormal", "textsf", "mbox", "mathrm"})
_UNIT_TEXT_RE = re.compile(r"\s*[a-zA-Z][a-zA-Z .\-/^\d]*")  # `fullmatch`ed against one group's text
_POWER_RE = re.compile(r"\^(?:\{[23]\}|[23])$")  # `\text{cm}^2`, `\text{m}^{3}`


def _group_before(s: str, end: int) -> tuple[int, str] | None:
    """The `\\command{...}` whose closing brace is at `end - 1`: (start of the command, command
    name); None when the group has no plain command before it or holds nested braces."""
    close = end - 1
    open_ = s.rfind("{", 0, close)
    if open_ < 0 or "}" in s[open_ + 1 : close]:
        return None
    j = open_
    while j > 0 and s[j - 1] == " ":
        j -= 1
    k = j
    while k > 0 and s[k - 1].isalpha():
        k -= 1
    if k == 0 or s[k - 1] != "\\" or k == j:
        return None
    return k - 1, s[k:j]


def _unit_group_start(s: str, end: int) -> int | None:
    """Start of a unit group (`\\text{ cm}`, optionally `^2`) ending at `end`, else None."""
    power = _POWER_RE.search(s, max(0, end - 4), end)
    group_end = power.start() if power is not None else end
    if group_end == 0 or s[group_end - 1] != "}":
        return None
    found = _group_before(s, group_end)
    if found is None or found[1] not in _UNIT_COMMANDS:
        return None
    start, _ = found
    body = s[s.index("{", start) + 1 : group_end - 1]
    return start if _UNIT_TEXT_RE.fullmatch(body) else None


def _word_run_start(s: str, end: int) -> int | None:
    """Start of a run of words of two or more letters (`square meters`, `dollars.`) ending at
    `end`, each preceded by whitespace; None when there is none."""
    i = end
    start = None
    while True:
        j = i
        if j > 0 and s[j - 1] == ".":
            j -= 1
        k = j
        while k > 0 and s[k - 1].isascii() and s[k - 1].isalpha():
            k -= 1
        if j - k < 2 or k == 0 or not s[k - 1].isspace():
            return start
        start = k
        i = k
        while i > 0 and s[i - 1].isspace():
            i -= 1


def _strip_end(s: str, end: int) -> int:
    while end > 0 and s[end - 1].isspace():
        end -= 1
    return end


def split_unit_tail(s: str) -> tuple[str, str]:
    """(value, unit tail) of `s`: `("5", "\\text{ cm}")` for `5 \\text{ cm}`, `("20", "dollars")`
    for `20 dollars`; the unit tail is empty when `s` does not end in a unit after a number."""
    end = _strip_end(s, len(s))
    cut = end
    while True:  # unit groups: `5\text{ m}\text{ s}` takes both
        start = _unit_group_start(s, cut)
        if start is None:
            break
        cut = _strip_end(s, start)
    if cut == end:  # no group: bare words after a space (`20 dollars`, `5 cm^2`)
        power = _POWER_RE.search(s, max(0, end - 4), end)
        start = _word_run_start(s, power.start() if power is not None else end)
        if start is None:
            return s, ""
        cut = _strip_end(s, start)
        if cut == start or cut == 0 or not s[cut - 1].isdigit():
            return s, ""
    elif cut == 0 or not (s[cut - 1].isdigit() or s[cut - 1] == "}"):
        return s, ""
    return s[:cut], s[cut:end].strip()


_COMMAND_OPEN_RE = re.compile(r"\\(?:" + "|".join(sorted(TEXT_COMMANDS, key=len, reverse=True)) + r")\s*\{")


def unwrap_text(s: str) -> str:
    """`\\text{Monday}` -> `Monday` (also `\\mbox`, `\\mathrm`, `\\textbf`...), nested ones too.

    One pass with a stack: each `{` remembers whether it opened a text command, and its `}` is
    dropped with it. Unbalanced input is returned unchanged.
    """
    if "\\" not in s:
        return s
    out: list[str] = []
    stack: list[bool] = []  # per open brace: was it a text command's?
    i = 0
    n = len(s)
    while i < n:
        ch = s[i]
        if ch == "\\":
            m = _COMMAND_OPEN_RE.match(s, i)
            if m is not None:
                stack.append(True)
                i = m.end()
                continue
            out.append(s[i : i + 2])  # an escape such as `\{` is copied whole
            i += 2
            continue
        if ch == "{":
            stack.append(False)
        elif ch == "}":
            if not stack:
                return s
            if stack.pop():
                i += 1
                continue
        out.append(ch)
        i += 1
    return s if stack else "".join(out)


# Unit symbols written bare after a number (`16 m`, `-130 km/h`, `9.8 m/s^2`, `0.21 N/C`): an SI
# prefix and base symbol, or an hour/minute/mile mark, with an optional power and one `/` unit.
# `split_unit_tail` only takes words of two or more letters, because a single letter after a
# number may be a variable (`2 x`); `number_before_symbol` reads these symbols only where the
# other answer is a bare number, so the letter cannot be a variable of the answer.
_SYMBOL = r"(?:[kcmµμnMG]?(?:m|g|s|L|N|J|W|V|A|Pa|Hz|C|K|Ω|mol|eV)|h|hr|hrs|min|mph|kph|ft|in|yd|mi|lb|oz)(?:\^\{?[23]\}?)?"
_NUMBER_SYMBOL_RE = re.compile(
    r"\s*(-?\d[\d,]*(?:\.\d+)?|-?\.\d+)(?:\s+|\\,|\\ |~)(?:\\(?:mathrm|text)\{\s*)?"
    + _SYMBOL
    + r"(?:\s*/\s*"
    + _SYMBOL
    + r")?\}?\s*\.?\s*"
)
_BARE_NUMBER_RE = re.compile(r"\s*-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)\s*")


def number_before_symbol(answer: str, other: str) -> str | None:
    """The number of `answer` when it is a number and a bare unit symbol (`16 m`, `-130 km/h`)
    and `other` is a bare number; None otherwise."""
    if len(answer) > 80 or not _BARE_NUMBER_RE.fullmatch(other.strip().strip("$")):
        return None
    m = _NUMBER_SYMBOL_RE.fullmatch(answer.strip().strip("$"))
    return m.group(1) if m is not None else None
