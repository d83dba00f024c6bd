"""Importer for the text format of the original reward-machines code (Toro Icarte et al.).

    0 # initial state
    [2] # terminal state
    (0,0,'!f&!n',ConstantRewardFunction(0))
    (0,1,'f&!n',ConstantRewardFunction(0))
    (1,1,'!g&!n',ConstantRewardFunction(0))
    (1,2,'g&!n',ConstantRewardFunction(1))

The original loads every line with `eval`; here each line is matched by a regular expression
and the guard goes through `rewardlab.envs.rm.guard`, so a file can never run code. Only
`ConstantRewardFunction(x)` rewards exist in the tabular benchmarks; anything else is an error.

Semantics carried over: terminal states are accepting, and when no edge matches the agent
"falls off" the machine, which ends the episode (`no_match = "reject"`). The older format
without the terminal-state line is accepted too: states whose only edges are `'True'`
self-loops are taken as terminal.
"""

from __future__ import annotations

import re
from typing import Any

from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.errors import InputError, SpecError

__all__ = ["parse_text_rm", "to_text_rm"]

_EDGE = re.compile(
    r"^\(\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(['\"])(.*?)\3\s*,\s*"
    r"ConstantRewardFunction\(\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*\)\s*\)$"
)
_INT = re.compile(r"^-?\d+$")
_LIST = re.compile(r"^\[\s*(-?\d+(?:\s*,\s*-?\d+)*)?\s*,?\s*\]$")


def _strip(line: str) -> str:
    # comments start with '#', but a guard never contains '#', so cutting there is safe
    return line.split("#", 1)[0].strip()


def parse_text_rm(text: str, *, source: str = "<text>", **overrides: Any) -> RewardMachine:
    """Parse the original text format into a `RewardMachine` (`no_match="reject"`).

    Args:
        text: the file contents.
        source: file name for error messages.
        **overrides: keyword arguments for `RewardMachine` (e.g. `legacy_fall_off_reward=True`).

    Raises:
        InputError: a line that is not an initial state, terminal list or edge (names the line).
        SpecError: a structurally invalid machine (overlapping guards...).
    """
    lines = [(n, _strip(raw)) for n, raw in enumerate(text.splitlines(), start=1)]
    lines = [(n, s) for n, s in lines if s]
    if not lines:
        raise InputError("empty reward machine file; the first line is the initial state", source=source)
    n0, first = lines[0]
    if not _INT.match(first):
        raise InputError(f"first line must be the initial state (an integer), got {first!r}", source=source, line=n0)
    terminal: set[str] | None = None
    body = lines[1:]
    if body and body[0][1].startswith("["):
        n1, second = body[0]
        m = _LIST.match(second)
        if m is None:
            raise InputError(f"terminal states must be a list of integers like [2], got {second!r}", source=source, line=n1)
        terminal = {s.strip() for s in (m.group(1) or "").split(",") if s.strip()}
        body = body[1:]
    edges: list[dict[str, Any]] = []
    for n, line in body:
        m = _EDGE.match(line)
        if m is None:
            raise InputError(
                f"not an edge (u1,u2,'guard',ConstantRewardFunction(r)): {line!r}", source=source, line=n
            )
        src, dst, _, guard, reward = m.groups()
        edges.append({"from": src, "to": dst, "guard": guard, "reward": float(reward), "_line": n})
    if terminal is None:
        terminal = _old_style_terminals(edges)
    # the original drops edges that leave terminal states
    kept = [e for e in edges if e["from"] not in terminal]
    kwargs: dict[str, Any] = {"initial": first, "accepting": sorted(terminal), "no_match": "reject", "name": source}
    kwargs.update(overrides)
    try:
        return RewardMachine([{k: v for k, v in e.items() if k != "_line"} for e in kept], **kwargs)
    except SpecError as exc:
        # point at file lines rather than edge indices
        lines_of = [e["_line"] for e in kept]
        msgs = []
        for p in exc.problems:
            loc = p.location
            if loc.startswith("edges[") and "]" in loc:
                idx = int(loc[6 : loc.index("]")])
                loc = f"line {lines_of[idx]}"
            msgs.append(f"{loc}: {p.message}" if loc else p.message)
        raise InputError("; ".join(msgs), source=source) from exc


def _old_style_terminals(edges: list[dict[str, Any]]) -> set[str]:
    states = {e["from"] for e in edges} | {e["to"] for e in edges}
    out = set()
    for s in states:
        leaving = [e for e in edges if e["from"] == s]
        if all(e["to"] == s and e["guard"].strip() == "True" for e in leaving):
            out.add(s)
    return out


def to_text_rm(rm: RewardMachine) -> str:
    """Write a machine in the original text format (states must be integer-named)."""
    bad = [s for s in rm.states if not _INT.match(s)]
    if bad:
        raise SpecError(f"the text format needs integer state names; {bad} are not")
    lines = [rm.initial + " # initial state", "[" + ",".join(sorted(rm.accepting, key=int)) + "] # terminal state"]
    for e in rm.edges:
        lines.append(f"({e.src},{e.dst},'{e.guard.text}',ConstantRewardFunction({e.reward:g}))")
    return "\n".join(lines) + "\n"
