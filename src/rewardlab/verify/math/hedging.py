"""Hedged answers: several different boxed answers offered as the final answer.

``\\boxed{8} or \\boxed{10} or \\boxed{9}`` (reference 9) is not a correct answer: a grader that
takes the last box accepts it, and a policy trained on that reward is never taught to commit.
The extractor returns the boxes of the final answer section (`Extraction.candidates`); this
module decides, with the reference in hand, what they amount to:

- all the same answer (``\\boxed{9} ... \\boxed{9}``, ``\\boxed{0.5}`` and ``\\boxed{\\frac12}``):
  that answer;
- a choice letter and a value (`\\boxed{12}`, option `\\boxed{B}`): the one written like the
  reference (the options are not known, so the two cannot be compared);
- as many as the reference has parts (reference ``1, 2``, response ``\\boxed{1}`` and
  ``\\boxed{2}``): one structured answer, joined the way the reference is written;
- otherwise a `Hedge`, which the reward scores 0.0 (a wrong answer, not an error). Two boxes the
  checker cannot show equal (undecided) count as different: the response offered both.

A single box that hedges (``\\boxed{1 \\text{ or } 2}``) is refused by `check` itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from rewardlab.verify.math.equivalence import answer_parts, check
from rewardlab.verify.math.extract import Extraction, choice_letter
from rewardlab.verify.math.normalize import clean
from rewardlab.verify.math.options import CheckOptions
from rewardlab.verify.math.units import unwrap_text
from rewardlab.verify.math.worker import SympyPool

__all__ = ["Hedge", "final_answer"]

_SHOWN = 8  # candidates named in a hedge's reason
_KEPT = 32  # candidates kept in `Hedge.candidates` (a response may box thousands)
# Reference shapes whose parts can be boxed one by one. Not intervals (`(1, 2]`): joining two
# boxed numbers would supply the brackets the response never wrote.
_JOINABLE = {"set", "()"}


@dataclass(frozen=True)
class Hedge:
    """Several different answers offered in the final answer section.

    Attributes:
        candidates: the boxed answers, in reading order, duplicates (same text) removed; the
            first 32 of them.
        reason: what was offered, in words (for `RewardResult.info["reason"]`).
    """

    candidates: tuple[str, ...]
    reason: str


def final_answer(
    extraction: Extraction,
    reference: str,
    options: CheckOptions | None = None,
    *,
    pool: SympyPool | None = None,
) -> str | Hedge | None:
    """The answer to compare with `reference`, a `Hedge`, or None when nothing was extracted.

    Args:
        extraction: from `extract_answer` (with ``hedging="reject"``, its `candidates`).
        reference: the gold answer the candidates are meant for.
        options: how two candidates are compared (the same `CheckOptions` as the verdict).
        pool: sympy workers for those comparisons (default: the process-wide pool).

    Examples:
        >>> from rewardlab.verify.math import extract_answer
        >>> final_answer(extract_answer("\\\\boxed{8} or \\\\boxed{9}"), "9").reason
        'hedged: 2 different boxed answers in the final answer section (8; 9)'
    """
    if extraction.answer is None:
        return None
    candidates = extraction.candidates
    if len(candidates) < 2:
        return extraction.answer
    joined = _joined(candidates, reference, options or CheckOptions())
    if joined is not None:
        return joined
    answer, kept = _same_kind(extraction.answer, candidates, reference)
    if not _other_kind_disagrees(candidates, kept, options, pool):
        candidates = kept
    unique = tuple(dict.fromkeys(candidates))
    for other in unique:
        if other != answer and not _same(answer, other, options, pool):
            shown = "; ".join(unique[:_SHOWN]) + ("; ..." if len(unique) > _SHOWN else "")
            return Hedge(unique[:_KEPT], f"hedged: {len(unique)} different boxed answers in the final answer section ({shown})")
    return answer


def _is_letter(answer: str) -> bool:
    return choice_letter(unwrap_text(answer)) is not None


def _same_kind(answer: str, candidates: tuple[str, ...], reference: str) -> tuple[str, tuple[str, ...]]:
    """Only the candidates written like the reference: a choice letter and a value (`\\boxed{12}`,
    option `\\boxed{B}`) are two spellings of one choice that cannot be compared without the
    options, so the one in the reference's form is the answer. Letters against a letter
    reference (`\\boxed{A}` or `\\boxed{B}`) still hedge."""
    letter_reference = _is_letter(reference.strip().strip("$"))
    kept = tuple(c for c in candidates if _is_letter(c) == letter_reference)
    if not kept or len(kept) == len(candidates):
        return answer, candidates
    if answer in kept:
        return answer, kept
    return (kept[-1] if answer == candidates[-1] else kept[0]), kept


def _other_kind_disagrees(
    candidates: tuple[str, ...], kept: tuple[str, ...], options: CheckOptions | None, pool: SympyPool | None
) -> bool:
    """Whether the candidates `_same_kind` set aside differ among themselves. A value and a
    letter can spell one choice, but two different values (`\\boxed{0}` or `\\boxed{1}` or
    `\\boxed{A}`) cannot: then every box counts, and the answer hedges."""
    aside = tuple(dict.fromkeys(c for c in candidates if c not in kept))
    return any(not _same(aside[0], other, options, pool) for other in aside[1:])


def _same(a: str, b: str, options: CheckOptions | None, pool: SympyPool | None) -> bool:
    # `check` is asymmetric (the reference fixes the precision): either reading will do, so
    # `9999.857142857143` and `9999\frac{6}{7}` are one answer.
    return check(a, b, options, pool=pool).equivalent or check(b, a, options, pool=pool).equivalent


def _joined(candidates: tuple[str, ...], reference: str, options: CheckOptions) -> str | None:
    """The candidates as one answer shaped like `reference`, when it has exactly that many parts."""
    shape = answer_parts(reference, options)
    if shape is None or shape[0] not in _JOINABLE or len(shape[1]) != len(candidates):
        return None
    body = ", ".join(candidates)
    if shape[0] == "()":
        return f"({body})"
    return f"\\{{{body}\\}}" if clean(reference, options).startswith("\\{") else body
