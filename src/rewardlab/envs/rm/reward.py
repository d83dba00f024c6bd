"""`rm.trace`: score a trace of event labels with a reward machine (a registry built-in).

The sample's response (or `meta[trace_key]`) is a JSON list of label lists, one per step, e.g.
`[[], ["f"], [], ["g"]]`. The score is the machine's total reward over the trace (stopping at
a terminal state); info says the final state and whether the machine accepted or rejected.
A trace that is not such a list, or a machine that raises on it (`no_match = "error"`), is an
`error` result, never a 0.
"""

from __future__ import annotations

import json
from typing import Any

from rewardlab.core import BaseReward, ErrorKind, RewardResult, Sample
from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.errors import NoTransitionError

__all__ = ["RMTraceReward", "to_toml"]


class RMTraceReward(BaseReward):
    """Total reward of a reward machine over a trace of label sets.

    Args:
        machine: path to a `.toml`, `.json` or original-format `.txt` machine.
        trace_key: read the trace from `sample.meta[trace_key]` instead of the response.
        legacy_fall_off_reward: see `RewardMachine` (off: correct semantics).
    """

    name = "rm.trace"

    def __init__(self, *, machine: str, trace_key: str | None = None, legacy_fall_off_reward: bool = False):
        overrides: dict[str, Any] = {"legacy_fall_off_reward": True} if legacy_fall_off_reward else {}
        self.rm = RewardMachine.load(machine, **overrides)
        self.trace_key = trace_key

    def compute(self, sample: Sample) -> RewardResult:
        raw: Any = sample.meta.get(self.trace_key) if self.trace_key else sample.response_text
        if self.trace_key and self.trace_key not in sample.meta:
            return RewardResult.failure(ErrorKind.INVALID_INPUT, f"sample.meta has no {self.trace_key!r} trace")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError as exc:  # JSONDecodeError, or an integer Python will not read
                return RewardResult.failure(ErrorKind.PARSE, f"trace is not JSON: {exc}")
        if not isinstance(raw, list) or not all(isinstance(s, list) and all(isinstance(x, str) for x in s) for s in raw):
            return RewardResult.failure(ErrorKind.INVALID_INPUT, "trace must be a list of lists of label strings, e.g. [[], [\"f\"]]")
        try:
            steps = self.rm.run(raw)
        except NoTransitionError as exc:
            return RewardResult.failure(ErrorKind.INVALID_INPUT, str(exc))
        last = steps[-1] if steps else None
        info = {
            "final_state": last.state if last else self.rm.initial,
            "accepted": bool(last and last.accepted),
            "rejected": bool(last and last.rejected),
            "steps": len(steps),
        }
        return RewardResult.ok(sum(s.reward for s in steps), info=info, steps=tuple(s.reward for s in steps))


def to_toml(rm: RewardMachine) -> str:
    """The machine in the TOML form `RewardMachine.load` reads."""
    d = rm.to_dict()
    q = json.dumps  # a JSON string literal is a valid TOML basic string
    lines = [
        f"name = {q(d['name'])}",
        f"initial = {q(d['initial'])}",
        f"accepting = [{', '.join(q(s) for s in d['accepting'])}]",
        f"rejecting = [{', '.join(q(s) for s in d['rejecting'])}]",
        f"no_match = {q(d['no_match'])}",
        f"legacy_fall_off_reward = {str(d['legacy_fall_off_reward']).lower()}",
    ]
    for e in d["edges"]:
        lines += ["", "[[edges]]", f"from = {q(e['from'])}", f"to = {q(e['to'])}", f"guard = {q(e['guard'])}", f"reward = {e['reward']!r}"]
    return "\n".join(lines) + "\n"
