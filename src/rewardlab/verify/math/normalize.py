"""String-level clean-up of an extracted answer, before any parsing.

Everything here is plain `re`/`str` work in linear time: it removes what never changes a value
(`\\left`, spacing commands, `$`, `\\displaystyle`, `\\dfrac` vs `\\frac`, thousands separators,
units and degree marks when configured) and splits structures at their top-level commas.
"""

from __future__ import annotations

import re

from rewardlab.verify.math.options import CheckOptions
from rewardlab.verify.math.scan import brace_pairs
from rewardlab.verify.math.units import split_unit_tail, unwrap_text

__all__ = ["assignment_tuples", "clean", "comparison_key", "equation_name", "is_computation", "is_equation", "is_name", "last_number_word", "named_value", "prose_words", "split_top_level", "split_unit", "text_answer"]

# `\\\\` (a matrix row break) is matched first so that `\\ ` (a space) never eats its second half.
_DROP_RE = re.compile(
    r"(?P<row>\\\\)|\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big|displaystyle|textstyle|mathrm\{\s*\}|,|;|:|!|quad|qquad)(?![a-zA-Z])"
    r"|\\ |~"
)
# `\\\\frac` (a backslash doubled by escaping the text twice) is `\\frac`: a row break followed
# by one of these command names never occurs in an answer.
_DOUBLED_COMMAND_RE = re.compile(
    r"\\\\(?=(?:[dt]?frac|sqrt|left|right|le|ge|leq|geq|ne|pi|cdot|times|infty|text|in|cup)(?![a-zA-Z]))"
)
_UPRIGHT_CONSTANT_RE = re.compile(r"\\(?:mathrm|text|rm|operatorname)\s*\{\s*([ei])\s*\}")
_FRAC_ALIASES_RE = re.compile(r"\\[dt]frac(?![a-zA-Z])")
_AND_RE = re.compile(r"(?:, ?)?(?:\\text\{ {0,3},? {0,3}and {0,3}\}|\band\b)")  # bounded: no rescans
_RELATIONS = {"<=": "\\le ", ">=": "\\ge ", "!=": "\\ne ", "\\leq": "\\le", "\\geq": "\\ge", "\\neq": "\\ne"}
_RELATION_SPELLING_RE = re.compile(r"<=|>=|!=|\\leq(?![a-zA-Z])|\\geq(?![a-zA-Z])|\\neq(?![a-zA-Z])")
_DEGREE_RE = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|°|\\degree(?![a-zA-Z])")
_PERCENT_RE = re.compile(r"\\%|%")
# `10{,}000`, `1\\,000`, `11,\\! 111,\\! 100` (MATH writes the last with a space after `\\!`)
_THOUSANDS_RE = re.compile(r"(?<=\d)(?:\{,\}|\\,|,\\!|\\!,) ?(?=\d{3}(?!\d))")
# `7 3/4` written in plain text is the mixed number 7 3/4 (spelled `7\\frac{3}{4}` for the number
# parser, which applies the proper-fraction rule), never 73/4.
_PLAIN_MIXED_RE = re.compile(r"(?<![\d.,/^_])(\d+) +(\d+)/(\d+)(?![\d./])")
# `3 million`, `2.5 \\text{ billion}`: a number word is a power of ten, not a unit to strip.
_SCALES = {"million": 6, "billion": 9, "trillion": 12}
_SCALE_WORD_RE = re.compile(r"(\d) ?(?:\\(?:text|mbox)\{ ?)?(million|billion|trillion)(?![a-zA-Z]) ?\}?", re.IGNORECASE)
# A brace group is grouping, never a set (that is `\{`): `{1,000}` in `\frac{1,000}{3}` is 1000.
_BRACED_THOUSANDS_RE = re.compile(r"(?:(?<=^\{)|(?<=[^\\]\{))-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?(?=\})")
# A whole answer that is a number word (`five`, `\text{twenty-one}`) is that number.
_UNITS_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS_WORDS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_NUMBER_WORDS = {
    **{word: n for n, word in enumerate(_UNITS_WORDS)},
    **_TENS_WORDS,
    **{f"{tens}{sep}{_UNITS_WORDS[k]}": n + k for tens, n in _TENS_WORDS.items() for k in range(1, 10) for sep in ("-", " ")},
    "hundred": 100, "one hundred": 100, "a hundred": 100,
}
# `\text{5 cm}`: a number and its unit in one text group is the number with a unit.
_TEXT_WITH_NUMBER_RE = re.compile(r"\\(?:text|mbox|textrm|textnormal|mathrm)\{\s*(-?\d[\d.,]*)\s+([a-zA-Z][a-zA-Z ./]{0,40}(?:\^\{?[23]\}?)?)\}")


