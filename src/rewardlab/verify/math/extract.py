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
- ``whole``: the whole response, when it is one short line of maths and not prose (``x+1``,
  ``\\frac{1}{2}``, ``10\\text{ units}``): read whole, before any fallback can take a piece of it;
- ``last_latex``: the last ``$...$``, ``\\(...\\)`` or ``\\[...\\]`` span (right-hand side of an
  equation if it is one);
- ``last_number``: the last number in the text.

`strict=True` (for RL) keeps only ``boxed`` and ``answer_tag``: an answer the policy did not mark
does not count.

Hedging (``hedging="reject"``, the default): the boxes of the *final answer section* (the chosen
box and the boxes chained to it by short glue, see `ExtractOptions`) are returned in
`Extraction.candidates`, so that the reward can refuse ``\\boxed{8} or \\boxed{10} or
\\boxed{9}`` when they are different answers. Placeholder boxes (``\\boxed{\\phantom{2}}``,
``\\boxed{}``, ``\\boxed{?}``, copied from a fill-in-the-box question) are never answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

from rewardlab.core.choices import check_choices
from rewardlab.errors import ConfigError
from rewardlab.verify.math.normalize import is_name, last_number_word, split_top_level
from rewardlab.verify.math.scan import (
    answer_lines,
    brace_pairs,
    final_answer_phrases,
    final_statement,
    last_match,
    tag_contents,
)

__all__ = [
    "SOURCES",
    "ExtractOptions",
    "Extraction",
    "extract_answer",
    "find_boxed",
    "gold_boxes",
    "gold_statement",
    "is_sentence",
]

SOURCES = ("boxed", "answer_tag", "final_answer", "answer_line", "bold", "whole", "last_latex", "last_number")
_STRICT_SOURCES = frozenset({"boxed", "answer_tag"})

