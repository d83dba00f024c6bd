"""Instruction following: IFEval-style verifiable constraints, combined per row.

A row says which constraints its prompt carries, in the IFEval format
(`instruction_id_list = ["punctuation:no_comma", ...]`, `kwargs = [{...}, ...]`), either as
dataset columns (`sample.meta`) or inside an object reference. The reward checks each one
with `rewardlab.verify.ifeval.checkers` and scores the fraction followed
(instruction-level accuracy) or 1/0 for all of them (prompt-level accuracy).
"""

from __future__ import annotations

from typing import Any, Literal

from rewardlab.core import BaseReward, RewardResult, Sample
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.verify._common import meta_or_reference, response_text
from rewardlab.verify.ifeval.checkers import CHECKERS, check, get_checker

__all__ = ["CHECKERS", "IFEvalConstraints", "check", "loose_variants"]


def loose_variants(text: str) -> list[str]:
    """IFEval's "loose" variants: the text, without its first line, last line, or both, each
    also with markdown asterisks removed (Zhou et al. 2023, Sec. 2.2)."""
    lines = text.split("\n")
    cut = [text, "\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    return [v for c in cut for v in (c, c.replace("*", ""))]


def _row_constraints(sample: Sample, ids: list[str] | None, kwargs: list[dict[str, Any]] | None) -> list[tuple[str, dict[str, Any]]]:
    if ids is None:
        ids = meta_or_reference(sample, "instruction_id_list")
        kwargs = meta_or_reference(sample, "kwargs") if _has(sample, "kwargs") else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ScoringError("invalid_input", f"instruction_id_list must be a list of strings, got {ids!r}")
    if kwargs is None:
        kwargs = [{} for _ in ids]
    if not isinstance(kwargs, list) or len(kwargs) != len(ids) or not all(isinstance(k, dict) for k in kwargs):
        raise ScoringError("invalid_input", f"kwargs must be a list of {len(ids)} objects, one per instruction")
    return list(zip(ids, kwargs, strict=True))


def _has(sample: Sample, key: str) -> bool:
    return key in sample.meta or (isinstance(sample.reference, dict) and key in sample.reference)


class IFEvalConstraints(BaseReward):
    """Fraction (or all, with `mode="all"`) of the row's IFEval constraints the response follows.

    Args:
        mode: `fraction` (instruction-level) or `all` (prompt-level).
        loose: IFEval's loose criterion: a constraint holds if it holds on any variant of the
            response without its first/last line or asterisks.
        instruction_ids, kwargs: fixed constraints for every row, instead of reading them
            from the row (short aliases such as `no_comma` are accepted).

    An unknown instruction id or unusable arguments make the row an `invalid_input` error.
    `info.followed` maps each instruction id to its verdict.
    """

    name = "ifeval.constraints"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        mode: Literal["fraction", "all"] = "fraction",
        loose: bool = False,
        instruction_ids: list[str] | None = None,
        kwargs: list[dict[str, Any]] | None = None,
    ):
        for instruction_id in instruction_ids or []:
            get_checker(instruction_id)  # unknown ids fail when the spec is built
        if instruction_ids is not None and kwargs is not None and len(kwargs) != len(instruction_ids):
            raise ConfigError("kwargs must have one object per instruction id")
        self._mode, self._loose = mode, loose
        self._ids, self._kwargs = instruction_ids, kwargs

    def compute(self, sample: Sample) -> RewardResult:
        text = response_text(sample)
        constraints = _row_constraints(sample, self._ids, self._kwargs)
        if not constraints:
            raise ScoringError("invalid_input", "the row lists no instructions to check")
        variants = loose_variants(text) if self._loose else [text]
        followed: dict[str, bool] = {}
        for index, (instruction_id, args) in enumerate(constraints):
            try:
                verdict = any(check(instruction_id, v, args) for v in variants if v.strip())
            except ValueError as exc:
                raise ScoringError("invalid_input", f"instruction {index} ({instruction_id}): {exc}") from exc
            key = instruction_id if instruction_id not in followed else f"{instruction_id}#{index}"
            followed[key] = verdict
        passed = sum(followed.values())
        score = passed / len(followed) if self._mode == "fraction" else float(passed == len(followed))
        return RewardResult.ok(score, info={"followed": followed})
