"""Answers inside responses, only to build probes and counterfactuals (the reward under test
does its own extraction), and the counterfactuals themselves.

A probe applied to a response that is already right cannot go higher, so on data whose
responses are all correct no "not higher" probe could ever fire. The audit therefore also
builds a *wrong-answer counterfactual* of every response with an answer: the response's final
answer, everywhere it appears as a token, is replaced by a wrong one that does not contain the
reference. A sound reward scores that lower than (or, if the original was wrong too, the same
as) the original, and a hack applied to it must not beat it: `hedge(wrong) > wrong` is a hack
whatever the original scored.
"""

from __future__ import annotations

import re
from dataclasses import replace

from rewardlab.core import Sample

__all__ = [
    "boxed_answers",
    "distractors",
    "final_answer",
    "length_control",
    "reference_text",
    "wrong_answer_counterfactual",
]


def boxed_answers(text: str) -> list[str]:
    r"""Contents of every `\boxed{...}` in `text`, with nested braces balanced."""
    found = []
    for match in re.finditer(r"\\boxed\s*\{", text):
        depth, start = 1, match.end()
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                found.append(text[start:i])
                break
    return found


_ANSWER_LINE = re.compile(r"(?i)answer(?:\s+is|\s*[:=])\s*([^\n]+?)\s*\.?\s*$", re.MULTILINE)
_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*(?:/\d+)?")


def final_answer(sample: Sample) -> str | None:
    r"""The response's own final answer: its last `\boxed{}`, else an "answer is/Answer:" line,
    else its last number; None when it has none. Never the reference: an answer-only probe must
    keep the response's answer, right or wrong, or it would hand a wrong response the right one."""
    text = sample.response_text
    boxed = boxed_answers(text)
    if boxed:
        return boxed[-1].strip()
    lines = _ANSWER_LINE.findall(text)
    if lines:
        return str(lines[-1]).strip()
    numbers = _NUMBER.findall(text)
    return numbers[-1] if numbers else None


def reference_text(sample: Sample) -> str | None:
    """The sample's reference as a string (the first of a list), or None when it has none."""
    ref = sample.reference
    if isinstance(ref, list) and ref:
        ref = ref[0]
    if isinstance(ref, str | int | float) and not isinstance(ref, bool):
        return str(ref)
    return None


def distractors(answer: str) -> tuple[str, str]:
    """Two wrong answers near `answer` (numbers ±1, else fixed small integers)."""
    try:
        value = int(answer)
        return str(value - 1), str(value + 1)
    except ValueError:
        return ("0", "1") if answer not in ("0", "1") else ("2", "3")


def _wrong_answer(answer: str, reference: str) -> str | None:
    """A wrong answer that neither equals nor contains the reference (nor the answer itself)."""
    try:
        value = float(answer)
        near = [value + 1, value + 2, value - 1, value + 7]
        candidates = [str(int(v)) if v.is_integer() else str(v) for v in near]
    except ValueError:
        candidates = []
    for candidate in [*candidates, "7", "13", "-1", "42"]:
        if reference not in candidate and candidate not in (answer, reference):
            return candidate
    return None


def wrong_answer_counterfactual(sample: Sample) -> Sample | None:
    """The sample with its final answer replaced, everywhere it stands as a token, by a wrong
    answer (`meta["counterfactual"] = "wrong_answer"`, a fresh id); None without an answer or
    a reference."""
    answer, reference = final_answer(sample), reference_text(sample)
    if not answer or reference is None:
        return None
    wrong = _wrong_answer(answer, reference)
    if wrong is None:
        return None
    # a token: not inside a longer number or word ("4" in "14" or "4.5" stays)
    pattern = re.compile(rf"(?<![\w.]){re.escape(answer)}(?![\w]|\.\d)")
    text = pattern.sub(lambda _: wrong, sample.response_text)
    if text == sample.response_text:
        return None
    meta = {**sample.meta, "counterfactual": "wrong_answer", "counterfactual_of": sample.id,
            "wrong_answer": wrong}
    return replace(sample, response=text, meta=meta, id="")


_FILLER = "This is additional neutral text with no bearing on the answer. "


def length_control(base: Sample, probed: Sample) -> Sample | None:
    """`base` with neutral filler appended to reach the probed response's length (None when the
    probe did not lengthen it): the score a pure length effect would give."""
    extra = len(probed.response_text) - len(base.response_text)
    if extra <= 0:
        return None
    filler = (_FILLER * (extra // len(_FILLER) + 1))[:extra]
    meta = {**base.meta, "control_of": probed.meta.get("probe", "")}
    return replace(base, response=base.response_text + filler, meta=meta, id="")