_BOLD_RE = re.compile(r"\*\*([^*\n]{1,400})\*\*")
# `\$` is an escaped dollar sign (a currency mark inside maths), never a delimiter. Each
# alternation is unambiguous (`\\.` starts with a backslash, the class excludes it): linear.
_LATEX_SPAN_RE = re.compile(
    r"(?<!\\)\$\$((?:\\.|[^$\\]){1,2000})\$\$|(?<!\\)\$((?:\\.|[^$\n\\]){1,1000})\$"
    r"|\\\((.{1,1000}?)\\\)|\\\[(.{1,2000}?)\\\]",
    re.DOTALL,
)
# Not glued to a letter on its left: the `2` in `AZYUK2A` or `x2` is part of a name, and the one
# in `cm^2` an exponent, not a number. Nor after a single `#`: `horse #12` names a thing (while
# `#### 12`, GSM8K's answer mark, is followed by a space). A ratio or a time (`3:1`, `4:30`) is
# one number, not the one after its last colon.
_NUMBER_RE = re.compile(r"(?<![A-Za-z_\d.^])(?<!(?<!#)#)(?:-?\d[\d,]*(?:\.\d+)?(?:/\d+|(?::\d+)+)?|-?\.\d+)")
# Two words of two or more letters in a row (not LaTeX commands): a sentence, not an answer.
_PROSE_RE = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z]{2,}[ \t]+[a-zA-Z]{2,}(?![a-zA-Z])")
_WHOLE_MAX = 400
_NOT_WHOLE_RE = re.compile(r"\n|\$|\\[(\[]")  # several lines, or text around maths spans
_IS_RE = re.compile(r"\s(?:is|are|equals|=)\s")
_CHOICE_RE = re.compile(r"^\(?([A-J])\)?[.:]?$|^\(([A-J])\)\s|^([A-J])[.:)]\s")
_RELATION_RE = re.compile(r"<=|>=|!=|\\(?:le|ge|ne|leq|geq|neq)(?![a-zA-Z])")
# What is left of a placeholder box once blank-making LaTeX is removed: nothing, `?` or a square.
_BLANK_RE = re.compile(r"\\[hv]?phantom\{[^{}]*\}|\\hspace\*?\{[^{}]*\}|\\q?quad|\\[ ,;:!]|~|\\text\{\s*\}|\s")
_PLACEHOLDER_RE = re.compile(r"^(?:\?+|\\square|\\Box|_+|\.{3}|\\ldots|\\dots)?$")
# Glue between two boxes that offers them as alternatives ("8 or 10", "alternatively, 10").
_HEDGE_GLUE_RE = re.compile(
    r"\bor\b|\\lor\b|\\vee\b|\balternative(?:ly)?\b|\beither\b|\botherwise\b|\bperhaps\b"
    r"|\bmaybe\b|\bpossibl[ey]\b|\bmight\b|\bcould\s+(?:also\s+)?be\b",
    re.IGNORECASE,
)
# Boxes closer than this are one answer section whatever the glue (`\boxed{8}, \boxed{10}`,
# `\] \[`); a derivation between an intermediate box and the final one is longer than this.
_BARE_GLUE_CHARS = 40


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
        hedging: ``"reject"`` collects the boxes of the final answer section into
            `Extraction.candidates` (the reward refuses them when they are different answers);
            ``"last"`` takes the chosen box alone, as graders that ignore hedging do.
        hedge_window: two boxes belong to one answer section when the text between them is at
            most 40 characters, or at most `hedge_window` characters and offers an alternative
            ("or", "alternatively", "could also be", ...). Boxes further apart are reasoning
            followed by a conclusion: only the chosen box counts.
    """

    priority: tuple[str, ...] = SOURCES
    strict: bool = False
    boxed: Literal["last", "first"] = "last"
    tail_chars: int = 4000
    hedging: Literal["reject", "last"] = "reject"
    hedge_window: int = 300
    _sources: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unknown = [s for s in self.priority if s not in SOURCES]
        if unknown:
            raise ConfigError(f"unknown extraction source(s) {unknown}; choose from {list(SOURCES)}")
        check_choices(type(self), hedging=self.hedging)
        if self.hedge_window < 0:
            raise ConfigError(f"hedge_window must be >= 0 characters, got {self.hedge_window}")
        sources = tuple(s for s in self.priority if not self.strict or s in _STRICT_SOURCES)
        object.__setattr__(self, "_sources", sources)


_DEFAULT_OPTIONS = ExtractOptions()  # built once: validation is not free at 20,000 calls a second


@dataclass(frozen=True)
class Extraction:
    """What was extracted.

    Attributes:
        answer: the answer text, or None when nothing was found.
        source: the source that found it (a name from `SOURCES`).
        candidates: with ``hedging="reject"``, every box of the final answer section in order
            (`answer` among them) when there are two or more; empty otherwise. Several
            different candidates are a hedge, unless the reference has as many parts.
    """

    answer: str | None
    source: str | None
    candidates: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.answer is not None


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


def _glued(text: str, start: int, end: int, opts: ExtractOptions) -> bool:
    """Whether `text[start:end]`, between two boxes, keeps them in one answer section."""
    gap = end - start
    if gap <= _BARE_GLUE_CHARS:
        return True
    return gap <= opts.hedge_window and _HEDGE_GLUE_RE.search(text, start, end) is not None


def boxed_section(text: str, options: ExtractOptions | None = None) -> tuple[str, ...]:
    """The boxes of the final answer section, in reading order, placeholders left out.

    The section starts at the chosen box (`options.boxed`: the last, or the first) and takes
    its neighbours while the text between two boxes is short glue (`ExtractOptions`). With
    ``hedging="last"`` it is the chosen box alone.
    """
    opts = options or _DEFAULT_OPTIONS
    last = opts.boxed == "last"
    section: list[tuple[int, int, int, int]] = []
    for span in _iter_box_spans(text, reverse=last):
        start, c_start, c_end, end = span
        if section:
            near_start, _, _, near_end = section[-1]
            if (end > near_start) if last else (start < near_end):
                continue  # a box nested in (or around) the one already taken
        if c_end - c_start <= _PLACEHOLDER_MAX and is_placeholder(text[c_start:c_end]):
            continue
        if section and not (_glued(text, end, near_start, opts) if last else _glued(text, near_end, start, opts)):
            break
        section.append(span)
        if opts.hedging == "last":
            break
    if last:
        section.reverse()
    return tuple(text[c_start:c_end].strip() for _, c_start, c_end, _ in section)


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


def _strip_wrappers(answer: str) -> str:
    answer = answer.strip()
    # quotes too: `The final answer is "$12$ and $13$".` (also escaped, `\\"...\\"`)
    for left, right in (('\\"', '\\"'), ('"', '"'), ("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("**", "**")):
        if answer.startswith(left) and answer.endswith(right) and len(answer) > len(left) + len(right):
            answer = answer[len(left) : -len(right)].strip()
    return answer.rstrip(" .。").strip()


def _from_boxes(text: str, opts: ExtractOptions) -> tuple[str, tuple[str, ...]] | None:
    section = [box for box in boxed_section(text, opts) if box]
    if not section:
        return None
    answer = section[-1] if opts.boxed == "last" else section[0]
    return answer, tuple(section) if len(section) > 1 else ()


def _from_tags(tags: list[str], opts: ExtractOptions) -> tuple[str, tuple[str, ...]] | None:
    """The last `<answer>` tag's answer (a box inside it preferred). Every tag is a final answer,
    so with ``hedging="reject"`` several tags all become candidates, wherever they are."""
    found = [_from_boxes(tag, opts) or (_strip_wrappers(tag), ()) for tag in tags]
    found = [(answer, inner) for answer, inner in found if answer.strip()]
    if not found:
        return None
    answer, inner = found[-1]
    if opts.hedging == "reject" and len(found) > 1:
        inner = tuple(box for tag_answer, boxes in found for box in (boxes or (tag_answer,)))
    return answer, inner


def _from_source(text: str, source: str, opts: ExtractOptions) -> tuple[str, tuple[str, ...]] | None:
    """(answer, section candidates) found by one source, or None."""
    if source == "boxed":
        return _from_boxes(text, opts)
    if source == "answer_tag":
        return _from_tags(tag_contents(text), opts)
    if source == "final_answer":
        phrase = next(final_answer_phrases(text[-opts.tail_chars :]), None)
        return (_from_boxes(phrase, opts) or (_answer_in_phrase(phrase), ())) if phrase is not None else None
    hit: str | None = None
    if source == "whole":
        whole = _strip_wrappers(text) if len(text) <= 2 * _WHOLE_MAX else ""
        if 0 < len(whole) <= _WHOLE_MAX and not _NOT_WHOLE_RE.search(whole) and not _PROSE_RE.search(whole):
            hit = whole
    elif source == "answer_line":
        line = next(answer_lines(text), None)
        hit = _answer_in_phrase(line) if line is not None else None
    elif source == "bold":
        spans = _BOLD_RE.findall(text[-opts.tail_chars :])
        hit = _strip_wrappers(spans[-1]) if spans else None
    else:
        raise ConfigError(f"unknown extraction source {source!r}")
    return (hit, ()) if hit is not None else None


def gold_statement(text: str) -> str | None:
    """The answer of a gold's last "the final answer is ..." statement (a worked solution in
    Minerva's format), or None when it has none."""
    statement = final_statement(text)
    if statement is None:
        return None
    return _answer_in_phrase(statement[1]).strip() or None


