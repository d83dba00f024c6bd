"""`agent.subtasks` (graded checks with weights and dependencies) and `agent.terms` (turns, tool
errors, repeated calls, budget).

A subtask is ``{"name", "weight" (default 1), "after": [names it depends on], "check": ...}``
where the check is one of

- ``{"call": {gold call}}``: some call of the trajectory is correct against it (`agent.matching`);
- ``{"state": {predicate or code check}}``: a check over the final state (`agent.state`: code
  runs in the sandbox);
- ``{"says": "text"}``: an assistant turn's text contains it (case-insensitive).

A subtask whose prerequisite (``after``, transitively) did not pass is worth 0 whatever its own
check says: partial credit as Long-Horizon-Terminal-Bench grades it. The score is the weighted
mean. The subtasks come from the reward's ``subtasks`` option (the same for every sample,
checked at construction) or from the reference's ``subtasks``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from rewardlab.agent.matching import ValueRules, check_call, read_gold
from rewardlab.agent.state import _Sandboxed, evaluate_checks
from rewardlab.agent.tool_calls import trajectory_of
from rewardlab.core.result import RewardResult
from rewardlab.core.reward import BaseReward
from rewardlab.core.sample import Sample
from rewardlab.core.trajectory import Trajectory
from rewardlab.errors import ConfigError, ScoringError


def read_subtasks(subtasks: Any) -> list[dict[str, Any]]:
    """The subtasks checked: names unique, weights >= 0, prerequisites known, no cycle.

    Raises:
        ValueError: what is wrong and where (the caller makes it a ConfigError or an `invalid_input`).
    """
    if not isinstance(subtasks, list) or not subtasks:
        raise ValueError("subtasks must be a non-empty list of {'name', 'check', 'weight'?, 'after'?}")
    out: list[dict[str, Any]] = []
    for i, task in enumerate(subtasks):
        if not isinstance(task, Mapping) or not isinstance(task.get("name"), str) or not isinstance(task.get("check"), Mapping):
            raise ValueError(f"subtasks[{i}] must be an object with a string 'name' and a 'check' object")
        weight = task.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not weight >= 0:
            raise ValueError(f"subtasks[{i}].weight must be a number >= 0, got {weight!r}")
        after = task.get("after", [])
        if not (isinstance(after, list) and all(isinstance(a, str) for a in after)):
            raise ValueError(f"subtasks[{i}].after must be a list of subtask names")
        kinds = [k for k in ("call", "state", "says") if k in task["check"]]
        if len(kinds) != 1:
            raise ValueError(f"subtasks[{i}].check must have exactly one of 'call', 'state', 'says'")
        out.append({"name": task["name"], "weight": float(weight), "after": list(after), "check": dict(task["check"])})
    names = [t["name"] for t in out]
    if len(set(names)) != len(names):
        raise ValueError(f"subtask names must be unique, got {names}")
    for task in out:
        unknown = [a for a in task["after"] if a not in names]
        if unknown:
            raise ValueError(f"subtask {task['name']!r} depends on unknown subtasks {unknown}")
    _topological(out)
    if sum(t["weight"] for t in out) <= 0:
        raise ValueError("subtask weights must not all be 0")
    return out


def _topological(subtasks: list[dict[str, Any]]) -> list[str]:
    """Names in an order where prerequisites come first; a cycle is an error."""
    order: list[str] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done
    after = {t["name"]: t["after"] for t in subtasks}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise ValueError(f"subtask dependencies form a cycle: {' -> '.join([*path, name])}")
        state[name] = 1
        for need in after[name]:
            visit(need, [*path, name])
        state[name] = 2
        order.append(name)

    for name in after:
        visit(name, [])
    return order


class Subtasks(_Sandboxed):
    """Weighted subtask credit with dependencies: a failed prerequisite zeroes its dependants.

    Args:
        subtasks: the subtasks for every sample (else each reference's ``subtasks``).
        pass_at: a subtask's check value at or above which it counts as passed for its dependants.
        strings: how a ``call`` check compares strings ("exact", "casefold", "loose").
        cpu_seconds: CPU limit of the sandbox that runs code checks.
        wall_seconds: wall-clock limit of that sandbox.
        memory_mb: memory limit of that sandbox.
        workers: sandboxes kept warm.
        isolation: "auto", "bubblewrap" or "rlimits".
    """

    name = "agent.subtasks"
    range = (0.0, 1.0)

    def __init__(self, *, subtasks: list[dict[str, Any]] | None = None, pass_at: float = 1.0,
                 strings: Literal["exact", "casefold", "loose"] = "exact", cpu_seconds: float = 10.0,
                 wall_seconds: float = 30.0, memory_mb: int = 1024, workers: int = 2,
                 isolation: Literal["auto", "bubblewrap", "rlimits"] = "auto"):  # fmt: skip
        super().__init__(cpu_seconds=cpu_seconds, wall_seconds=wall_seconds, memory_mb=memory_mb,
                         workers=workers, isolation=isolation)  # fmt: skip
        try:
            self._subtasks = read_subtasks(subtasks) if subtasks is not None else None
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if isinstance(pass_at, bool) or not isinstance(pass_at, int | float) or not 0 < pass_at <= 1:
            raise ConfigError(f"pass_at must be in (0, 1], got {pass_at!r}")
        self._pass_at = float(pass_at)
        self._rules = ValueRules(strings=strings)

    def compute(self, sample: Sample) -> RewardResult:
        trajectory = trajectory_of(sample)
        subtasks = self._subtasks
        if subtasks is None:
            reference = sample.reference
            try:
                subtasks = read_subtasks(reference.get("subtasks") if isinstance(reference, Mapping) else None)
            except ValueError as exc:
                raise ScoringError("invalid_input", f"reference.{exc}") from None
        own = self._values(trajectory, subtasks)
        return credit(subtasks, own, pass_at=self._pass_at)

    def _values(self, trajectory: Trajectory, subtasks: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        values: dict[str, float] = {}
        state_checks = []
        for task in subtasks:
            check = task["check"]
            if "says" in check:
                said = str(check["says"]).lower()
                values[task["name"]] = float(any(said in t.content.lower() for t in trajectory.turns))
            elif "call" in check:
                try:
                    (gold,) = read_gold([check["call"]], {}, where=f"subtask {task['name']!r} call")
                except ValueError as exc:
                    raise ScoringError("invalid_input", str(exc)) from None
                values[task["name"]] = float(any(check_call(c, gold, self._rules).correct for c in trajectory.calls))
            else:
                state_checks.append({**check["state"], "name": task["name"]})
        if state_checks:
            if trajectory.state is None:
                raise ScoringError("invalid_input", "a subtask checks the final state, and the trajectory has none")
            values.update(evaluate_checks(trajectory.state, state_checks, self._call))
        return values


def credit(subtasks: Sequence[Mapping[str, Any]], own: Mapping[str, float], *, pass_at: float = 1.0) -> RewardResult:
    """The weighted mean of the subtasks' values, each zeroed when a prerequisite did not pass."""
    by_name = {t["name"]: t for t in subtasks}
    final: dict[str, float] = {}
    zeroed = []
    for name in _topological([dict(t) for t in subtasks]):
        blocked = [a for a in by_name[name]["after"] if final[a] < pass_at]
        final[name] = 0.0 if blocked else own[name]
        if blocked and own[name] > 0:
            zeroed.append({"subtask": name, "blocked_by": blocked})
    total = sum(t["weight"] for t in subtasks)
    score = sum(t["weight"] * final[t["name"]] for t in subtasks) / total
    components = {name: RewardResult.ok(value, info={"own": own[name]}) for name, value in final.items()}
    return RewardResult.ok(score, components=components, info={"zeroed": zeroed})


class TrajectoryTerms(BaseReward):
    """Terms over the whole trajectory: 1 minus the weighted counts of what went wrong, at least 0.

    Components (raw counts, so a spec can weight them itself): ``turns`` (assistant turns),
    ``calls``, ``tool_errors`` (results that report an error), ``repeated_calls`` (a call with the
    same name and arguments as an earlier one), ``malformed_calls`` (arguments that could not be
    read), ``over_budget`` (1 when turns or calls exceed their budget).

    Args:
        error_weight: penalty per tool error.
        repeat_weight: penalty per repeated call.
        malformed_weight: penalty per malformed call.
        max_turns: turn budget (None: no budget).
        max_calls: call budget (None: no budget).
        budget_weight: penalty for going over a budget.
    """

    name = "agent.terms"
    range = (0.0, 1.0)

    def __init__(self, *, error_weight: float = 0.1, repeat_weight: float = 0.1, malformed_weight: float = 0.2,
                 max_turns: int | None = None, max_calls: int | None = None, budget_weight: float = 1.0):  # fmt: skip
        for name, value in (("error_weight", error_weight), ("repeat_weight", repeat_weight),
                            ("malformed_weight", malformed_weight), ("budget_weight", budget_weight)):  # fmt: skip
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise ConfigError(f"{name} must be a number >= 0, got {value!r}")
        for name, limit in (("max_turns", max_turns), ("max_calls", max_calls)):
            if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
                raise ConfigError(f"{name} must be an integer >= 0 or null, got {limit!r}")
        self._weights = (float(error_weight), float(repeat_weight), float(malformed_weight), float(budget_weight))
        self._max_turns, self._max_calls = max_turns, max_calls

    def compute(self, sample: Sample) -> RewardResult:
        counts = terms(trajectory_of(sample), max_turns=self._max_turns, max_calls=self._max_calls)
        errors, repeats, malformed, budget = self._weights
        penalty = (errors * counts["tool_errors"] + repeats * counts["repeated_calls"]
                   + malformed * counts["malformed_calls"] + budget * counts["over_budget"])  # fmt: skip
        components = {k: RewardResult.ok(float(v)) for k, v in counts.items()}
        return RewardResult.ok(max(0.0, 1.0 - penalty), components=components, info={"penalty": penalty})


def terms(trajectory: Trajectory, *, max_turns: int | None = None, max_calls: int | None = None) -> dict[str, int]:
    """The counts `TrajectoryTerms` weighs."""
    seen: set[str] = set()
    repeated = 0
    for call in trajectory.calls:
        key = json.dumps([call.name, call.arguments], sort_keys=True, default=str)
        repeated += key in seen
        seen.add(key)
    turns, calls = len(trajectory.turns), len(trajectory.calls)
    over = (max_turns is not None and turns > max_turns) or (max_calls is not None and calls > max_calls)
    return {"turns": turns, "calls": calls, "tool_errors": sum(r.error for r in trajectory.results),
            "repeated_calls": repeated, "malformed_calls": sum(c.error is not None for c in trajectory.calls),
            "over_budget": int(over)}  # fmt: skip
