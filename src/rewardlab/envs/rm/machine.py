"""Reward machines: finite automata over event labels whose edges carry rewards.

A reward machine (Toro Icarte et al., "Reward Machines: Exploiting Reward Function Structure in
Reinforcement Learning", JAIR 2022) has states, an initial state, accepting and rejecting
(terminal) states, and edges `src --guard / reward--> dst`. Each environment step emits a set of
labels; the machine follows the one edge whose guard holds and pays that edge's reward.

The machine-readable format (TOML or JSON, or a dict):

    name = "coffee"
    initial = "u0"
    accepting = ["done"]
    rejecting = ["broke"]
    no_match = "stay"           # what happens when no edge matches: stay | reject | error
    [[edges]]
    from = "u0"
    to = "u1"
    guard = "f & !n"            # parsed by `rewardlab.envs.rm.guard`, never eval'ed
    reward = 0.0

Determinism is checked at load time: two edges out of one state whose guards can hold together
and that disagree on target or reward are an error.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rewardlab.core.jsontext import utf8_text
from rewardlab.envs.rm.guard import Guard, parse_guard, satisfiable_together
from rewardlab.errors import InputError, NoTransitionError, SpecError, SpecProblem

__all__ = ["Edge", "NoMatch", "RMStep", "RMTables", "RewardMachine"]

NoMatch = Literal["stay", "reject", "error"]
_NO_MATCH = ("stay", "reject", "error")


@dataclass(frozen=True)
class Edge:
    """One edge `src --guard / reward--> dst`."""

    src: str
    dst: str
    guard: Guard
    reward: float = 0.0


@dataclass(frozen=True)
class RMStep:
    """The outcome of one machine step.

    Attributes:
        state: the next state.
        reward: the reward the machine pays for this step.
        accepted: the next state is accepting (the task is done).
        rejected: the next state is rejecting, or no edge matched under `no_match="reject"`.
        edge: index of the edge that fired in `RewardMachine.edges`, None when none matched.
    """

    state: str
    reward: float
    accepted: bool
    rejected: bool
    edge: int | None

    @property
    def terminal(self) -> bool:
        return self.accepted or self.rejected


@dataclass(frozen=True)
class RMTables:
    """Dense transition tables over an enumerated alphabet of label sets.

    Shapes: `next_state`, `accept`, `reject`: (n_states, n_labels); `reward`: same, float.
    Terminal rows loop on themselves with reward 0 and are flagged terminal.
    """

    next_state: np.ndarray
    reward: np.ndarray
    accept: np.ndarray
    reject: np.ndarray

    @property
    def done(self) -> np.ndarray:
        return self.accept | self.reject  # type: ignore[no-any-return]


class RewardMachine:
    """A deterministic reward machine.

    Args:
        edges: `Edge`s or mappings with keys `from`, `to`, `guard`, `reward`.
        initial: the initial state.
        accepting: states that end the episode as a success.
        rejecting: states that end the episode as a failure.
        no_match: when no edge matches: `"stay"` (self-loop, reward 0), `"reject"` (end the
            episode as a failure, reward 0) or `"error"` (raise `NoTransitionError`).
        legacy_fall_off_reward: reproduce the original reward-machines code, where falling off
            the machine (no match under `"reject"`) from a state that owns an edge into an
            accepting state paid that edge's reward (its reward table was keyed by target state
            and every terminal state shared one id). Off by default: it is a bug.
        name: a name for messages and info.
        check_determinism: run the determinism check (on by default).

    Raises:
        SpecError: every structural problem found (unknown states, overlapping guards...).
    """

    def __init__(
        self,
        edges: Sequence[Edge | Mapping[str, Any]],
        *,
        initial: str,
        accepting: Iterable[str] = (),
        rejecting: Iterable[str] = (),
        no_match: NoMatch = "stay",
        legacy_fall_off_reward: bool = False,
        name: str = "rm",
        check_determinism: bool = True,
    ):
        self.name = name
        self.initial = str(initial)
        self.accepting = frozenset(str(s) for s in accepting)
        self.rejecting = frozenset(str(s) for s in rejecting)
        self.no_match: NoMatch = no_match
        self.legacy_fall_off_reward = legacy_fall_off_reward
        self.edges: tuple[Edge, ...] = tuple(_coerce_edge(e, i) for i, e in enumerate(edges))
        seen: dict[str, None] = {self.initial: None}
        for e in self.edges:
            seen.setdefault(e.src, None)
            seen.setdefault(e.dst, None)
        for s in sorted(self.accepting | self.rejecting):
            seen.setdefault(s, None)
        self.states: tuple[str, ...] = tuple(seen)
        self.index: dict[str, int] = {s: i for i, s in enumerate(self.states)}
        self.props: frozenset[str] = frozenset().union(*(e.guard.props for e in self.edges))
        self._out: list[list[int]] = [[] for _ in self.states]
        for i, e in enumerate(self.edges):
            self._out[self.index[e.src]].append(i)
        self._validate(check_determinism)
        self._terminal = np.array([s in self.accepting or s in self.rejecting for s in self.states])
        self._cache: dict[tuple[int, frozenset[str]], tuple[int, float, bool, bool, int]] = {}

    # -- structure -------------------------------------------------------------------------
    def _validate(self, check_determinism: bool) -> None:
        problems: list[SpecProblem] = []
        if self.no_match not in _NO_MATCH:
            problems.append(SpecProblem("no_match", f"must be one of {_NO_MATCH}, got {self.no_match!r}"))
        if both := self.accepting & self.rejecting:
            problems.append(SpecProblem("accepting", f"states both accepting and rejecting: {sorted(both)}"))
        for i, e in enumerate(self.edges):
            if e.src in self.accepting or e.src in self.rejecting:
                problems.append(SpecProblem(f"edges[{i}]", f"leaves terminal state {e.src!r}; terminal states have no edges"))
        if check_determinism:
            problems += self._determinism_problems()
        if problems:
            raise SpecError(problems, source=f"reward machine {self.name!r}")

    def _determinism_problems(self) -> list[SpecProblem]:
        problems = []
        for out in self._out:
            for k, i in enumerate(out):
                for j in out[k + 1 :]:
                    a, b = self.edges[i], self.edges[j]
                    if a.dst == b.dst and a.reward == b.reward:
                        continue  # overlapping guards that agree are harmless
                    witness = satisfiable_together([a.guard, b.guard])
                    if witness is not None:
                        msg = (
                            f"non-deterministic: from {a.src!r}, guards {a.guard.text!r} (edge {i}) and "
                            f"{b.guard.text!r} (edge {j}) both hold for labels {sorted(witness)}; make them exclusive"
                        )
                        problems.append(SpecProblem(f"edges[{j}]", msg))
        return problems

    def is_terminal(self, state: str) -> bool:
        return state in self.accepting or state in self.rejecting

    @property
    def n_states(self) -> int:
        return len(self.states)

    def outgoing(self, state: str) -> list[Edge]:
        """The edges leaving `state`, in file order."""
        return [self.edges[i] for i in self._out[self.index[state]]]

    # -- stepping --------------------------------------------------------------------------
    def step_index(self, u: int, labels: frozenset[str]) -> tuple[int, float, bool, bool, int]:
        """Fast step on state indices: `(next, reward, accepted, rejected, edge or -1)`. Cached."""
        key = (u, labels)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._compute(u, labels)
            self._cache[key] = hit
        return hit

    def _compute(self, u: int, labels: frozenset[str]) -> tuple[int, float, bool, bool, int]:
        if self._terminal[u]:
            raise NoTransitionError(
                f"reward machine {self.name!r} is in terminal state {self.states[u]!r}; reset it before stepping"
            )
        for i in self._out[u]:
            e = self.edges[i]
            if e.guard(labels):
                v = self.index[e.dst]
                return v, e.reward, e.dst in self.accepting, e.dst in self.rejecting, i
        if self.no_match == "stay":
            return u, 0.0, False, False, -1
        if self.no_match == "reject":
            return u, self._fall_off_reward(u), False, True, -1
        raise NoTransitionError(
            f"reward machine {self.name!r}: no edge from {self.states[u]!r} matches labels {sorted(labels)}; "
            "add an edge or set no_match to 'stay' or 'reject'"
        )

    def _fall_off_reward(self, u: int) -> float:
        if not self.legacy_fall_off_reward:
            return 0.0
        for i in self._out[u]:
            if self.edges[i].dst in self.accepting:
                return self.edges[i].reward
        return 0.0

    def step(self, state: str, labels: Iterable[str]) -> RMStep:
        """One step from `state` on the labels that hold now."""
        if state not in self.index:
            raise SpecError(f"reward machine {self.name!r} has no state {state!r}; states: {list(self.states)}")
        v, r, acc, rej, e = self.step_index(self.index[state], frozenset(labels))
        return RMStep(self.states[v], r, acc, rej, None if e < 0 else e)

    def run(self, trace: Iterable[Iterable[str]], *, state: str | None = None) -> list[RMStep]:
        """Steps over a trace of label sets, stopping at the first terminal step."""
        out: list[RMStep] = []
        current = state or self.initial
        for labels in trace:
            step = self.step(current, labels)
            out.append(step)
            current = step.state
            if step.terminal:
                break
        return out

    def tables(self, alphabet: Sequence[frozenset[str]]) -> RMTables:
        """Dense tables for every (state, label set in `alphabet`), for vectorised learners."""
        n, m = self.n_states, len(alphabet)
        nxt = np.tile(np.arange(n)[:, None], (1, m))
        rew = np.zeros((n, m))
        acc = np.zeros((n, m), dtype=bool)
        rej = np.zeros((n, m), dtype=bool)
        for u in range(n):
            if self._terminal[u]:
                acc[u] = self.states[u] in self.accepting
                rej[u] = self.states[u] in self.rejecting
                continue
            for j, labels in enumerate(alphabet):
                nxt[u, j], rew[u, j], acc[u, j], rej[u, j], _ = self.step_index(u, labels)
        return RMTables(nxt, rew, acc, rej)

    # -- (de)serialisation -------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None, **overrides: Any) -> RewardMachine:
        """Build from the dict form (what the TOML/JSON files hold)."""
        known = {"name", "initial", "accepting", "rejecting", "no_match", "edges", "legacy_fall_off_reward"}
        problems = [SpecProblem(k, f"unknown key; known: {sorted(known)}") for k in data if k not in known]
        if "initial" not in data:
            problems.append(SpecProblem("initial", "required key is missing"))
        if not isinstance(data.get("edges"), list):
            problems.append(SpecProblem("edges", "required: a list of {from, to, guard, reward} tables"))
        if problems:
            raise SpecError(problems, source=source)
        kwargs: dict[str, Any] = {
            "initial": str(data["initial"]),
            "accepting": [str(s) for s in data.get("accepting", [])],
            "rejecting": [str(s) for s in data.get("rejecting", [])],
            "no_match": data.get("no_match", "stay"),
            "legacy_fall_off_reward": bool(data.get("legacy_fall_off_reward", False)),
            "name": str(data.get("name", source or "rm")),
        }
        kwargs.update(overrides)
        return cls(data["edges"], **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """The dict form; `from_dict(rm.to_dict())` rebuilds an equal machine."""
        return {
            "name": self.name,
            "initial": self.initial,
            "accepting": sorted(self.accepting),
            "rejecting": sorted(self.rejecting),
            "no_match": self.no_match,
            "legacy_fall_off_reward": self.legacy_fall_off_reward,
            "edges": [{"from": e.src, "to": e.dst, "guard": e.guard.text, "reward": e.reward} for e in self.edges],
        }

    @classmethod
    def load(cls, path: str | Path, **overrides: Any) -> RewardMachine:
        """Load a `.toml` or `.json` machine, or a `.txt` file in the original text format."""
        path = Path(path)
        try:
            text = utf8_text(path.read_bytes())
        except OSError as exc:
            raise InputError(f"cannot read reward machine: {exc.strerror}", source=str(path)) from exc
        except ValueError as exc:
            raise InputError(f"cannot read reward machine: {exc}", source=str(path)) from None
        if path.suffix == ".txt":
            from rewardlab.envs.rm.text import parse_text_rm

            return parse_text_rm(text, source=str(path), **overrides)
        try:
            data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
        except ValueError as exc:  # JSONDecodeError, TOMLDecodeError, or an integer Python will not read
            raise InputError(f"not valid {path.suffix[1:] or 'toml'}: {exc}", source=str(path)) from exc
        return cls.from_dict(data, source=str(path), **overrides)

    def __repr__(self) -> str:
        return (
            f"RewardMachine({self.name!r}, states={len(self.states)}, edges={len(self.edges)}, "
            f"initial={self.initial!r}, no_match={self.no_match!r})"
        )


def _coerce_edge(edge: Edge | Mapping[str, Any], i: int) -> Edge:
    if isinstance(edge, Edge):
        return edge
    where = f"edges[{i}]"
    if not isinstance(edge, Mapping):
        raise SpecError([SpecProblem(where, f"expected a table with from/to/guard/reward, got {type(edge).__name__}")])
    missing = [k for k in ("from", "to", "guard") if k not in edge]
    unknown = [k for k in edge if k not in ("from", "to", "guard", "reward")]
    if missing or unknown:
        msg = f"missing keys {missing}" if missing else f"unknown keys {unknown}"
        raise SpecError([SpecProblem(where, msg + "; an edge has from, to, guard, reward")])
    try:
        reward = float(edge.get("reward", 0.0))
    except (TypeError, ValueError) as exc:
        raise SpecError([SpecProblem(f"{where}.reward", f"not a number: {edge.get('reward')!r}")]) from exc
    guard = parse_guard(str(edge["guard"]), where=f"{where}.guard")
    return Edge(str(edge["from"]), str(edge["to"]), guard, reward)