def _answer_in_phrase(phrase: str) -> str:
    """The answer in what follows "the final answer is". Usually that is the answer itself; when
    it goes on in prose (``12 because the two sides are equal``, ``12 (since x = 3)``) it is the
    maths before the remark; when it is a sentence (Minerva's ``Final Answer: The largest $n$ is
    34.``) it is what follows its last "is", else its last maths span or number, else the
    sentence as written."""
    answer = _strip_wrappers(phrase)
    head = _leading_answer(answer)
    if head is not None:
        return head
    if not _PROSE_RE.search(answer):
        return answer
    verbs = list(_IS_RE.finditer(answer))
    if verbs:
        rest = _strip_wrappers(answer[verbs[-1].end() :])
        if rest and not _PROSE_RE.search(rest):
            return rest
    numbers = _NUMBER_RE.findall(answer)
    return _last_latex(answer) or (numbers[-1].rstrip(",") if numbers else answer)


# Where a remark starts after an answer: a parenthesis or a comma opening a word ("12 (since x
# = 3)", "34, the largest"), or a semicolon.
_REMARK_RE = re.compile(r"\s\((?=[a-zA-Z]{2,}\b)|,\s+(?=[a-zA-Z]{2,}\b)|;\s")
# A remark that offers another answer or adds a part is no remark: "3, or 4", "1, and 2".
_ALTERNATIVE_RE = re.compile(r"[\s,;(]*(?:or|and)\b", re.IGNORECASE)


