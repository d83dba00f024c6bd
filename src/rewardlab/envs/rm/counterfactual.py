"""Counterfactual experiences for reward machines (CRM).

Toro Icarte et al. (JAIR 2022), sec. 5.1: the labels of one env transition (s, a, s') say what
every RM state *would* have done; so one real step yields one experience per (task, RM state).
This module is the pure function; `RewardMachineWrapper.counterfactual_batch` encodes the same
experiences as observations for deep-RL replay buffers (e.g. Stable-Baselines3's `ReplayBuffer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rewardlab.envs.rm.machine import RewardMachine

__all__ = ["RMExperience", "counterfactual_experiences"]


@dataclass(frozen=True)
class RMExperience:
    """What RM state `state` of task `task` would have done on the labels of one transition.

    `terminated` is True when the RM accepts or rejects, or the env itself terminated.
    """

    task: int
    state: str
    next_state: str
    reward: float
    terminated: bool
    accepted: bool
    rejected: bool


def counterfactual_experiences(
    machines: RewardMachine | Sequence[RewardMachine],
    labels: frozenset[str],
    *,
    env_terminated: bool = False,
) -> list[RMExperience]:
    """One experience per non-terminal state of every machine, for the same labels.

    Args:
        machines: one machine or the tasks of a multi-task setting (task = position).
        labels: the labels the real transition emitted.
        env_terminated: whether the env itself terminated (ends every experience).

    Returns:
        `RMExperience`s in (task, state) order. Each is a valid product-MDP transition: its
        next state and reward are exactly what `machine.step(state, labels)` gives.
    """
    rms = [machines] if isinstance(machines, RewardMachine) else list(machines)
    out: list[RMExperience] = []
    for t, rm in enumerate(rms):
        for u, name in enumerate(rm.states):
            if rm.is_terminal(name):
                continue
            v, r, acc, rej, _ = rm.step_index(u, labels)
            out.append(RMExperience(t, name, rm.states[v], r, acc or rej or env_terminated, acc, rej))
    return out
