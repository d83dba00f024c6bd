"""STARC-style distance between two tabular reward functions.

Skalse, Farnik, Motwani, Jenner, Gleave, Abate, "STARC: A General Framework For Quantifying
Differences Between Reward Functions", ICLR 2024. A STARC metric canonicalises each reward
(removing potential shaping), normalises it (removing positive scaling) and takes a distance:

    c(R)(s, a, s') = R(s, a, s') - V^pi(s) + gamma * V^pi(s')      (value-adjusted levelling,
                                                                    pi uniformly random)
    d(R1, R2) = || c(R1)/||c(R1)|| - c(R2)/||c(R2)|| ||_2 / 2       in [0, 1]

So d = 0 when R2 = a * R1 + gamma * Phi(s') - Phi(s) for any a > 0 and any potential Phi, and
d > 0 when the rewards induce different preferences. The norm weights each (s, a, s') by the
uniform policy and the transition probabilities.
"""

from __future__ import annotations

import numpy as np

from rewardlab.errors import SpecError

__all__ = ["starc_distance"]


def _check(P: np.ndarray, R: np.ndarray) -> None:
    if P.ndim != 3 or P.shape[0] != P.shape[2]:
        raise SpecError(f"transitions P must be (S, A, S), got {P.shape}")
    if R.shape != P.shape:
        raise SpecError(f"reward R must be (S, A, S) like P, got {R.shape} and {P.shape}")
    if not np.allclose(P.sum(axis=2), 1.0):
        raise SpecError("each P[s, a] must be a probability distribution over next states")


def canonicalise(P: np.ndarray, R: np.ndarray, *, gamma: float = 0.9) -> np.ndarray:
    """Value-adjusted levelling under the uniformly random policy; shape (S, A, S)."""
    P, R = np.asarray(P, dtype=float), np.asarray(R, dtype=float)
    _check(P, R)
    if not 0 <= gamma < 1:
        raise SpecError(f"gamma must be in [0, 1), got {gamma}")
    S = P.shape[0]
    P_pi = P.mean(axis=1)  # (S, S) under the uniform policy
    r_pi = (P * R).sum(axis=2).mean(axis=1)  # (S,) expected one-step reward
    V = np.linalg.solve(np.eye(S) - gamma * P_pi, r_pi)
    return R - V[:, None, None] + gamma * V[None, None, :]


def starc_distance(P: np.ndarray, R1: np.ndarray, R2: np.ndarray, *, gamma: float = 0.9) -> float:
    """The STARC distance in [0, 1] between rewards R1 and R2 (both (S, A, S)) on dynamics P.

    A reward whose canonical form is 0 everywhere (e.g. pure shaping) has no direction; two
    such rewards are at distance 0, and one such reward against any other at 0.5.
    """
    P = np.asarray(P, dtype=float)
    w = P / P.shape[1]  # weight of (s, a, s') under uniform pi, uniform start mass
    c1, c2 = canonicalise(P, R1, gamma=gamma), canonicalise(P, R2, gamma=gamma)
    n1, n2 = np.sqrt((w * c1**2).sum()), np.sqrt((w * c2**2).sum())
    tiny = 1e-12
    if n1 < tiny and n2 < tiny:
        return 0.0
    if n1 < tiny or n2 < tiny:
        return 0.5
    diff = c1 / n1 - c2 / n2
    return float(np.sqrt((w * diff**2).sum()) / 2)