def _leading_answer(answer: str) -> str | None:
    """The maths at the head of a phrase that goes on in prose or a remark, or None when the
    phrase does not start with one: `12` for ``12 because the two sides are equal`` and for
    ``12 (since x = 3)``; None for ``The largest $n$ is 34`` (prose first) and ``3, or 4``."""
    cut = len(answer)
    for pattern in (_PROSE_RE, _REMARK_RE):
        m = pattern.search(answer)
        if m is not None and m.start() < cut:
            cut = m.start()
    if cut == len(answer) or _ALTERNATIVE_RE.match(answer, cut):
        return None
    head = _strip_wrappers(answer[:cut].rstrip(" ,;:"))
    if not head or not _closed(head):
        return None
    span = _SPAN_THEN_WORDS_RE.fullmatch(head)
    if span is not None:  # `$\frac{3}{4}$ cups`: the maths span is the answer, the word its unit
        return span.group(1).strip()
    return head if _MATHS_RE.search(head) or len(head.split()) == 1 else None


_SPAN_THEN_WORDS_RE = re.compile(r"\$([^$]{1,400})\$[ \t]*[a-zA-Z][a-zA-Z \t]{0,40}")


def _closed(text: str) -> bool:
    """Whether every bracket and `$` opened in `text` is closed in it (a head cut inside a
    `\\text{...}` or a maths span is not an answer)."""
    return (
        text.count("$") % 2 == 0
        and text.count("{") == text.count("}")
        and text.count("(") == text.count(")")
        and text.count("[") == text.count("]")
    )


def _last_span(text: str) -> tuple[str, int] | None:
    """(content, end) of the last ``$...$``, ``\\(...\\)`` or ``\\[...\\]`` span."""
    last = last_match(_LATEX_SPAN_RE, text)
    if last is None:
        return None
    return next(g for g in last.groups() if g is not None), last.end()


def _last_latex(text: str) -> str | None:
    found = _last_span(text)
    return _span_answer(found[0]) if found is not None else None


def _span_answer(span: str) -> str | None:
    # "2 + 3 = 5": the answer is the right-hand side of the last equation, unless the left is a
    # name ("x = 3", "f(x) = 1", "(p,q) = (3,2)": compared as such later); an inequality
    # ("x <= 2") is the answer as written. Only a top-level `=` splits: the one in
    # `\sum_{k=0}^{n}` is part of a bound.
    span = span.strip()
    if "=" in span and not _RELATION_RE.search(span):
        members = split_top_level(span, "=")
        if len(members) > 2 or (len(members) == 2 and not is_name(members[0])):
            span = members[-1]
    return span or None


def _last_fallback(text: str, opts: ExtractOptions) -> tuple[str, str] | None:
    """(answer, source) of the fallback sources ``last_latex`` and ``last_number`` read by
    position: the one whose match ends later in the text wins (a number in the prose after the
    last maths span, ``... there are 12 sequences.``, is the later statement)."""
    tail = text[-opts.tail_chars :]
    span = _last_span(tail) if "last_latex" in opts._sources else None
    number = None
    if "last_number" in opts._sources:
        number = last_match(_NUMBER_RE, tail, span[1] if span is not None else 0)
    if number is not None:
        return number.group(0).rstrip(","), "last_number"
    answer = _span_answer(span[0]) if span is not None else None
    if answer:
        return answer, "last_latex"
    if "last_number" in opts._sources and span is None and not any(ch.isdigit() for ch in tail):
        # prose with no digit at all ("There are three objects left."): a count in words
        word = last_number_word(tail)
        if word is not None:
            return word, "last_number"
    return None


