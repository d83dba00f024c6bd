"""Find the final answer in a full model response.

Extraction is the first of two pure steps (extract, then compare). It never calls sympy and runs
in time linear in the response length: a megabyte response costs a few regex scans, no
backtracking blow-up (every pattern below is anchored on a literal and bounded).

Sources, tried in `ExtractOptions.priority` order (the first that finds something wins):

- ``boxed``: ``\\boxed{...}`` / ``\\fbox{...}`` with nested braces (the last one by default);
- ``answer_tag``: ``<answer>...</answer>`` (a box inside the tag is preferred);
- ``final_answer``: "the final answer is ..." / "the answer is ...";
- ``answer_line``: a line starting with "Answer:" (or GSM8K's "####");
- ``bold``: the last ``**...**`` span;
- ``last_latex``: the last ``$...$``, ``\\(...\\)`` or ``\\[...\\]`` span (right-hand side of an
  equation if it is one);
- ``last_number``: the last number in the text.

`strict=True` (for RL) keeps only ``boxed`` and ``answer_tag``: an answer the policy did not mark
does not count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = ["SOURCES", "ExtractOptions", "Extraction", "extract_answer", "find_boxed"]

SOURCES = ("boxed", "answer_tag", "final_answer", "answer_line", "bold", "last_latex", "last_number")
_STRICT_SOURCES = frozenset({"boxed", "answer_tag"})

_BOX_RE = re.compile(r"\\(?:boxed|fbox)\b")
_TAG_RE = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_FINAL_RE = re.compile(
    r"(?:final\s+answer|the\s+answer)\s*(?:is|:)\s*:?\s*(.{1,400}?)(?:\.\s|\.?\s*\n|\.?\s*$)",
    re.IGNORECASE,
)
# "Answer: 7", and GSM8K's "#### 7"
_ANSWER_LINE_RE = re.compile(r"^(?:[ \t>*#]*answer\s*[:：]|\s*####)\s*(.{1,400}?)\s*$", re.IGNORECASE | re.MULTILINE)
_BOLD_RE = re.compile(r"\*\*([^*\n]{1,400})\*\*")
_LATEX_SPAN_RE = re.compile(r"\$\$([^$]{1,2000})\$\$|\$([^$\n]{1,1000})\$|\\\((.{1,1000}?)\\\)|\\\[(.{1,2000}?)\\\]", re.DOTALL)
_NUMBER_RE = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?|-?\.\d+")
_CHOICE_RE = re.compile(r"^\(?([A-J])\)?[.:]?$|^\(([A-J])\)\s|^([A-J])[.:)]\s")
_LONE_VARIABLE_RE = re.compile(r"^\\?[a-zA-Z]+(?:_\{?\w+\}?)?$")


@dataclass(frozen=True)
class ExtractOptions:
    """How to find the answer. Frozen so the compiled state can be cached per options.

    Attributes:
        priority: sources to try, in order; names from `SOURCES`.
        strict: only ``boxed`` and ``answer_tag`` count (the RL setting: an unmarked answer is
            a formatting failure, and rewarding it teaches the policy nothing about format).
        boxed: which box to take when there are several ("last" is what solutions mean).
        tail_chars: look only at the last `tail_chars` characters for the fallback sources
            (``last_latex``, ``last_number``); a final answer sits at the end.
    """

    priority: tuple[str, ...] = SOURCES
    strict: bool = False
    boxed: Literal["last", "first"] = "last"
    tail_chars: int = 4000
    _sources: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unknown = [s for s in self.priority if s not in SOURCES]
        if unknown:
            raise ValueError(f"unknown extraction source(s) {unknown}; choose from {list(SOURCES)}")
        sources = tuple(s for s in self.priority if not self.strict or s in _STRICT_SOURCES)
        object.__setattr__(self, "_sources", sources)


@dataclass(frozen=True)
class Extraction:
    """What was extracted: the answer text (or None) and the source that found it."""

    answer: str | None
    source: str | None

    def __bool__(self) -> bool:
        return self.answer is not None


def _brace_group(text: str, start: int) -> tuple[str, int] | None:
    """The content of the `{...}` group opening at `start` and the index after it."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == "{" and (i == 0 or text[i - 1] != "\\"):
            depth += 1
        elif ch == "}" and text[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
    return None


def find_boxed(text: str, *, which: Literal["last", "first", "all"] = "last") -> list[str]:
    """Contents of ``\\boxed{...}``/``\\fbox{...}`` (nested braces kept), or ``\\boxed 5``."""
    found: list[str] = []
    matches = list(_BOX_RE.finditer(text))
    if which == "last":
        matches.reverse()
    for m in matches:
        j = m.end()
        while j < len(text) and text[j] == " ":
            j += 1
        if j < len(text) and text[j] == "{":
            group = _brace_group(text, j)
            if group is None:
                continue
            found.append(group[0])
        else:  # `\boxed 5`: one token up to the next space or `$`
            token = re.match(r"[^\s$]+", text[j:])
            if token is None:
                continue
            found.append(token.group(0))
        if which != "all":
            break
    return found


def _strip_wrappers(answer: str) -> str:
    answer = answer.strip()
    for left, right in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("**", "**")):
        if answer.startswith(left) and answer.endswith(right) and len(answer) > len(left) + len(right):
            answer = answer[len(left) : -len(right)].strip()
    return answer.rstrip(" .。").strip()


def _from_source(text: str, source: str, opts: ExtractOptions) -> str | None:
    if source == "boxed":
        boxes = find_boxed(text, which=opts.boxed)
        return boxes[0] if boxes else None
    if source == "answer_tag":
        tags = _TAG_RE.findall(text)
        if not tags:
            return None
        inner = tags[-1]
        boxes = find_boxed(inner)
        return boxes[0] if boxes else _strip_wrappers(inner)
    if source == "final_answer":
        hits = _FINAL_RE.findall(text[-opts.tail_chars :])
        if not hits:
            return None
        boxes = find_boxed(hits[-1])
        return boxes[0] if boxes else _strip_wrappers(hits[-1])
    if source == "answer_line":
        hits = _ANSWER_LINE_RE.findall(text)
        return _strip_wrappers(hits[-1]) if hits else None
    if source == "bold":
        hits = _BOLD_RE.findall(text[-opts.tail_chars :])
        return _strip_wrappers(hits[-1]) if hits else None
    if source == "last_latex":
        return _last_latex(text[-opts.tail_chars :])
    if source == "last_number":
        hits = _NUMBER_RE.findall(text[-opts.tail_chars :])
        return hits[-1].rstrip(",") if hits else None
    raise ValueError(f"unknown extraction source {source!r}")


def _last_latex(text: str) -> str | None:
    spans = [next(g for g in m.groups() if g is not None) for m in _LATEX_SPAN_RE.finditer(text)]
    if not spans:
        return None
    span = spans[-1].strip()
    # "2 + 3 = 5": the answer is the right-hand side of the last equation, unless the left is a
    # lone variable ("x = 3" answers are compared as equations later).
    if "=" in span:
        lhs, rhs = span.rsplit("=", 1)
        if span.count("=") > 1 or not _LONE_VARIABLE_RE.match(lhs.strip()):
            span = rhs.strip()
    return span or None


def extract_answer(text: str, options: ExtractOptions | None = None, **overrides: object) -> Extraction:
    """The final answer of a model response.

    Args:
        text: the full response.
        options: an `ExtractOptions`; keyword `overrides` build one (`strict=True`).

    Returns:
        `Extraction(answer, source)`; `answer` is None when nothing was found (a formatting
        failure, which a reward scores as a wrong answer).

    Example:
        >>> extract_answer("so the answer is \\\\boxed{\\\\frac{1}{2}}.").answer
        '\\\\frac{1}{2}'
    """
    opts = options or ExtractOptions()
    if overrides:
        opts = replace(opts, **overrides)  # type: ignore[arg-type]
    for source in opts._sources:
        answer = _from_source(text, source, opts)
        if answer is not None and answer.strip():
            return Extraction(answer.strip(), source)
    return Extraction(None, None)


def choice_letter(answer: str) -> str | None:
    """`B` for answers like `B`, `(B)`, `\\text{(B)}`, `B.`, `(B) 12`; None otherwise."""
    m = _CHOICE_RE.match(answer.strip())
    return next((g for g in m.groups() if g), None) if m else None