def _number_word(s: str) -> str:
    """`5` for `five`, `\\text{Five}`, `twenty-one`; `s` itself otherwise (and `\\text{5 cm}` is
    `5 \\text{cm}`, the number with its unit outside the text)."""
    if len(s) > 40:
        return s
    match = _TEXT_WITH_NUMBER_RE.fullmatch(s)
    if match is not None:
        return f"{match.group(1)} \\text{{ {match.group(2)}}}"
    word = unwrap_text(s).strip().rstrip(".").casefold()
    value = _NUMBER_WORDS.get(word)
    return str(value) if value is not None else s


_PLAIN_THOUSANDS_RE = re.compile(r"^-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$")  # `0,111` is no grouping
_WRAPPERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_UNICODE = str.maketrans({"−": "-", "–": "-", "∞": "\\infty ", "π": "\\pi ", "·": "\\cdot ", "≤": "\\le ", "≥": "\\ge "})
_MEMBER_RE = re.compile(r"^[a-zA-Z]\s*\\in\s*")
_SHORT_GROUP_RE = re.compile(r"([\^_])\{(\w)\}")
_WORD_RE = re.compile(r"[a-zA-Z]{2,}")
_LATEX_WORD_RE = re.compile(r"\\[a-zA-Z]+")
_SPACES_RE = re.compile(r"(?<=[^a-zA-Z]) | (?=[^a-zA-Z])")  # on single spaces only: see `comparison_key`
_OPEN = "([{"
_CLOSE = ")]}"


_SUBSCRIPT_RE = re.compile(r"_\{[^{}]{0,40}\}|_\w")
_NOT_IN_NAME_RE = re.compile(r"[\d+\-*^=<>!]|\\(?:cdot|times|pm|mp|le|ge|lt|gt|ne)(?![a-zA-Z])")
_RELATION_RE = re.compile(r"<=|>=|!=|\\(?:le|ge|lt|gt|ne|leq|geq|neq|leqslant|geqslant)(?![a-zA-Z])|[<>≤≥≠]")


def is_name(side: str) -> bool:
    """Whether the left side of `side = value` names the unknown rather than computing it:
    `x`, `(p,q)`, `f(x)`, `|AB|`, `A:B`, `V_{1}:V_{2}`, `\\frac{NO}{BO}`; not `x+y`, `2x`, `f(2)`
    (with digits or operators outside subscripts it is an expression whose value is asked)."""
    bare = _SUBSCRIPT_RE.sub("", side.strip())
    return bool(bare) and any(ch.isalpha() for ch in bare) and _NOT_IN_NAME_RE.search(bare) is None


def named_value(s: str) -> str | None:
    """`(3,2)` for `(p,q)=(3,2)`, `1` for `f(x)=1`, `11` for `x = 5+5+1 = 11`: the last member
    of an equation whose left side is a name (`is_name`), or of a chain of three or more
    members (`a = b = c` asserts them all equal: it arrives at its last member, as a response's
    chain does in extraction); None otherwise (no `=`, an inequality, or an expression on the
    left of a single `=`). Only top-level `=` count: the one in `\\sum_{k=0}` is a bound's."""
    if "=" not in s or _RELATION_RE.search(s):
        return None
    parts = split_top_level(s, "=")
    if len(parts) < 2 or any(len(split_top_level(part)) > 1 for part in parts):
        return None  # `AB=4, CD=5` is a list of named values, not one equation
    rhs = parts[-1].strip()
    if not rhs:
        return None
    if len(parts) > 2 or is_name(parts[0]):
        return rhs
    # `\sqrt{4} = 2`: a computation stating its value (`7 = 11a+c` is an equation in a and c)
    return rhs if is_computation(parts[0]) and is_computation(rhs) else None


# Letters that are constants, not unknowns, once LaTeX command names are removed: `e^{i\pi}`.
_COMMAND_NAME_RE = re.compile(r"\\(?:operatorname|text|mathrm|begin|end)\s*\{[a-zA-Z* ]{0,20}\}|\\[a-zA-Z]+")
_UNKNOWN_RE = re.compile(r"[a-df-hj-zA-Z]")  # any letter but the constants e and i


def is_computation(side: str) -> bool:
    """Whether `side` is a closed computation with no unknown (`\\sqrt{4}`, `\\binom{5}{2}`,
    `\\log_2 8`, `3^2+4^2`, `e^{i\\pi}`): in `\\sqrt{4} = 2` the stated value, 2, is the
    answer. `2x`, `x+y` and `f(2)` name unknowns: their equations stay equations."""
    bare = _COMMAND_NAME_RE.sub(" ", side)
    for bound in _BOUND_VARIABLE_RE.findall(side):  # `\\lim_{x \\to 0} \\frac{\\sin x}{x}` has no unknown
        bare = bare.replace(bound, " ")
    return (any(ch.isdigit() for ch in bare) or "\\" in side) and _UNKNOWN_RE.search(bare) is None


