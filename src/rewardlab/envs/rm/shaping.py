"""Automated reward shaping from a reward machine's structure.

Toro Icarte et al. (JAIR 2022), sec. 5.3: run value iteration on the RM graph, treating each
edge as one step with the edge's reward, and use Phi(u) = -V(u) as a potential; the shaped
reward r + gamma * Phi(u') - Phi(u) (Ng, Harada, Russell 1999) leaves optimal policies unchanged.
Terminal states have V = Phi = 0.
"""

from __future__ import annotations

import numpy as np

from rewardlab.envs.rm.machine import RewardMachine

__all__ = ["rm_potentials", "rm_values"]


def rm_values(rm: RewardMachine, *, gamma: float = 0.9, tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """V(u) = max over edges (r + gamma V(u')) on the RM graph; terminal states 0. Shape (n_states,)."""
    v = np.zeros(rm.n_states)
    edges = [(rm.index[e.src], rm.index[e.dst], e.reward) for e in rm.edges]
    terminal = np.array([rm.is_terminal(s) for s in rm.states])
    for _ in range(max_iter):
        new = np.full(rm.n_states, -np.inf)
        for u, w, r in edges:
            new[u] = max(new[u], r + gamma * v[w])
        if rm.no_match == "stay":
            new = np.maximum(new, gamma * v)  # staying put is always possible
        new[terminal] = 0.0
        new[np.isinf(new)] = 0.0
        if np.max(np.abs(new - v)) < tol:
            return new
        v = new
    return v


def rm_potentials(rm: RewardMachine, *, gamma: float = 0.9) -> np.ndarray:
    """Phi(u) = -V(u) (the sign convention of the original code); 0 on terminal states."""
    return -rm_values(rm, gamma=gamma)


def shaped_reward(reward: float, phi_u: float, phi_next: float, *, gamma: float, terminal: bool) -> float:
    """r + gamma * Phi(u') - Phi(u), with Phi(terminal) = 0."""
    return reward + gamma * (0.0 if terminal else phi_next) - phi_u
