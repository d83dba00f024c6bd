"""`agent.tool_calls`: the trajectory's tool calls against gold calls, with per-call components.

The reference holds the gold calls and, optionally, the function schemas and the order rule:

    {"calls": [{"name": "get_weather", "arguments": {"city": "Paris", "unit": {"$one_of": ["C", "F"]}},
                "optional": ["unit"]}],
     "tools": [...OpenAI tools or BFCL function entries...],   # optional: types are checked
     "ordered": false,                                          # optional: overrides the reward's option
     "encoding": "java"}                                        # optional: overrides the reward's option

(a bare list is the ``calls``). The expectation language is `agent.matching`'s. Components:
``exact`` (every gold call matched by a fully correct call and no call left over: BFCL's
verdict), ``f1`` (fully correct calls, precision against recall), ``name`` (share of gold calls
whose paired call has the right name), ``arguments`` (mean partial credit of the paired calls:
name, then the share of arguments right), ``count`` (1 when there are as many calls as gold
calls). The score is the component named by ``score``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from rewardlab.agent.literals import ENCODINGS, Encoding
from rewardlab.agent.matching import GoldCall, ValueRules, match_calls, read_gold
from rewardlab.core.result import RewardResult
from rewardlab.core.reward import BaseReward
from rewardlab.core.sample import Sample
from rewardlab.core.trajectory import Trajectory, tool_schemas
from rewardlab.errors import ConfigError, SampleFieldError, ScoringError

ScoreName = Literal["exact", "f1", "arguments"]


def trajectory_of(sample: Sample) -> Trajectory:
    """The sample's trajectory; a response that breaks the shapes is an `invalid_input` error."""
    try:
        return sample.trajectory
    except SampleFieldError as exc:
        raise ScoringError("invalid_input", str(exc)) from None


class ToolCalls(BaseReward):
    """Tool calls against gold calls: names, required and optional arguments, typed values.

    Args:
        score: the component that is the score: "exact" (all or nothing, BFCL's verdict), "f1"
            or "arguments" (partial credit, ToolRL-style).
        ordered: compare the i-th call with the i-th gold call (else any order; a reference's
            ``"ordered"`` overrides this).
        strings: how string values compare: "exact", "casefold" or "loose" (BFCL's).
        rel_tol: relative tolerance for numbers.
        abs_tol: absolute tolerance for numbers.
        encoding: how calls write argument values: "json" (default), or "java" / "javascript":
            each value the source text of a literal in that language, read by the parameter's
            declared type (`agent.literals`; BFCL's Java and JavaScript categories). A
            reference's ``"encoding"`` overrides it.
    """

    name = "agent.tool_calls"
    range = (0.0, 1.0)

    def __init__(self, *, score: ScoreName = "exact", ordered: bool = False, strings: Literal["exact", "casefold", "loose"] = "exact",
                 rel_tol: float = 0.0, abs_tol: float = 0.0, encoding: Encoding = "json"):  # fmt: skip
        if score not in ("exact", "f1", "arguments"):
            raise ConfigError(f"score must be 'exact', 'f1' or 'arguments', got {score!r}")
        self._score = score
        self._ordered = bool(ordered)
        self._rules = ValueRules(strings=strings, rel_tol=rel_tol, abs_tol=abs_tol, encoding=encoding)

    def compute(self, sample: Sample) -> RewardResult:
        trajectory = trajectory_of(sample)
        gold, ordered, rules = self._gold(sample)
        return score_calls(trajectory, gold, rules, ordered=ordered, score=self._score)

    def _gold(self, sample: Sample) -> tuple[list[GoldCall], bool, ValueRules]:
        reference: Any = sample.reference
        tools: Any = sample.meta.get("tools", [])
        ordered, rules = self._ordered, self._rules
        if isinstance(reference, Mapping):
            tools = reference.get("tools", tools)
            ordered = bool(reference.get("ordered", ordered))
            encoding = reference.get("encoding", rules.encoding)
            if encoding not in ENCODINGS:
                raise ScoringError("invalid_input", f"reference.encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r}")
            rules = replace(rules, encoding=encoding)
            reference = reference.get("calls")
        if reference is None:
            raise ScoringError("invalid_input", "agent.tool_calls needs gold calls in the reference ('calls')")
        try:
            return read_gold(reference, tool_schemas(tools if isinstance(tools, list) else [])), ordered, rules
        except ValueError as exc:
            raise ScoringError("invalid_input", str(exc)) from None


def score_calls(trajectory: Trajectory, gold: list[GoldCall], rules: ValueRules, *, ordered: bool, score: ScoreName = "exact") -> RewardResult:
    """Components and score of `trajectory`'s calls against `gold` (see the module docstring)."""
    calls = trajectory.calls
    pairs, extra, missed = match_calls(calls, gold, rules, ordered=ordered)
    correct = sum(1 for _, _, c in pairs if c.correct)
    exact = float(correct == len(gold) and len(calls) == len(gold))
    precision = correct / len(calls) if calls else float(not gold)
    recall = correct / len(gold) if gold else float(not calls)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    denominator = max(len(gold), len(calls), 1)
    names = sum(1 for _, _, c in pairs if c.name) / max(len(gold), 1) if gold else float(not calls)
    partial = sum(c.partial for _, _, c in pairs) / denominator if gold or calls else 1.0
    values = {"exact": exact, "f1": f1, "name": names, "arguments": partial, "count": float(len(calls) == len(gold))}
    per_call = [
        {"call": i, "gold": j, "name": gold[j].name, "correct": c.correct, "partial": round(c.partial, 6), "problems": c.problems()}
        for i, j, c in pairs
    ]
    info = {"calls": len(calls), "gold": len(gold), "correct": correct, "per_call": per_call,
            "extra_calls": [calls[i].name for i in extra], "missed_gold": [gold[j].name for j in missed],
            "ordered": ordered}  # fmt: skip
    components = {k: RewardResult.ok(v) for k, v in values.items()}
    return RewardResult.ok(values[score], components=components, info=info)