def extract_answer(text: str, options: ExtractOptions | None = None, **overrides: object) -> Extraction:
    """The final answer of a model response.

    Args:
        text: the full response.
        options: an `ExtractOptions`; keyword `overrides` build one (`strict=True`).

    Returns:
        `Extraction(answer, source)`; `answer` is None when nothing was found (a formatting
        failure, which a reward scores as a wrong answer).

    Examples:
        >>> extract_answer("so the answer is \\\\boxed{\\\\frac{1}{2}}.").answer
        '\\\\frac{1}{2}'
    """
    opts = options or _DEFAULT_OPTIONS
    if overrides:
        opts = replace(opts, **overrides)  # type: ignore[arg-type]
    if "<" in text:
        reasoning_end = last_match(_REASONING_END_RE, text)
        text = strip_chat_tokens(text)
        if reasoning_end is not None:
            # What follows the reasoning block is the response proper: boxes inside the block
            # are drafts, not alternatives offered next to the final answer.
            after = _extract(strip_chat_tokens(_text_after(reasoning_end)), opts)
            if after and not _weak_after_reasoning(after):
                return after
            # Only a stray number, maths span or words after the block: the whole text decides
            # (a box in the block beats them, as it would anywhere)
    return _extract(text, opts)


# The end of a reasoning block: `</think>` (DeepSeek-R1, Qwen3), `<|end_of_thought|>` (SkyThought,
# Bespoke), `</reasoning>`, `</thinking>`.
_REASONING_END_RE = re.compile(r"</think>|</thinking>|</reasoning>|<\|end_of_thought\|>", re.IGNORECASE)


def _text_after(match: re.Match[str]) -> str:
    """The text after `match` in the string it was found in."""
    return match.string[match.end() :]
# Chat-template control tokens a decoder may leave in the text (`<|im_end|>`, `<|endoftext|>`,
# `<|eot_id|>`, `</s>`): never part of an answer.
_CHAT_TOKEN_RE = re.compile(r"<\|[A-Za-z0-9_.\-]{1,40}\|>|</s>|<eos>|<end_of_turn>")


_WORD_RE = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z]{2,}")


def _weak_after_reasoning(found: Extraction) -> bool:
    """Whether what follows a reasoning block only has a fallback reading (a last number or
    span), or is words read whole (`I checked 3 cases.`): no answer stated there."""
    return found.source in _FALLBACKS or (found.source == "whole" and _WORD_RE.search(found.answer or "") is not None)


def strip_chat_tokens(text: str) -> str:
    """`text` without chat-template control tokens (`42<|im_end|>` is `42`)."""
    return _CHAT_TOKEN_RE.sub("", text) if "<" in text else text


def _extract(text: str, opts: ExtractOptions) -> Extraction:
    fallbacks_tried = False
    for source in opts._sources:
        if source in _FALLBACKS:  # both read at once, by position
            if fallbacks_tried:
                continue
            fallbacks_tried = True
            fallback = _last_fallback(text, opts)
            if fallback is not None and fallback[0].strip() and not _declines(text, fallback[0]):
                return Extraction(fallback[0].strip(), fallback[1])
            continue
        found = _from_source(text, source, opts)
        if found is not None and found[0].strip():
            if source == "boxed":
                later = _statement_after_boxes(text, opts)
                if later is not None:
                    return Extraction(later, "final_answer")
            return Extraction(found[0].strip(), source, found[1])
    return Extraction(None, None)


