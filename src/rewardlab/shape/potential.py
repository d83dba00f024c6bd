"""Potential-based reward shaping, `F(s, s') = γΦ(s') − Φ(s)`, with the terminal state right.

Ng, Harada & Russell 1999 ("Policy invariance under reward transformations", ICML, Theorem 1):
adding F to every transition leaves the optimal policy unchanged for any potential Φ. In an
episodic task this holds only if the potential of a terminal (absorbing) state is 0 — otherwise
the shaping adds `γΦ(s_T)` once per episode, which depends on *where* the episode ends and can
change which ending is optimal (Grześ 2017, "Reward Shaping in Episodic Reinforcement
Learning", AAMAS). Both functions here force Φ(terminal) = 0; a *truncated* episode (time
limit, not a real end) keeps its bootstrap potential.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import check_finite, like, prefix_mask, to_mask, to_numpy

__all__ = ["potential_shaping", "shaped_reward_table"]


def potential_shaping(
    rewards: Any,
    potentials: Any,
    mask: Any = None,
    *,
    gamma: float = 1.0,
    terminal: Any = None,
) -> Any:
    """Add `γΦ(s_{t+1}) − Φ(s_t)` to each step reward of a batch of trajectories.

    Args:
        rewards: `(batch, T)` step rewards.
        potentials: `(batch, T + 1)` potential of the state before each step, plus the state
            after the last step (index `length` of each row).
        mask: `(batch, T)` valid steps, a prefix per row (ragged episodes).
        gamma: discount in [0, 1].
        terminal: `(batch,)` bool, True where the episode really ended (default all True): the
            potential after the last step is then taken as 0, whatever `potentials` says.

    Returns:
        `(batch, T)` shaped rewards `r + F` (0 at masked steps). With γ = 1 and terminal
        endings, each row's shaped return equals its return minus `Φ(s_0)`.
    """
    r = to_numpy(rewards, "rewards", ndim=2)
    phi = to_numpy(potentials, "potentials", ndim=2)
    b, t = r.shape
    if phi.shape != (b, t + 1):
        raise ArrayError("potentials", f"need shape {(b, t + 1)} (one more state than steps), got {phi.shape}")
    if not 0.0 <= gamma <= 1.0:
        raise ArrayError("gamma", f"must be in [0, 1], got {gamma}")
    valid = to_mask(mask, "mask", r.shape)
    prefix_mask(valid, "mask")
    ended = to_mask(terminal, "terminal", (b,))
    check_finite(r, "rewards", valid)
    lengths = valid.sum(axis=1)
    next_states = np.zeros((b, t + 1), dtype=bool)
    next_states[:, 1:] = valid  # potentials[:, 1:length+1] are used as Φ(s')
    check_finite(phi, "potentials", next_states | np.eye(1, t + 1, 0, dtype=bool).repeat(b, axis=0))
    phi_next = phi[:, 1:].copy()
    last = np.maximum(lengths - 1, 0)
    rows = np.flatnonzero(ended & (lengths > 0))
    phi_next[rows, last[rows]] = 0.0  # terminal potential is 0 (Grześ 2017)
    shaped = r + gamma * phi_next - phi[:, :-1]
    return like(np.where(valid, shaped, 0.0), rewards, potentials)


def shaped_reward_table(rewards: Any, potential: Any, *, gamma: float, terminal: Any = None) -> Any:
    """Shaped rewards of a tabular MDP: `R'(s, a, s') = R(s, a, s') + γΦ(s')[s' not terminal] − Φ(s)`.

    Args:
        rewards: `(states, actions, states)` reward of each transition.
        potential: `(states,)` Φ.
        gamma: discount in [0, 1].
        terminal: `(states,)` bool, absorbing states whose potential is taken as 0.
    """
    r = to_numpy(rewards, "rewards", ndim=3)
    phi = to_numpy(potential, "potential", ndim=1)
    n = r.shape[0]
    if r.shape[2] != n or phi.shape != (n,):
        raise ArrayError("rewards/potential", f"need (S, A, S) rewards and (S,) potential, got {r.shape}, {phi.shape}")
    if not 0.0 <= gamma <= 1.0:
        raise ArrayError("gamma", f"must be in [0, 1], got {gamma}")
    check_finite(r, "rewards")
    check_finite(phi, "potential")
    absorbing = to_mask(terminal, "terminal", (n,)) if terminal is not None else np.zeros(n, dtype=bool)
    phi_next = np.where(absorbing, 0.0, phi)
    return like(r + gamma * phi_next[None, None, :] - phi[:, None, None], rewards, potential)
