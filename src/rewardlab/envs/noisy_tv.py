"""The noisy-TV experiment (Burda et al. 2019, "Large-Scale Study of Curiosity-Driven
Learning", ICLR 2019): an agent driven only by an intrinsic bonus, on a grid whose corner shows
pure noise. A bonus that rewards unpredictability keeps the agent watching; one that rewards
learnable novelty does not (`bench/bench_envs.py extras`, docs/envs.md).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rewardlab.envs.intrinsic import IntrinsicBonus

__all__ = ["noisy_tv_rollout"]


def noisy_tv_rollout(
    bonus: IntrinsicBonus,
    *,
    steps: int = 3000,
    warmup: int = 1500,
    chunk: int = 16,
    seed: int = 0,
    size: int = 5,
    noise_dims: int = 4,
) -> dict[str, float]:
    """An agent driven only by `bonus` on a `size` x `size` grid with a noisy TV in a corner.

    Observations are one-hot cells plus `noise_dims` channels that are N(0, 1) noise whenever
    the agent stands on the TV cell (0 elsewhere); bumping into the corner's walls keeps it
    there, watching. The agent starts in the centre. For `warmup` steps it acts uniformly at
    random (so every bonus sees the same kind of data), then epsilon-greedily (0.1) on a tabular
    Q-function (lr 0.2, gamma 0.9) that learns the intrinsic reward throughout; the bonus
    learns every `chunk` steps.

    Returns:
        `tv_fraction` of steps spent on the TV after the warm-up,
        `visited_fraction` of cells ever visited, and the final mean bonus for moves into the
        TV (`tv_bonus`) and for all other moves (`other_bonus`), averaged over fresh noise.
    """
    from rewardlab.envs.gridworld import GridMDP

    rng = np.random.default_rng(seed)
    mdp = GridMDP.make(size, size, start=(size // 2, size // 2))
    S, tv = mdp.n_states, mdp.n_states - 1

    def observe(s: np.ndarray) -> np.ndarray:
        o = np.zeros((len(s), S + noise_dims), dtype=np.float32)
        o[np.arange(len(s)), s] = 1.0
        on = s == tv
        o[on, S:] = rng.normal(size=(int(on.sum()), noise_dims))
        return o

    Q = np.zeros((S, 4))
    s, on_tv, visited, n_chunks = mdp.start, 0, {mdp.start}, steps // chunk
    for k in range(n_chunks):
        ss, aa, nn = [], [], []
        for _ in range(chunk):
            explore = k * chunk < warmup or rng.random() < 0.1
            a = int(rng.integers(4)) if explore else int(rng.choice(np.flatnonzero(Q[s] == Q[s].max())))
            s2 = int(mdp.next_state[s, a])
            ss.append(s)
            aa.append(a)
            nn.append(s2)
            on_tv += (s2 == tv) and k * chunk >= warmup
            visited.add(s2)
            s = s2
        st, at, nt = np.array(ss), np.array(aa), np.array(nn)
        o, o2 = observe(st), observe(nt)
        r = bonus.reward(o, at, o2)
        for i in range(chunk):
            Q[st[i], at[i]] += 0.1 * (r[i] + 0.9 * Q[nt[i]].max() - Q[st[i], at[i]])
        bonus.update(o, at, o2)
    tv_bonus, other_bonus = _bonus_landscape(bonus, mdp.next_state, observe, tv)
    return {
        "tv_fraction": on_tv / max(n_chunks * chunk - warmup, 1),
        "visited_fraction": len(visited) / S,
        "tv_bonus": tv_bonus,
        "other_bonus": other_bonus,
    }


def _bonus_landscape(
    bonus: IntrinsicBonus, next_state: np.ndarray, observe: Callable[[np.ndarray], np.ndarray], tv: int, draws: int = 16
) -> tuple[float, float]:
    """Mean bonus of every move into the TV and of every other move, `draws` noise draws each."""
    S, A = next_state.shape
    st = np.repeat(np.arange(S), A * draws)
    at = np.tile(np.repeat(np.arange(A), draws), S)
    nt = next_state[st, at]
    r = bonus.reward(observe(st), at, observe(nt))
    into_tv = nt == tv
    return float(r[into_tv].mean()), float(r[~into_tv].mean())
