"""Boxes in a text: ``\\boxed{...}``/``\\fbox{...}`` (nested braces kept) or ``\\boxed 5``.

The box primitives of answer extraction (`rewardlab.verify.math.extract`, which re-exports the
public names): where each box is (`_iter_box_spans`, linear in the text: groups come from the
closed brace pairs), which boxes hold no answer (`is_placeholder`), and a gold answer's final
section of boxes (`gold_boxes`). The final section of a *response*, where boxes may hedge, is
`extract.boxed_section`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

from rewardlab.verify.math.scan import brace_pairs

# What is left of a placeholder box once blank-making LaTeX is removed: nothing, `?` or a square.
_BLANK_RE = re.compile(r"\\[hv]?phantom\{[^{}]*\}|\\hspace\*?\{[^{}]*\}|\\q?quad|\\[ ,;:!]|~|\\text\{\s*\}|\s")
_PLACEHOLDER_RE = re.compile(r"^(?:\?+|\\square|\\Box|_+|\.{3}|\\ldots|\\dots)?$")
# Boxes closer than this are one answer section whatever the glue (`\boxed{8}, \boxed{10}`,
# `\] \[`); a derivation between an intermediate box and the final one is longer than this.
_BARE_GLUE_CHARS = 40
_TOKEN_RE = re.compile(r"[^\s$]{1,400}")
_PLACEHOLDER_MAX = 100  # a blank box (`\\phantom{2}`, `\\hspace{1cm}`) is short; longer content is an answer
_TOKEN_BOX_RE = re.compile(r"\\(?:boxed|fbox)\b(?! *\{) *")  # `\boxed 5`: no brace group


def _box_start(text: str, brace: int) -> int | None:
    """Where the `\\boxed`/`\\fbox` whose group opens at `brace` starts, or None."""
    k = brace
    while k > 0 and text[k - 1] == " ":
        k -= 1
    for name in ("\\boxed", "\\fbox"):
        if text.endswith(name, 0, k):
            return k - len(name)
    return None


def _iter_box_spans(text: str, *, reverse: bool) -> Iterator[tuple[int, int, int, int]]:
    """(start, content start, content end, end) of each box: ``\\boxed{...}`` with nested braces,
    or ``\\boxed 5``. Spans, not slices: nested boxes would make the slices quadratic in size.

    Boxes with a group are found from the closed brace pairs (`brace_pairs`), so unclosed
    ``\\boxed{`` repeated costs no Python-level work per box."""
    spans: list[tuple[int, int, int, int]] = []
    if "{" in text:
        for brace, close in brace_pairs(text).items():
            start = _box_start(text, brace)
            if start is not None:
                spans.append((start, brace + 1, close, close + 1))
    for m in _TOKEN_BOX_RE.finditer(text):
        token = _TOKEN_RE.match(text, m.end())
        if token is not None:
            spans.append((m.start(), m.end(), token.end(), token.end()))
    spans.sort(reverse=reverse)
    yield from spans


def _iter_boxes(text: str, *, reverse: bool) -> Iterator[tuple[str, int, int]]:
    """(content, start, end) of each box."""
    for start, c_start, c_end, end in _iter_box_spans(text, reverse=reverse):
        yield text[c_start:c_end], start, end


def find_boxed(text: str, *, which: Literal["last", "first", "all"] = "last") -> list[str]:
    """Contents of ``\\boxed{...}``/``\\fbox{...}`` (nested braces kept), or ``\\boxed 5``."""
    if which == "all":
        return [content for content, _, _ in _iter_boxes(text, reverse=False)]
    chosen = next(_iter_boxes(text, reverse=which == "last"), None)
    return [chosen[0]] if chosen is not None else []


def is_placeholder(content: str) -> bool:
    """Whether a box holds no answer: ``\\phantom{2}``, blank, ``?``, ``\\square``, ``___``."""
    if len(content) > _PLACEHOLDER_MAX:
        return False
    return bool(_PLACEHOLDER_RE.match(_BLANK_RE.sub("", content)))


# Glue that enumerates the parts of one answer: spacing, `$`, punctuation and symbols (no word,
# no digit: `\\boxed{1} ++ \\boxed{2}`), or an "and"; a trailing backslash is the doubled escape
# of `\\\\boxed`.
_SPACING_GLUE_RE = re.compile(r"(?:\s|[,;:$.+\-*/&|!?~]|\\[()\[\] ,;:!]|\\q?quad\b)*\\?")
_AND_GLUE_RE = re.compile(r",|\band\b", re.IGNORECASE)


def gold_boxes(text: str) -> tuple[str, ...]:
    """The boxes of a gold answer's final section: the last box, and the boxes before it
    joined to it by at most 40 characters that only space them out, separate them with symbols
    or enumerate them (``\\boxed{1}\\boxed{2}``, ``\\boxed{1} ++ \\boxed{2}``, ``\\boxed{1} papers
    and \\boxed{2} bins``). A gold never hedges, so these are the parts of one answer; words
    between boxes (``\\boxed{1} no no no \\boxed{2}``) end the section."""
    section: list[tuple[int, int, int, int]] = []
    for span in _iter_box_spans(text, reverse=True):
        _, c_start, c_end, end = span
        if section:
            near_start = section[-1][0]
            if end > near_start:
                continue  # nested
            glue = text[end:near_start]
            if len(glue) > _BARE_GLUE_CHARS or not (_SPACING_GLUE_RE.fullmatch(glue) or _AND_GLUE_RE.search(glue)):
                break
        if c_end - c_start <= _PLACEHOLDER_MAX and is_placeholder(text[c_start:c_end]):
            continue
        section.append(span)
    return tuple(text[c_start:c_end].strip() for _, c_start, c_end, _ in reversed(section))
