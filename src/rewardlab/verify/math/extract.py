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

The box primitives live in `verify.math._boxes` and the reading of an answer out of a phrase
(after "the answer is", in a maths span, the last number) in `verify.math._phrases`; this
module chooses among the sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from rewardlab.core.choices import check_choices
from rewardlab.errors import ConfigError
from rewardlab.verify.math._boxes import (
    _BARE_GLUE_CHARS,
    _PLACEHOLDER_MAX,
    _iter_box_spans,
    find_boxed,
    gold_boxes,
    is_placeholder,
)
from rewardlab.verify.math._phrases import (
    _MATHS_RE,
    _NUMBER_RE,
    _PROSE_RE,
    _answer_in_phrase,
    _declines,
    _last_span,
    _span_answer,
    _strip_wrappers,
)
from rewardlab.verify.math.normalize import last_number_word
from rewardlab.verify.math.scan import (
    answer_lines,
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
_WHOLE_MAX = 400
_NOT_WHOLE_RE = re.compile(r"\n|\$|\\[(\[]")  # several lines, or text around maths spans
_CHOICE_RE = re.compile(r"^\(?([A-J])\)?[.:]?$|^\(([A-J])\)\s|^([A-J])[.:)]\s")
# Glue between two boxes that offers them as alternatives ("8 or 10", "alternatively, 10").
_HEDGE_GLUE_RE = re.compile(
    r"\bor\b|\\lor\b|\\vee\b|\balternative(?:ly)?\b|\beither\b|\botherwise\b|\bperhaps\b"
    r"|\bmaybe\b|\bpossibl[ey]\b|\bmight\b|\bcould\s+(?:also\s+)?be\b",
    re.IGNORECASE,
)


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
