"""Reading an answer out of a phrase: the answer-span heuristics of extraction.

What follows "the final answer is" (`_answer_in_phrase`: the maths before a remark, what follows
a sentence's last "is", its last maths span or number), the last ``$...$`` / ``\\(...\\)`` /
``\\[...\\]`` span and the right-hand side of an equation in it (`_last_span`, `_span_answer`),
the last number (`_NUMBER_RE`), prose (`_PROSE_RE`) and a close that declines to answer
(`_declines`). Used by `rewardlab.verify.math.extract`; every pattern is bounded (linear time).
"""

from __future__ import annotations

import re

from rewardlab.verify.math.normalize import is_name, split_top_level
from rewardlab.verify.math.scan import last_match

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
_IS_RE = re.compile(r"\s(?:is|are|equals|=)\s")
_RELATION_RE = re.compile(r"<=|>=|!=|\\(?:le|ge|ne|leq|geq|neq)(?![a-zA-Z])")
_MATHS_RE = re.compile(r"\d|\\[a-zA-Z]|\$")


def _strip_wrappers(answer: str) -> str:
    answer = answer.strip()
    # quotes too: `The final answer is "$12$ and $13$".` (also escaped, `\\"...\\"`)
    for left, right in (('\\"', '\\"'), ('"', '"'), ("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("**", "**")):
        if answer.startswith(left) and answer.endswith(right) and len(answer) > len(left) + len(right):
            answer = answer[len(left) : -len(right)].strip()
    return answer.rstrip(" .。").strip()


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

