"""Timed reward machines: integer clocks, clock constraints on edges, and delay costs.

In the spirit of timed automata used as reward machines (Dohmen et al., "Timed Reward
Machines", 2024, discrete-time semantics): every env step advances all clocks by 1; an edge
fires when its label guard holds AND its clock constraint holds (`when = "x >= 3 & y < 10"`,
parsed by a regular expression, never eval'ed); firing resets the listed clocks to 0 and pays
the edge's reward. Every step spent in state u also costs `delay_cost[u]` (a negative reward),
so "reach the office quickly" is a cost per step in the waiting state.

Clock values are capped one above the largest constant any constraint compares them with, so
the composite state (u, clocks) is finite and `flatten()` yields an ordinary `RewardMachine`.
"""

from __future__ import annotations

import operator
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardlab.envs.rm.guard import Guard, parse_guard
from rewardlab.envs.rm.hierarchical import _exactly_one_of
from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.errors import SpecError, SpecProblem

__all__ = ["TimedRM"]

_ATOM = re.compile(r"^\s*([A-Za-z_]\w*)\s*(<=|>=|==|!=|<|>)\s*(\d+)\s*$")
_OPS: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}  # fmt: skip

Constraint = tuple[tuple[str, str, int], ...]  # conjunction of (clock, op, constant)


def parse_clock_constraint(text: str, clocks: Sequence[str], *, where: str = "when") -> Constraint:
    """Parse `"x >= 3 & y < 10"` (a conjunction of clock comparisons with integer constants)."""
    if not text.strip():
        return ()
    atoms = []
    for part in text.split("&"):
        m = _ATOM.match(part)
        if m is None:
            raise SpecError([SpecProblem(where, f"clock constraint {text!r}: {part.strip()!r} is not 'clock op integer'")])
        clock, op, value = m.group(1), m.group(2), int(m.group(3))
        if clock not in clocks:
            raise SpecError([SpecProblem(where, f"unknown clock {clock!r}; declared clocks: {list(clocks)}")])
        atoms.append((clock, op, value))
    return tuple(atoms)


@dataclass(frozen=True)
class _TEdge:
    src: str
    dst: str
    guard: Guard
    when: Constraint
    resets: frozenset[str]
    reward: float


class TimedRM:
    """A reward machine with integer clocks.

    Args:
        edges: dicts with `from`, `to`, `guard`, optional `when` (clock constraint), `reset`
            (list of clocks) and `reward`.
        initial, accepting, rejecting: as in `RewardMachine`.
        clocks: clock names (all start at 0).
        delay_cost: cost per step spent in a state (paid as a negative reward).
    """

    def __init__(
        self,
        edges: Sequence[Mapping[str, Any]],
        *,
        initial: str,
        clocks: Sequence[str] = ("x",),
        accepting: Iterable[str] = (),
        rejecting: Iterable[str] = (),
        delay_cost: Mapping[str, float] | None = None,
    ):
        self.clocks = tuple(clocks)
        self.initial = str(initial)
        self.accepting, self.rejecting = frozenset(map(str, accepting)), frozenset(map(str, rejecting))
        self.delay_cost = {str(k): float(v) for k, v in (delay_cost or {}).items()}
        self.edges = tuple(self._edge(e, i) for i, e in enumerate(edges))
        consts = [c for e in self.edges for (_, _, c) in e.when]
        self.cap = max(consts, default=0) + 1  # clock values above this are indistinguishable

    def _edge(self, e: Mapping[str, Any], i: int) -> _TEdge:
        where = f"edges[{i}]"
        resets = frozenset(e.get("reset", []))
        if unknown := resets - set(self.clocks):
            raise SpecError([SpecProblem(f"{where}.reset", f"unknown clocks {sorted(unknown)}; declared: {list(self.clocks)}")])
        when = parse_clock_constraint(str(e.get("when", "")), self.clocks, where=f"{where}.when")
        guard = parse_guard(str(e.get("guard", "True")), where=f"{where}.guard")
        return _TEdge(str(e["from"]), str(e["to"]), guard, when, resets, float(e.get("reward", 0.0)))

    def initial_state(self) -> tuple[str, tuple[int, ...]]:
        return self.initial, tuple(0 for _ in self.clocks)

    def step(self, state: tuple[str, tuple[int, ...]], labels: Iterable[str]) -> tuple[tuple[str, tuple[int, ...]], float, bool, bool]:
        """`((u', clocks'), reward, accepted, rejected)`; clocks tick before guards are checked."""
        u, values = state
        labels = frozenset(labels)
        ticked = tuple(min(v + 1, self.cap) for v in values)
        clock = dict(zip(self.clocks, ticked, strict=True))
        cost = self.delay_cost.get(u, 0.0)
        for e in self.edges:
            if e.src == u and e.guard(labels) and all(_OPS[op](clock[c], k) for c, op, k in e.when):
                new = tuple(0 if c in e.resets else clock[c] for c in self.clocks)
                return (e.dst, new), e.reward - cost, e.dst in self.accepting, e.dst in self.rejecting
        return (u, ticked), -cost, False, False

    def flatten(self, alphabet: Sequence[frozenset[str]]) -> RewardMachine:
        """An equivalent flat `RewardMachine` over `alphabet`, states named `u@x=..,y=..`."""

        def name(s: tuple[str, tuple[int, ...]]) -> str:
            return s[0] + "@" + ",".join(f"{c}={v}" for c, v in zip(self.clocks, s[1], strict=True))

        start = self.initial_state()
        seen, queue, edges = {start}, deque([start]), []
        accepting: set[str] = set()
        rejecting: set[str] = set()
        while queue:
            s = queue.popleft()
            targets: dict[tuple[Any, float], list[frozenset[str]]] = {}
            for labels in alphabet:
                nxt, r, acc, rej = self.step(s, labels)
                if acc:
                    accepting.add(name(nxt))
                elif rej:
                    rejecting.add(name(nxt))
                elif nxt not in seen:
                    queue.append(nxt)
                seen.add(nxt)
                targets.setdefault((nxt, r), []).append(labels)
            for (nxt, r), sets in targets.items():
                edges.append({"from": name(s), "to": name(nxt), "reward": r, "guard": _exactly_one_of(sets, alphabet)})
        return RewardMachine(edges, initial=name(start), accepting=accepting, rejecting=rejecting, name="flat(timed)",
                             no_match="error", check_determinism=False)