# The variable a limit, sum or product binds: `\\lim_{x \\to 0}`, `\\sum_{k=1}`.
_BOUND_VARIABLE_RE = re.compile(r"\\(?:lim|sum|prod)\s*_\s*\{\s*([a-zA-Z])\s*(?:\\to|\\rightarrow|=)")


def is_equation(s: str) -> bool:
    """Whether `s` is one equation `lhs = rhs` (one top-level `=`, no inequality, not a list)."""
    if "=" not in s or _RELATION_RE.search(s) or len(split_top_level(s)) > 1:
        return False
    parts = split_top_level(s, "=")
    return len(parts) == 2 and all(parts)


def assignment_tuples(s: str) -> str | None:
    """`(3,4)` for `x=3, y=4`, `(5,2),(7,2)` for `p=5,q=2;p=7,q=2`: values assigned to two or
    more distinct names, in the order written, as a tuple (one per `;`-separated solution, each
    naming the same unknowns in the same order); None otherwise (`x=1, x=2` is a set of values
    of one unknown, not a tuple)."""
    if "=" not in s or _RELATION_RE.search(s):
        return None
    names: list[str] | None = None
    tuples: list[str] = []
    for group in split_top_level(s, ";"):
        pairs = [split_top_level(part, "=") for part in split_top_level(group)]
        if len(pairs) < 2 or any(len(pair) != 2 or not pair[1] or not is_name(pair[0]) for pair in pairs):
            return None
        keys = [comparison_key(pair[0]) for pair in pairs]
        if len(set(keys)) != len(keys) or (names is not None and keys != names):
            return None
        names = keys
        tuples.append("(" + ",".join(pair[1] for pair in pairs) + ")")
    return ",".join(tuples) if tuples else None


def equation_name(s: str) -> str:
    """The left side of `s` at its first top-level `=` (all of `s` when there is none)."""
    return split_top_level(s, "=")[0]


def _drop(m: re.Match[str]) -> str:
    return m.group(0) if m.group("row") else " "


def clean(answer: str, opts: CheckOptions) -> str:
    """The answer with value-neutral LaTeX removed; still LaTeX, ready for parsing."""
    s = _DOUBLED_COMMAND_RE.sub(r"\\", answer.translate(_UNICODE).replace("\\$", "")).strip()
    lo, hi = _unwrap_bounds(s)
    s = s[lo:hi]
    if opts.thousands:  # before `\,` is dropped as spacing: `1\,000` is one number
        s = _THOUSANDS_RE.sub("", s)
        if _PLAIN_THOUSANDS_RE.match(s):  # `32,349`; `32, 349` (a space) is a list of two
            s = s.replace(",", "")
        s = _BRACED_THOUSANDS_RE.sub(lambda m: m.group(0).replace(",", ""), s)  # `\frac{1,000}{3}`
    s = _number_word(s)
    s = _PLAIN_MIXED_RE.sub(r"\1\\frac{\2}{\3}", s)
    s = _SCALE_WORD_RE.sub(lambda m: f"{m.group(1)}\\times10^{{{_SCALES[m.group(2).lower()]}}}", s)
    s = _DROP_RE.sub(_drop, s).replace("\\varnothing", "\\emptyset").replace("\\{\\}", "\\emptyset")
    s = _FRAC_ALIASES_RE.sub(r"\\frac", s)
    s = _UPRIGHT_CONSTANT_RE.sub(r"\1", s)  # upright `\mathrm{e}`, `\text{i}`: the constants e and i (ISO 80000-2)
    s = _RELATION_SPELLING_RE.sub(lambda m: _RELATIONS[m.group(0)], s)
    s = _strip_outer_group(s.replace("$", " "))  # `{1,2,3}`: a brace group is grouping, not a set
    s = _AND_RE.sub(", ", s)  # `6 \text{ and } 8`, `19, 46, and 82`: the parts of one answer
    if opts.degrees == "strip":
        s = _DEGREE_RE.sub("", s)
    else:
        s = _DEGREE_RE.sub(r"\\cdot\\frac{\\pi}{180}", s)
    s = _PERCENT_RE.sub("%", s)
    if opts.strip_units:
        s = split_unit_tail(s)[0]
    s = _MEMBER_RE.sub("", s)  # `x \in [1, 2]` is the interval
    return " ".join(s.split())


