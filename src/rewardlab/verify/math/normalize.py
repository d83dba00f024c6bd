"""String-level clean-up of an extracted answer, before any parsing.

Everything here is plain `re`/`str` work in linear time: it removes what never changes a value
(`\\left`, spacing commands, `$`, `\\displaystyle`, `\\dfrac` vs `\\frac`, thousands separators,
units and degree marks when configured) and splits structures at their top-level commas.
"""

from __future__ import annotations

import re

from rewardlab.verify.math.options import CheckOptions

__all__ = ["clean", "comparison_key", "split_top_level", "split_unit", "text_answer", "unwrap_text"]

_DROP_RE = re.compile(
    r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big|displaystyle|textstyle|mathrm\{\s*\}|,|;|:|!|quad|qquad)(?![a-zA-Z])"
    r"|\\ |~"
)
_FRAC_ALIASES_RE = re.compile(r"\\[dt]frac(?![a-zA-Z])")
_DEGREE_RE = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|°|\\degree(?![a-zA-Z])")
_PERCENT_RE = re.compile(r"\\%|%")
_THOUSANDS_RE = re.compile(r"(?<=\d)(?:\{,\}|\\,|,\\!|\\!,)(?=\d{3})")
_PLAIN_THOUSANDS_RE = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_TEXT_CMD_RE = re.compile(r"\\(?:text|textbf|textit|mbox|mathrm|mathbf|operatorname)\s*\{([^{}]*)\}")
_UNIT_TAIL_RE = re.compile(
    r"(?<=[\d}])\s*(?:\\(?:text|mbox|mathrm)\s*\{\s*[a-zA-Z][a-zA-Z .\-/^\d]*\}\s*)+$"
    r"|(?<=\d)\s+(?:[a-zA-Z]{2,}\.?\s*)+$"
)
_WRAPPERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_UNICODE = str.maketrans({"−": "-", "–": "-", "∞": "\\infty ", "π": "\\pi ", "·": "\\cdot ", "≤": "\\le ", "≥": "\\ge "})
_MEMBER_RE = re.compile(r"^[a-zA-Z]\s*\\in\s*")
_SHORT_GROUP_RE = re.compile(r"([\^_])\{(\w)\}")
_WORD_RE = re.compile(r"[a-zA-Z]{2,}")
_LATEX_WORD_RE = re.compile(r"\\[a-zA-Z]+")
_SPACES_RE = re.compile(r"(?<=[^a-zA-Z])\s+|\s+(?=[^a-zA-Z])|^\s+|\s+$")
_OPEN = "([{"
_CLOSE = ")]}"


def clean(answer: str, opts: CheckOptions) -> str:
    """The answer with value-neutral LaTeX removed; still LaTeX, ready for parsing."""
    s = answer.translate(_UNICODE).replace("\\$", "").strip()
    changed = True
    while changed:  # `$\left( 1 \right)$.` needs several passes of the wrapper strip
        changed = False
        for left, right in _WRAPPERS:
            if s.startswith(left) and s.endswith(right) and len(s) >= len(left) + len(right):
                s = s[len(left) : len(s) - len(right)].strip()
                changed = True
        if s.endswith(".") and not s.endswith(".."):
            s, changed = s[:-1].rstrip(), True
    if opts.thousands:  # before `\,` is dropped as spacing: `1\,000` is one number
        s = _THOUSANDS_RE.sub("", s)
        compact = s.replace(" ", "")
        if _PLAIN_THOUSANDS_RE.match(compact):
            s = compact.replace(",", "")
    s = _DROP_RE.sub(" ", s).replace("\\varnothing", "\\emptyset").replace("\\{\\}", "\\emptyset")
    s = _FRAC_ALIASES_RE.sub(r"\\frac", s)
    if opts.degrees == "strip":
        s = _DEGREE_RE.sub("", s)
    else:
        s = _DEGREE_RE.sub(r"\\cdot\\frac{\\pi}{180}", s)
    s = _PERCENT_RE.sub("%", s)
    if opts.strip_units:
        s = _UNIT_TAIL_RE.sub("", s)
    s = _MEMBER_RE.sub("", s)  # `x \in [1, 2]` is the interval
    return " ".join(s.split())


def comparison_key(s: str) -> str:
    """`s` without spaces except between letters (`\\pi r` keeps its space): equal keys mean
    the same LaTeX source, so equal values."""
    return _SHORT_GROUP_RE.sub(r"\1\2", _SPACES_RE.sub("", s))  # `x^{2}` and `x^2` are one key


def unwrap_text(s: str) -> str:
    """`\\text{Monday}` -> `Monday` (also `\\mbox`, `\\mathrm`, `\\textbf`...), repeatedly."""
    prev = None
    while prev != s:
        prev, s = s, _TEXT_CMD_RE.sub(r"\1", s)
    return s


def text_answer(s: str) -> str | None:
    """The normalised words of a text answer (`\\text{Monday}`, `Monday`), or None for maths.

    An answer is text when, with `\\text{}` wrappers and LaTeX commands removed, it still holds
    a word of two or more letters and no digits or operators that would make it an expression.
    """
    inner = unwrap_text(s)
    if _LATEX_WORD_RE.search(inner) or not _WORD_RE.search(inner):
        return None
    if re.search(r"[\d=^_+*/<>]", inner):
        return None
    return " ".join(re.sub(r"[^\w\s']", " ", inner).casefold().split())


def split_top_level(s: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside any brackets; a malformed nesting returns `[s]` unchanged."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s) and s[i + 1] in "{}":
            i += 2  # `\{` and `\}` are set braces, counted by the structure parser
            continue
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth < 0:
                return [s]
        elif ch == sep and depth == 0:
            parts.append(s[start:i])
            start = i + 1
        i += 1
    parts.append(s[start:])
    return [p.strip() for p in parts]


_VALUE_UNIT_RE = re.compile(
    r"^\$?(?P<value>[-+]?[\d.,{}\\a-z]*?\d[\d.,{}]*)\s*"
    r"(?:\\(?:text|mbox|mathrm)\s*\{\s*(?P<braced>[a-zA-Z][a-zA-Z /.]*?)\s*\}|\s(?P<bare>[a-zA-Z]+))"
    r"(?:\^\{?(?P<power>[23])\}?)?\s*\.?\$?$"
)


def split_unit(answer: str) -> tuple[str, str] | None:
    """`("2", "km")` for `2 \\text{ km}` or `2 km`; `("3", "cm^2")` for `3 \\text{cm}^2`; else None."""
    m = _VALUE_UNIT_RE.match(answer.strip())
    if m is None:
        return None
    unit = (m.group("braced") or m.group("bare")).strip().rstrip(".")
    return m.group("value"), unit + (f"^{m.group('power')}" if m.group("power") else "")

