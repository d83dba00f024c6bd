"""Linear-time scanners for the extraction step (they run in the caller's process, where no
timeout applies, so none of them may backtrack or rescan on unbounded input).

Each function is one left-to-right pass (or a constant number of passes) over its input.
The regexes used are either anchored on a literal with bounded quantifiers after it, or run
on one line at a time with a single unambiguous quantifier: no nested or adjacent quantifiers
over the same characters, which is what makes a backtracking engine go quadratic or worse.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator

import numpy as np

__all__ = ["answer_lines", "brace_pairs", "final_answer_phrases", "final_statement", "last_match", "tag_contents"]


def last_match(pattern: re.Pattern[str], text: str, pos: int = 0) -> re.Match[str] | None:
    """The last non-overlapping match of `pattern` in `text[pos:]` (one `finditer` pass)."""
    found = deque(pattern.finditer(text, pos), maxlen=1)
    return found[0] if found else None

_BRACE_RE = re.compile(r"(?<!\\)[{}]")  # `\{` and `\}` are literal set braces, not groups


_NUMPY_FROM = 20_000  # characters; below this the plain loop is faster than setting up arrays


def brace_pairs(text: str) -> dict[int, int]:
    """For every `{` (not `\\{`) that is closed, the index of its matching `}`.

    The matching brace of an opening at `p` depends only on the text after `p`, so computing
    every pair at once gives each box its group in O(1) instead of a scan to the end per box
    (which is quadratic on `\\boxed{` repeated without a closing brace). One pass with a
    stack; on long texts the same pairing is computed with numpy (`_brace_pairs_numpy`).
    """
    if len(text) >= _NUMPY_FROM:
        return _brace_pairs_numpy(text)
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACE_RE.finditer(text):
        i = m.start()
        if text[i] == "{":
            stack.append(i)
        elif stack:
            pairs[stack.pop()] = i
    return pairs


def _brace_pairs_numpy(text: str) -> dict[int, int]:
    """`brace_pairs` by levels: give each `{` the depth after it and each `}` the depth before
    it. An opening's match is the first later closing of the same level (the depth cannot come
    back to that level earlier, as it moves by one), so sorted by (level, position) each
    matched opening is immediately followed by its closing."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    escaped = np.zeros(len(codes), dtype=bool)
    escaped[1:] = codes[:-1] == ord("\\")
    is_open = (codes == ord("{")) & ~escaped
    is_close = (codes == ord("}")) & ~escaped
    where = np.flatnonzero(is_open | is_close)
    if len(where) < 2:
        return {}
    opening = is_open[where]
    depth = np.cumsum(np.where(opening, 1, -1))
    level = np.where(opening, depth, depth + 1)
    order = np.lexsort((where, level))
    first, second = order[:-1], order[1:]
    matched = opening[first] & ~opening[second] & (level[first] == level[second])
    return dict(zip(where[first[matched]].tolist(), where[second[matched]].tolist(), strict=True))


def tag_contents(text: str, open_tag: str = "<answer>", close_tag: str = "</answer>") -> list[str]:
    """Contents of non-overlapping `<answer>...</answer>` pairs (case-insensitive), in order.

    Same result as a lazy `<answer>(.*?)</answer>` regex, but when no closing tag follows an
    opening one the scan stops at once instead of trying every later opening to the end.
    """
    low = text.lower()
    out: list[str] = []
    pos = 0
    while True:
        i = low.find(open_tag, pos)
        if i < 0:
            return out
        j = low.find(close_tag, i + len(open_tag))
        if j < 0:
            return out  # no closing tag anywhere after: no later opening can be closed either
        out.append(text[i + len(open_tag) : j])
        pos = j + len(close_tag)


# "final answer is", "the answer is", "Final Answer:", "the answer to the question is", "the final
# answer would be:", with at most 20 spaces between the words (bounded, so a run of spaces costs
# nothing).
_FINAL_MARK_RE = re.compile(
    r"(?:final[ \t]{1,20}answer[ \t]{1,20}would[ \t]{1,20}be\b"
    r"|(?:final[ \t]{1,20}answer|the[ \t]{1,20}answer(?:[ \t]{1,20}to[ \t]{1,20}(?:the|this)[ \t]{1,20}(?:question|problem))?)"
    r"[ \t]{0,20}(?:is\b|:))[ \t]{0,20}:?",
    re.IGNORECASE,
)
_FINAL_MAX = 400  # longest answer read after a marker


def _phrase_end(text: str, start: int) -> int | None:
    """Where the answer that begins at `start` ends: a full stop followed by a space or the end,
    or a line break; None when that is more than 400 characters away."""
    stop = min(len(text), start + _FINAL_MAX + 2)
    i = start
    while i < stop:
        ch = text[i]
        if ch == "\n":
            return i
        if ch == "." and (i + 1 >= len(text) or text[i + 1].isspace()):
            # `3.` at the very end, or `3. Next sentence`: not the point in `3.5`
            return i
        i += 1
    return len(text) if stop == len(text) else None


def final_answer_phrases(text: str) -> Iterator[str]:
    """The answers written after "the (final) answer is", last first.

    Each marker is read on its own, so in Minerva's ``Final Answer: The final answer is 7.78.``
    the last marker gives ``7.78`` (the first marker's phrase would be the sentence that holds
    the second one).
    """
    marks = list(_FINAL_MARK_RE.finditer(text))
    for m in reversed(marks):
        start = m.end()
        while start < len(text) and text[start] in " \t":
            start += 1
        end = _phrase_end(text, start)
        if end is not None and end > start:
            yield text[start:end]


# Only "final answer is" / "Final Answer:": the explicit closing statement (Minerva's format), not
# the weaker "the answer is", which also opens reasoning ("the answer is not 12, since ...").
_FINAL_ONLY_RE = re.compile(r"final[ \t]{1,20}answer[ \t]{0,20}(?:is\b|:)", re.IGNORECASE)


def final_statement(text: str) -> tuple[int, str] | None:
    """(start, answer) of the last "the final answer is ..." statement, or None.

    The answer is read after the last marker of the statement's line (``Final Answer: The final
    answer is 7.78.`` gives ``7.78``), as `final_answer_phrases` reads it.
    """
    last = last_match(_FINAL_ONLY_RE, text)
    if last is None:
        return None
    phrase = next(final_answer_phrases(text[last.start() :]), None)
    return (last.start(), phrase) if phrase else None


_ANSWER_HEAD_RE = re.compile(r"[ \t>*#]{0,20}answer[ \t]{0,20}[:：]|[ \t]{0,20}####", re.IGNORECASE)


def answer_lines(text: str) -> Iterator[str]:
    """The text after "Answer:" (or GSM8K's "####") at the start of a line, last line first;
    lines whose answer is longer than 400 characters are skipped."""
    end = len(text)
    while end >= 0:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        m = _ANSWER_HEAD_RE.match(line)
        if m is not None:
            rest = line[m.end() :].strip()
            if 0 < len(rest) <= _FINAL_MAX:
                yield rest
        if start == 0:
            return
        end = start - 1
