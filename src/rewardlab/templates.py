"""Prompt templates and score parsing, for LLM judges (`rewardlab.judges`) and the OpenAI-style
graders (`rewardlab.verify.graders`): below both, as it needs only `core`.

Templates use `{{ name }}` placeholders (the mustache style OpenAI graders use, so imported
graders keep their text): `prompt`, `response`, `reference`, `meta.<key>`, and the OpenAI
grader names `sample.output_text` (= response) and `item.<key>` (= the reference's or meta's
field, or the reference itself for `item.reference`). A placeholder with no value is an
`invalid_input` error for the row, not an empty string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from rewardlab.core import JSON, Sample
from rewardlab.errors import ScoringError

__all__ = ["BUILTIN", "PAIRWISE", "parse_score", "placeholders", "render"]

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
_MISSING = object()

# Built-in templates: (system, user, score regex, scale). The "[[N]]" form follows the
# MT-Bench single-answer grading prompt (Zheng et al. 2023, "Judging LLM-as-a-Judge").
BUILTIN: dict[str, tuple[str, str, str, tuple[float, float]]] = {
    "score_1_10": (
        "You are an impartial judge. Rate the quality of the assistant's response to the user's "
        "question. Consider helpfulness, correctness and clarity. Give a short explanation, then "
        'your rating strictly as "Rating: [[N]]" with N an integer from 1 to 10.',
        "[Question]\n{{ prompt }}\n\n[Response]\n{{ response }}",
        r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]",
        (1.0, 10.0),
    ),
    "reference_1_10": (
        "You are an impartial judge. Compare the assistant's response with the reference answer "
        "and rate its correctness. Give a short explanation, then your rating strictly as "
        '"Rating: [[N]]" with N an integer from 1 to 10.',
        "[Question]\n{{ prompt }}\n\n[Reference answer]\n{{ reference }}\n\n[Response]\n{{ response }}",
        r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]",
        (1.0, 10.0),
    ),
    "rubric_1_10": (
        "You are an impartial judge. Grade the response strictly against the rubric: check each "
        "criterion, give a short explanation, then your rating strictly as \"Rating: [[N]]\" with N "
        "an integer from 1 to 10.",
        "[Question]\n{{ prompt }}\n\n[Rubric]\n{{ item.rubric }}\n\n[Response]\n{{ response }}",
        r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]",
        (1.0, 10.0),
    ),
    "yes_no": (
        "You are a strict grader. Decide whether the response correctly and helpfully answers the "
        "question. Answer with one word: Yes or No.",
        "[Question]\n{{ prompt }}\n\n[Response]\n{{ response }}\n\nIs the response correct? Answer Yes or No.",
        r"\b(Yes|No|YES|NO|yes|no)\b",
        (0.0, 1.0),
    ),
    "pass_fail": (
        "You are a strict grader. Decide whether the response correctly and completely answers "
        'the question, using the reference if one is given. End with "VERDICT: PASS" or "VERDICT: FAIL".',
        "[Question]\n{{ prompt }}\n\n[Reference]\n{{ reference }}\n\n[Response]\n{{ response }}",
        r"VERDICT:\s*(PASS|FAIL)",
        (0.0, 1.0),
    ),
}

# Pairwise templates: (system, user, verdict regex). The "[[A]]"/"[[B]]"/"[[C]]" verdicts and the
# answer markers follow MT-Bench's pairwise prompt (Zheng et al. 2023); `{{ answer_a }}` and
# `{{ answer_b }}` are the two responses in the order asked.
PAIRWISE: dict[str, tuple[str, str, str]] = {
    "pairwise": (
        "You are an impartial judge. Compare the two assistants' answers to the user question "
        "below and decide which is better: consider helpfulness, correctness and clarity, not "
        "length, and do not let the order of the answers influence you. Explain briefly, then "
        'give your verdict strictly as "[[A]]" if A is better, "[[B]]" if B is better, "[[C]]" for a tie.',
        "[User Question]\n{{ prompt }}\n\n[The Start of Assistant A's Answer]\n{{ answer_a }}\n"
        "[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n{{ answer_b }}\n"
        "[The End of Assistant B's Answer]",
        r"\[\[\s*([ABC])\s*\]\]",
    ),
    "pairwise_reference": (
        "You are an impartial judge. Compare the two assistants' answers with the reference answer "
        "and decide which is more correct; do not let the order of the answers influence you. "
        'Explain briefly, then give your verdict strictly as "[[A]]", "[[B]]" or "[[C]]" for a tie.',
        "[User Question]\n{{ prompt }}\n\n[Reference Answer]\n{{ reference }}\n\n"
        "[The Start of Assistant A's Answer]\n{{ answer_a }}\n[The End of Assistant A's Answer]\n\n"
        "[The Start of Assistant B's Answer]\n{{ answer_b }}\n[The End of Assistant B's Answer]",
        r"\[\[\s*([ABC])\s*\]\]",
    ),
}


def _namespace(sample: Sample, head: str, rest: str) -> Any:
    """The object a dotted placeholder walks into, or `_MISSING`."""
    if head == "meta":
        return sample.meta
    if head == "sample" and rest.split(".")[0] == "output_json":
        try:
            return {"output_json": json.loads(sample.response_text)}
        except ValueError:
            return _MISSING  # the response is not JSON: the placeholder has no value
    if head == "item":
        merged = dict(sample.meta)
        if isinstance(sample.reference, Mapping):
            merged.update(sample.reference)
        elif sample.reference is not None:
            merged.setdefault("reference", sample.reference)
        return merged
    return _MISSING


def _lookup(sample: Sample, path: str) -> Any:
    head, _, rest = path.partition(".")
    if not rest and head in ("prompt", "response", "reference"):
        return {"prompt": sample.prompt_text, "response": sample.response_text, "reference": sample.reference}[head]
    if head == "sample" and rest in ("output_text", "output"):
        return sample.response_text
    value = _namespace(sample, head, rest)
    for part in rest.split(".") if rest else []:
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def render(template: str, sample: Sample, extra: Mapping[str, str] | None = None) -> str:
    """`template` with its `{{ placeholders }}` filled from `extra`, else `sample` (JSON for non-strings)."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        value: JSON = extra[name] if extra is not None and name in extra else _lookup(sample, name)
        if value is _MISSING or value is None:
            raise ScoringError("invalid_input", f"judge template needs {{{{ {match.group(1)} }}}}, which this row does not have")
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return _PLACEHOLDER.sub(fill, template)


def placeholders(template: str) -> list[str]:
    """The placeholder names a template uses."""
    return _PLACEHOLDER.findall(template)


def parse_score(text: str, pattern: re.Pattern[str]) -> float | None:
    """The last match of `pattern`'s group 1 in `text` as a number (PASS = 1, FAIL = 0)."""
    matches = pattern.findall(text)
    if not matches:
        return None
    last = matches[-1]
    # With alternatives in the pattern, findall gives a tuple: take the group that matched.
    raw = last if isinstance(last, str) else next((g for g in last if g), "")
    word = raw.strip().upper()
    if word in ("PASS", "YES", "TRUE"):
        return 1.0
    if word in ("FAIL", "NO", "FALSE"):
        return 0.0
    try:
        return float(raw)
    except ValueError:
        return None