def _unwrap_bounds(s: str) -> tuple[int, int]:
    """Bounds of `s` inside its `$...$`/`\\(...\\)` wrappers and a final full stop, all layers
    (`$\\left( 1 \\right)$.` takes several). Index arithmetic, no slicing per layer: a string of
    a million `$` is one pass, not half a million copies."""
    lo, hi = 0, len(s)
    changed = True
    while changed:
        changed = False
        while lo < hi and s[lo].isspace():
            lo += 1
        while hi > lo and s[hi - 1].isspace():
            hi -= 1
        for left, right in _WRAPPERS:
            if hi - lo >= len(left) + len(right) and s.startswith(left, lo, hi) and s.endswith(right, lo, hi):
                lo, hi, changed = lo + len(left), hi - len(right), True
        if s.endswith(".", lo, hi) and not s.endswith("..", lo, hi):
            hi, changed = hi - 1, True
    return lo, hi


def _strip_outer_group(s: str) -> str:
    """`s` without brace groups that enclose all of it (`{{1,2}}` -> `1,2`); `\\{...\\}` stays."""
    s = s.strip()
    if not s.startswith("{"):
        return s
    pairs = brace_pairs(s)
    lo, hi = 0, len(s)
    while lo < hi and s[lo] == "{" and pairs.get(lo) == hi - 1:
        lo, hi = lo + 1, hi - 1
    return s[lo:hi].strip()


def comparison_key(s: str) -> str:
    """`s` without spaces except between letters (`\\pi r` keeps its space): equal keys mean
    the same LaTeX source, so equal values."""
    s = " ".join(s.split())  # single spaces: a run of spaces would make the lookarounds rescan it
    return _SHORT_GROUP_RE.sub(r"\1\2", _SPACES_RE.sub("", s))  # `x^{2}` and `x^2` are one key


_ARTICLES = frozenset({"a", "an", "the"})


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
    words = re.sub(r"[^\w\s']", " ", inner).casefold().split()
    if len(words) > 1 and words[0] in _ARTICLES:  # `a triangle` and `triangle` name one thing
        words = words[1:]
    return " ".join(words)


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


_VALUE_CHARS_RE = re.compile(r"[-+]?[\d.,{}\\a-z]*")  # one class, `fullmatch`ed: linear
_UNIT_NAME_RE = re.compile(r"[a-zA-Z][a-zA-Z /.]*")
_UNIT_POWER_RE = re.compile(r"\^\{?([23])\}?$")


def split_unit(answer: str) -> tuple[str, str] | None:
    """`("2", "km")` for `2 \\text{ km}` or `2 km`; `("3", "cm^2")` for `3 \\text{cm}^2`; else None."""
    value, tail = split_unit_tail(answer.strip().strip("$").rstrip(". "))
    value = value.strip()
    if not tail or tail.count("\\") > 1 or not _VALUE_CHARS_RE.fullmatch(value):
        return None
    if not value.rstrip(".,{}")[-1:].isdigit():
        return None
    power = _UNIT_POWER_RE.search(tail)
    unit = unwrap_text(tail[: power.start()] if power else tail).strip().rstrip(".").strip()
    if not _UNIT_NAME_RE.fullmatch(unit) or ("\\" not in tail and " " in unit):
        return None
    return value, unit + (f"^{power.group(1)}" if power else "")


# A word of three or more letters that is not a LaTeX command or a function's name: `week`,
# `indeterminate`, `OpenChat`. sympy reads it as a product of unknowns, which no number equals.
_PROSE_WORD_RE = re.compile(r"(?<![\\\w])[^\W\d_]{3,}")
_FUNCTION_NAMES = frozenset({
    "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan",
    "log", "exp", "sqrt", "infty", "inf", "frac", "cdot", "times", "mod", "max", "min", "gcd",
    "lcm", "det", "lim", "sum", "prod", "int", "binom", "abs", "deg",
})  # fmt: skip


def prose_words(s: str) -> list[str]:
    """The words of `s` (three or more letters, not LaTeX commands or function names)."""
    return [w for w in _PROSE_WORD_RE.findall(s) if w.lower() not in _FUNCTION_NAMES]


# A count stated in words: "there are three objects left", "there were two people",
# "there are a total of four", "we are left with one". Only these forms: elsewhere a number
# word is often no count ("the smallest one", "of the three people, only ...").
_COUNT_WORDS_RE = re.compile(
    r"(?:\bthere\s+(?:is|are|was|were)\s+(?:a\s+total\s+of\s+|exactly\s+|only\s+)?|\bleft\s+with\s+)("
    + "|".join(sorted((re.escape(w) for w in _NUMBER_WORDS), key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)


def last_number_word(text: str) -> str | None:
    """The count of the last "there are <number word>" statement in `text` (`3` for "there are
    three objects left"), or None."""
    last = None
    for last in _COUNT_WORDS_RE.finditer(text):  # noqa: B007 (the last match is kept)
        pass
    return str(_NUMBER_WORDS[last.group(1).casefold()]) if last is not None else None
