"""Reward machines compiled into linked transition tables, for the wrapper's per-step path.

Every state of every machine gets a global index `g` (the machines' states laid end to end in
task order) and a *node*: a dict from the frozenset of labels to a `Hop`, the complete outcome
of taking that transition. A hop holds the next node itself, so following the machine is

    hop = node[labels]          # one dict lookup: no guard is evaluated
    node = hop[HOP_NODE]

Nodes are filled on first use: the machine's guards are evaluated once per (state, label set)
(`RewardMachine.step_index`) and the answer is kept, shaped rewards and info items included.
Labelling functions emit few distinct label sets (the office world: 9), so the table stays
small; `compile(alphabet)` fills it eagerly when the alphabet is known.

Hops are plain tuples rather than NamedTuples or dataclasses: unpacking an exact tuple is a
single specialised bytecode in CPython 3.11+, which matters at ~1 us per env step.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.envs.rm.shaping import rm_potentials
from rewardlab.errors import InputError, SpecError

__all__ = ["HOP_FIELDS", "CompiledMachines", "Hop", "Node"]

#: A node maps a frozenset of labels to the hop it takes (see the module docstring).
Node = dict[frozenset[str], "Hop"]
#: `(node, g, ends, reward, reward_if_env_ends, rm_reward, state, labels, extra, payload)`, see
#: HOP_FIELDS.
Hop = tuple[Node, int, bool, float, float, float, str, frozenset[str], "dict[str, Any] | None", Any]
HOP_FIELDS = (
    "node",  # the next state's node
    "g",  # the next state's global index
    "ends",  # the machine accepts or rejects on this transition
    "reward",  # reward paid while the env continues (shaped when shaping is on)
    "reward_if_env_ends",  # reward paid when the env terminates on this step: Phi(terminal) = 0
    "rm_reward",  # the machine's own, unshaped reward (info["reward/rm"])
    "state",  # the next state's name (info["rm/state"])
    "labels",  # the labels as a frozenset (info["rm/labels"])
    "extra",  # further info items: rm/task in multi-task tables, rm/accepted|rejected on ends
    "payload",  # the next state's payload (see CompiledMachines), None without one
)
HOP_NODE = 0


class CompiledMachines:
    """The linked transition table of one or more reward machines (tasks).

    Args:
        machines: the tasks, in order; task `t`'s state `u` has global index `offsets[t] + u`.
        shaping_gamma: when set, rewards include potential-based shaping
            `gamma * Phi(u') - Phi(u)` with `Phi = rm_potentials(machine, gamma)` and
            `Phi(terminal) = 0` (Ng, Harada & Russell 1999; Toro Icarte et al. 2022, sec. 5.3).
        payload: one object per global state, handed out by every hop into that state (the
            wrapper keeps each state's one-hot memo there, saving an index per step).

    Attributes:
        offsets: global index of each task's first state; `offsets[-1]` is the total.
        nodes: one node per global state.
        owner: `(task, u)` of every global state.
    """

    def __init__(
        self, machines: Sequence[RewardMachine], *, shaping_gamma: float | None = None, payload: Sequence[Any] | None = None
    ):
        self.machines = list(machines)
        self.offsets: list[int] = [0, *np.cumsum([m.n_states for m in self.machines]).tolist()]
        self.owner = [(t, u) for t, m in enumerate(self.machines) for u in range(m.n_states)]
        self.nodes: list[Node] = [{} for _ in self.owner]
        if payload is not None and len(payload) != len(self.owner):
            raise SpecError(f"payload needs one entry per machine state ({len(self.owner)}), got {len(payload)}")
        self.payload: Sequence[Any] = [None] * len(self.owner) if payload is None else payload
        self.shaping_gamma = shaping_gamma
        #: global indices of every non-terminal state, in (task, state) order (CRM's experiences)
        self.live = np.array(
            [g for g, (t, u) in enumerate(self.owner) if not self.machines[t].is_terminal(self.machines[t].states[u])],
            dtype=np.int64,
        )
        self._phi = [rm_potentials(m, gamma=shaping_gamma) for m in self.machines] if shaping_gamma else None

    @property
    def n_states(self) -> int:
        """Total number of states over every machine."""
        return self.offsets[-1]

    def start(self, task: int) -> Hop:
        """The hop into task `task`'s initial state (no labels, reward 0), as `reset` takes it."""
        rm = self.machines[task]
        g = self.offsets[task] + rm.index[rm.initial]
        return (self.nodes[g], g, False, 0.0, 0.0, 0.0, rm.initial, frozenset(), None, self.payload[g])

    def hop(self, g: int, labels: Iterable[str]) -> Hop:
        """The hop from global state `g` on `labels`, computed and stored on first use.

        Raises:
            InputError: `labels` is a string or not an iterable of strings (a labelling
                function must return a frozenset of label names).
            NoTransitionError: `g` is terminal, or no edge matches under `no_match="error"`.
        """
        if isinstance(labels, str) or not isinstance(labels, Iterable):
            raise InputError(
                f"the labelling function returned {type(labels).__name__} {labels!r}; "
                "return a frozenset of label names, e.g. frozenset({'coffee'})"
            )
        key = labels if type(labels) is frozenset else frozenset(labels)
        node = self.nodes[g]
        found = node.get(key)
        if found is None:
            found = node[key] = self._compute(g, key)
        return found

    def compile(self, alphabet: Iterable[Iterable[str]]) -> None:
        """Fill every non-terminal node for every label set of `alphabet` now, not on first use."""
        sets = [frozenset(a) for a in alphabet]
        for g, (task, u) in enumerate(self.owner):
            rm = self.machines[task]
            if not rm.is_terminal(rm.states[u]):
                for labels in sets:
                    self.hop(g, labels)

    def _compute(self, g: int, labels: frozenset[str]) -> Hop:
        task, u = self.owner[g]
        rm = self.machines[task]
        v, rm_r, acc, rej, _ = rm.step_index(u, labels)
        ends = acc or rej
        reward = reward_if_env_ends = rm_r
        if self._phi is not None:
            phi, gamma = self._phi[task], float(self.shaping_gamma)  # type: ignore[arg-type]
            reward_if_env_ends = rm_r - float(phi[u])
            reward = reward_if_env_ends + (0.0 if ends else gamma * float(phi[v]))
        # The four keys promised on every step are stored by the wrapper one by one; anything
        # else rides in `extra`, None on most hops (each extra key costs a dict resize).
        extra: dict[str, Any] = {}
        if len(self.machines) > 1:
            extra["rm/task"] = task
        if ends:
            extra["rm/accepted"], extra["rm/rejected"] = acc, rej
        w = self.offsets[task] + v
        return (self.nodes[w], w, ends, reward, reward_if_env_ends, rm_r, rm.states[v], labels, extra or None, self.payload[w])
