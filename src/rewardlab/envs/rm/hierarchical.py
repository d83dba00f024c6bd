"""Hierarchical reward machines: machines whose edges call other machines.

After Furelos-Blanco, Law, Jonsson, Broda, Russo, "Hierarchies of Reward Machines", ICML 2023.
A machine's edge is either a guard edge (`guard = "a & !n"`) or a call edge (`call = "coffee"`):
in a state with call edges, every callee runs from its initial state on the incoming labels
(in parallel, in file order); when a callee accepts, the caller follows that call edge and pays
its reward; a callee that rejects rejects the whole hierarchy; callee rewards are paid as they
occur. Guard edges are tried after the callees. Calls may nest; cycles are an error.

`flatten()` compiles a hierarchy into an equivalent flat `RewardMachine` over an alphabet, so the
wrapper, counterfactuals, shaping and the tabular learners (whose HRM learner then has one
option per edge of the flattened machine) all work on it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardlab.envs.rm.guard import Guard, parse_guard
from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.errors import SpecError, SpecProblem

__all__ = ["HierarchicalRM", "Node"]

#: a composite state: (machine name, state, the composite states of the callees at that state)
Node = tuple[str, str, tuple[Any, ...]]


@dataclass(frozen=True)
class _Edge:
    src: str
    dst: str
    reward: float
    guard: Guard | None
    call: str | None


@dataclass(frozen=True)
class _Machine:
    initial: str
    accepting: frozenset[str]
    rejecting: frozenset[str]
    edges: tuple[_Edge, ...]


class HierarchicalRM:
    """A hierarchy of reward machines rooted at `root`.

    Args:
        machines: name -> dict with `initial`, `accepting`, `rejecting` and `edges`, where each
            edge has `from`, `to`, `reward` and exactly one of `guard` or `call`.
        root: the machine the episode starts in.
    """

    def __init__(self, machines: Mapping[str, Mapping[str, Any]], *, root: str):
        problems: list[SpecProblem] = []
        self.machines: dict[str, _Machine] = {}
        for name, spec in machines.items():
            edges = []
            for i, e in enumerate(spec.get("edges", [])):
                where = f"{name}.edges[{i}]"
                if ("guard" in e) == ("call" in e):
                    problems.append(SpecProblem(where, "an edge has exactly one of 'guard' or 'call'"))
                    continue
                guard = parse_guard(str(e["guard"]), where=f"{where}.guard") if "guard" in e else None
                edges.append(_Edge(str(e["from"]), str(e["to"]), float(e.get("reward", 0.0)), guard, e.get("call")))
            self.machines[name] = _Machine(
                str(spec["initial"]), frozenset(map(str, spec.get("accepting", []))), frozenset(map(str, spec.get("rejecting", []))), tuple(edges)
            )
        if root not in self.machines:
            problems.append(SpecProblem("root", f"unknown machine {root!r}; known: {sorted(self.machines)}"))
        for name, m in self.machines.items():
            for e in m.edges:
                if e.call is not None and e.call not in self.machines:
                    problems.append(SpecProblem(name, f"calls unknown machine {e.call!r}"))
        if problems:
            raise SpecError(problems, source="hierarchical reward machine")
        self.root = root
        self._check_acyclic()

    def _check_acyclic(self) -> None:
        def visit(name: str, path: tuple[str, ...]) -> None:
            if name in path:
                raise SpecError(f"hierarchical RM calls itself: {' -> '.join((*path, name))}; calls must not cycle")
            for e in self.machines[name].edges:
                if e.call:
                    visit(e.call, (*path, name))

        visit(self.root, ())

    # -- stepping ----------------------------------------------------------------------------
    def enter(self, name: str, state: str | None = None) -> Node:
        """The composite node for machine `name` in `state` (default: its initial state)."""
        m = self.machines[name]
        u = m.initial if state is None else state
        calls = tuple(self.enter(e.call) for e in m.edges if e.src == u and e.call is not None)
        return (name, u, calls)

    def initial(self) -> Node:
        return self.enter(self.root)

    def step(self, node: Node, labels: Iterable[str]) -> tuple[Node, float, bool, bool]:
        """`(next node, reward, accepted, rejected)` for the labels of one env step."""
        return self._step(node, frozenset(labels))

    def _step(self, node: Node, labels: frozenset[str]) -> tuple[Node, float, bool, bool]:
        name, u, subs = node
        m = self.machines[name]
        reward = 0.0
        new_subs = []
        call_edges = [e for e in m.edges if e.src == u and e.call is not None]
        for e, sub in zip(call_edges, subs, strict=True):
            nxt, r, acc, rej = self._step(sub, labels)
            reward += r
            if rej:
                return nxt, reward, False, True
            if acc:
                return self._arrive(name, e.dst, reward + e.reward)
            new_subs.append(nxt)
        for e in m.edges:
            if e.src == u and e.guard is not None and e.guard(labels):
                return self._arrive(name, e.dst, reward + e.reward)
        return (name, u, tuple(new_subs)), reward, False, False

    def _arrive(self, name: str, dst: str, reward: float) -> tuple[Node, float, bool, bool]:
        m = self.machines[name]
        return self.enter(name, dst), reward, dst in m.accepting, dst in m.rejecting

    # -- compilation ---------------------------------------------------------------------------
    def flatten(self, alphabet: Sequence[frozenset[str]], *, max_states: int = 10_000) -> RewardMachine:
        """An equivalent flat `RewardMachine` over `alphabet` (every label set that can occur).

        States are the reachable composite nodes (named by `describe`); the flat machine's
        guards are disjunctions of the label sets leading to each successor.
        """
        start = self.initial()
        names = {start: "0"}
        queue, edges = deque([start]), []
        accepting: set[str] = set()
        rejecting: set[str] = set()
        while queue:
            node = queue.popleft()
            targets: dict[tuple[Node, float], list[frozenset[str]]] = {}
            for labels in alphabet:
                nxt, r, acc, rej = self._step(node, labels)
                if nxt not in names:
                    if len(names) >= max_states:
                        raise SpecError(f"flattening exceeds {max_states} states; raise max_states")
                    names[nxt] = str(len(names))
                    if not (acc or rej):
                        queue.append(nxt)
                (accepting if acc else rejecting if rej else set()).add(names[nxt])
                targets.setdefault((nxt, r), []).append(labels)
            for (nxt, r), sets in targets.items():
                edges.append({"from": names[node], "to": names[nxt], "reward": r, "guard": _exactly_one_of(sets, alphabet)})
        return RewardMachine(edges, initial="0", accepting=accepting, rejecting=rejecting, name=f"flat({self.root})",
                             no_match="error", check_determinism=False)


def _exactly_one_of(sets: list[frozenset[str]], alphabet: Sequence[frozenset[str]]) -> str:
    """A guard true exactly on the label sets `sets` among `alphabet` (a DNF of full minterms)."""
    props = sorted(set().union(*alphabet))
    if not props:
        return "True"
    terms = ["(" + " & ".join(p if p in s else f"!{p}" for p in props) + ")" for s in sets]
    return " | ".join(terms)