_FALLBACKS = frozenset({"last_latex", "last_number"})
# A closing paragraph saying the question cannot be answered ("... it's impossible to find the
# value of f(0).", "The text does not provide enough information", "we cannot determine the
# answer"). A fallback reading is a guess at an answer the response did not state; when the
# response ends by declining to answer, the number it happens to mention last is no answer.
_DECLINE_RE = re.compile(
    r"\b(?:cannot|can't|can not|unable to|impossible to|not possible to)\s+(?:be\s+)?"
    r"(?:determined?|answer(?:ed)?|provided?|calculated?|find|found|tell|say|computed?|give|given"
    r"|know|view|see|access|read|identif(?:y|ied))\b"
    r"|\b(?:do|does|did)\s*(?:not|n't)\s+have\s+access\b|\bplease\s+provide\b"
    r"|\b(?:not|no)\s+(?:enough|sufficient)\s+(?:information|data|context)\b"
    r"|\b(?:does|do|did)\s+not\s+(?:provide|give|contain|include|specify|show)\b[^.\n]{0,80}\b(?:information|data|values?)\b"
    r"|\b(?:need(?:s|ed)?|provide)\s+(?:more|additional|further)\s+(?:information|data|context)\b",
    re.IGNORECASE,
)


_SENTENCE_END_RE = re.compile(r"[.!?](?=\s)|\n")


def _declines(text: str, answer: str) -> bool:
    """Whether the response's close says the question cannot be answered, in the sentence of
    the fallback `answer` or after it ("... so the count is 0." after "the image does not show
    the values" states an answer; "we cannot determine f(0)" does not)."""
    tail = text.rstrip()[-600:]
    at = tail.rfind(answer)
    sentence_start = 0
    if at >= 0:
        ends = [m.end() for m in _SENTENCE_END_RE.finditer(tail, 0, at)]
        sentence_start = ends[-1] if ends else 0
    return any(m.end() > sentence_start for m in _DECLINE_RE.finditer(tail))


def _statement_after_boxes(text: str, opts: ExtractOptions) -> str | None:
    """The answer of a "the final answer is ..." statement written after the last box, or None.

    Boxes mark intermediate results as well as final ones (``$0.04 \\cdot 10000 / 2 =
    \\boxed{200}$ ... Final Answer: The final answer is $10,455$.``); an explicit closing
    statement after every box is the response's last word, when it states maths (a digit, a
    LaTeX command or a ``$`` span). Only with ``boxed="last"`` and when ``final_answer`` is a
    source."""
    if opts.boxed != "last" or "final_answer" not in opts._sources:
        return None
    statement = final_statement(text[-opts.tail_chars :])
    if statement is None:
        return None
    start = len(text) - min(len(text), opts.tail_chars) + statement[0]
    last_box_end = max((span[3] for span in _iter_box_spans(text, reverse=True)), default=None)
    if last_box_end is None or last_box_end > start:
        return None
    answer = _answer_in_phrase(statement[1]).strip()
    # Only maths overrides a box: "I hope the final answer is correct" states no answer.
    return answer if _MATHS_RE.search(answer) and not _PROSE_RE.search(answer) else None


_MATHS_RE = re.compile(r"\d|\\[a-zA-Z]|\$")


def is_sentence(answer: str) -> bool:
    """Whether `answer` reads as prose (two words in a row: ``The answer is 12 because ...``)
    rather than as an answer (``12``, ``x + 1``, ``\\frac{1}{2}``)."""
    return _PROSE_RE.search(answer) is not None


def choice_letter(answer: str, *, lowercase: bool = False) -> str | None:
    """`B` for answers like `B`, `(B)`, `\\text{(B)}`, `B.`, `(B) 12`; None otherwise. With
    `lowercase=True` an option written in lower case (`b`, `(b)`, `b.`) is `B` too."""
    text = answer.strip()
    m = _CHOICE_RE.match(text)
    if m is None and lowercase and len(text) <= 8:
        m = _CHOICE_RE.match(text.upper()) if text.upper() != text else None
    return next((g for g in m.groups() if g), None) if m else None
