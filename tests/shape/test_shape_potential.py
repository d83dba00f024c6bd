"""Potential-based shaping keeps the optimal policy of a tabular MDP; terminal potential is 0."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.errors import ArrayError
from rewardlab.shape import potential_shaping
from rewardlab.shape.potential import shaped_reward_table


def q_values(p: np.ndarray, r: np.ndarray, gamma: float, terminal: np.ndarray) -> np.ndarray:
    """Q* by value iteration; P (S, A, S), R (S, A, S); terminal states are absorbing with V=0."""
    v = np.zeros(p.shape[0])
    for _ in range(2000):
        q = (p * (r + gamma * np.where(terminal, 0.0, v)[None, None, :])).sum(axis=2)
        new_v = np.where(terminal, 0.0, q.max(axis=1))
        if np.max(np.abs(new_v - v)) < 1e-12:
            break
        v = new_v
    return (p * (r + gamma * np.where(terminal, 0.0, v)[None, None, :])).sum(axis=2)


@st.composite
def mdps(draw):
    n_states = draw(st.integers(2, 6))
    n_actions = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n_states), size=(n_states, n_actions))
    r = rng.normal(size=(n_states, n_actions, n_states))
    terminal = np.zeros(n_states, dtype=bool)
    terminal[-1] = True
    phi = rng.normal(scale=5.0, size=n_states)
    return p, r, terminal, phi


@settings(max_examples=40, deadline=None)
@given(mdp=mdps(), gamma=st.floats(0.5, 0.95))
def test_potential_shaping_leaves_the_optimal_policy_unchanged(mdp, gamma):
    p, r, terminal, phi = mdp
    q = q_values(p, r, gamma, terminal)
    shaped_q = q_values(p, shaped_reward_table(r, phi, gamma=gamma, terminal=terminal), gamma, terminal)
    live = ~terminal
    # Ng et al. 1999: Q'(s, a) = Q(s, a) - Φ(s), so the argmax (the optimal policy) is the same.
    np.testing.assert_allclose(shaped_q[live], q[live] - phi[live, None], atol=1e-6)
    gaps = np.sort(q[live], axis=1)
    clear = gaps[:, -1] - gaps[:, -2] > 1e-6  # skip ties: any argmax is optimal there
    np.testing.assert_array_equal(q[live].argmax(axis=1)[clear], shaped_q[live].argmax(axis=1)[clear])


def test_nonzero_terminal_potential_would_change_the_optimal_policy():
    # Two actions from s0: go to terminal A (reward 1) or terminal B (reward 0). A potential of
    # +5 on B that is *not* zeroed at the terminal flips the choice; ours zeroes it.
    p = np.zeros((3, 2, 3))
    p[0, 0, 1] = p[0, 1, 2] = 1.0
    p[1, :, 1] = p[2, :, 2] = 1.0
    r = np.zeros((3, 2, 3))
    r[0, 0, 1] = 1.0
    terminal = np.array([False, True, True])
    phi = np.array([0.0, 0.0, 5.0])
    wrong = r + 1.0 * phi[None, None, :] - phi[:, None, None]
    assert q_values(p, wrong, 1.0, terminal)[0].argmax() == 1  # the bug: shaping changed it
    right = shaped_reward_table(r, phi, gamma=1.0, terminal=terminal)
    assert q_values(p, right, 1.0, terminal)[0].argmax() == 0


def test_trajectory_shaping_telescopes_to_return_minus_initial_potential():
    rewards = np.array([[0.0, 0.0, 1.0], [0.5, np.nan, np.nan]])
    mask = ~np.isnan(rewards)
    phi = np.array([[1.0, 2.0, 3.0, 9.0], [4.0, 7.0, 0.0, 0.0]])
    shaped = potential_shaping(rewards, phi, mask, gamma=1.0)
    np.testing.assert_allclose(shaped.sum(axis=1), np.nansum(rewards, axis=1) - phi[:, 0])


def test_truncated_episode_keeps_its_bootstrap_potential():
    shaped = potential_shaping([[0.0, 0.0]], [[1.0, 2.0, 3.0]], gamma=0.5, terminal=[False])
    np.testing.assert_allclose(shaped, [[0.5 * 2 - 1, 0.5 * 3 - 2]])


def test_potentials_need_one_more_state_than_steps():
    with pytest.raises(ArrayError, match="one more state"):
        potential_shaping([[0.0, 1.0]], [[0.0, 1.0]])


def test_gamma_outside_unit_interval_rejected():
    with pytest.raises(ArrayError, match="gamma"):
        shaped_reward_table(np.zeros((2, 1, 2)), np.zeros(2), gamma=1.5)
