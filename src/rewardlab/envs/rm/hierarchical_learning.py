"""Tabular learning for hierarchical reward machines with one option per call.

Furelos-Blanco et al. (ICML 2023) solve a hierarchy of reward machines with options: in every
root state, each outgoing edge (except into rejecting states) is an option. A *call* edge's option is a policy over (env state,
callee state) that tries to make the callee accept; a *guard* edge's option tries to make its
guard true. All option policies learn off-policy from every env step (like HRM in Toro Icarte
et al. 2022, with counterfactual updates over every callee state), and a controller learns by
SMDP Q-learning which option to run in each (root state, env state).

Scope: one level of calls (callees have guard edges only), deterministic tabular envs given as
tables (`next_obs` (S, A), `obs_label` (S,) label id of the state entered, `alphabet`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rewardlab.envs.rm.guard import Guard
from rewardlab.envs.rm.hierarchical import HierarchicalRM, _Edge
from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.envs.tabular import LearnerConfig
from rewardlab.errors import SpecError

__all__ = ["HierarchicalRun", "train_hierarchical"]


@dataclass
class HierarchicalRun:
    """Per-episode results of `train_hierarchical` and the learned tables."""

    returns: np.ndarray  # (episodes,) hierarchy reward per episode
    lengths: np.ndarray  # (episodes,) steps per episode
    n_options: int


@dataclass
class _Option:
    edge: _Edge
    callee: RewardMachine | None
    tables: tuple[np.ndarray, np.ndarray, np.ndarray] | None  # callee next, reward, done (M, L)
    q: np.ndarray  # (M, S, A) for calls, (1, S, A) for guards
    rivals: tuple[Guard, ...] = ()  # guards of the other edges leaving the same root state


def _options(h: HierarchicalRM, alphabet: Sequence[frozenset[str]], S: int, A: int, q_init: float) -> dict[str, list[_Option]]:
    root = h.machines[h.root]
    out: dict[str, list[_Option]] = {}
    for e in root.edges:
        if e.dst in root.rejecting:
            continue  # no option aims at failing (as in the flat HRM learner)
        if e.call is None:
            rivals = tuple(r.guard for r in root.edges if r.src == e.src and r is not e and r.guard is not None)
            out.setdefault(e.src, []).append(_Option(e, None, None, np.full((1, S, A), q_init), rivals))
            continue
        spec = h.machines[e.call]
        if any(c.call is not None for c in spec.edges):
            raise SpecError(f"train_hierarchical supports one level of calls; {e.call!r} calls further machines")
        rm = RewardMachine(
            [{"from": c.src, "to": c.dst, "guard": c.guard.text, "reward": c.reward} for c in spec.edges if c.guard],
            initial=spec.initial, accepting=spec.accepting, rejecting=spec.rejecting, name=e.call,
        )
        t = rm.tables(alphabet)
        out.setdefault(e.src, []).append(_Option(e, rm, (t.next_state, t.reward, t.done), np.full((rm.n_states, S, A), q_init)))
    return out


def _update_options(opts: list[_Option], s: int, a: int, s2: int, lab: int, labels: frozenset[str], cfg: LearnerConfig) -> None:
    """Off-policy update of every option of every root state on one (s, a, s') step."""
    for o in opts:
        if o.tables is None:  # guard option: success when its guard holds, failure when another edge fires
            hit = o.edge.guard is not None and o.edge.guard(labels)
            failed = any(g(labels) for g in o.rivals)
            target = cfg.r_max if hit else cfg.r_min if failed else cfg.gamma * o.q[0, s2].max()
            o.q[0, s, a] += cfg.lr * (target - o.q[0, s, a])
            continue
        nxt, rew, done = o.tables
        acc = np.array([st in o.callee.accepting for st in o.callee.states])[nxt[:, lab]]  # type: ignore[union-attr]
        r = rew[:, lab] + np.where(acc, cfg.r_max, 0.0)
        boot = cfg.gamma * o.q[nxt[:, lab], s2].max(axis=-1)
        target = r + np.where(done[:, lab], 0.0, boot)
        o.q[:, s, a] += cfg.lr * (target - o.q[:, s, a])


def train_hierarchical(
    h: HierarchicalRM,
    *,
    next_obs: np.ndarray,
    obs_label: np.ndarray,
    alphabet: Sequence[frozenset[str]],
    start: int,
    steps: int = 50_000,
    seed: int = 0,
    config: LearnerConfig | None = None,
) -> HierarchicalRun:
    """Train options (one per root edge: calls and guards) and a controller; see the module doc."""
    cfg = config or LearnerConfig()
    rng = np.random.default_rng(seed)
    S, A = next_obs.shape
    by_state = _options(h, alphabet, S, A, cfg.q_init)
    all_opts = [o for opts in by_state.values() for o in opts]
    root = h.machines[h.root]
    ctrl = {u: np.full((S, len(opts)), cfg.q_init) for u, opts in by_state.items()}

    def greedy(q: np.ndarray) -> int:
        if rng.random() < cfg.epsilon:
            return int(rng.integers(len(q)))
        return int(rng.choice(np.flatnonzero(q == q.max())))

    returns, lengths = [], []
    t = 0
    while t < steps:
        node, s, ep_r, ep_t, active = h.initial(), start, 0.0, 0, None
        while True:
            u = node[1]
            if active is None:  # controller picks an option of the current root state
                k = greedy(ctrl[u][s])
                active, o_s, o_u, o_ret, o_disc = k, s, u, 0.0, 1.0
            opt = by_state[u][active]
            m = 0
            if opt.callee is not None:  # the callee's current state, from the hierarchy's node
                calls = [e for e in root.edges if e.src == u and e.call is not None]
                m = opt.callee.index[node[2][calls.index(opt.edge)][1]]
            a = greedy(opt.q[m, s])
            s2 = int(next_obs[s, a])
            lab = int(obs_label[s2])
            node2, r, acc, rej = h.step(node, alphabet[lab])
            _update_options(all_opts, s, a, s2, lab, alphabet[lab], cfg)
            t, ep_t, ep_r = t + 1, ep_t + 1, ep_r + r
            o_ret, o_disc = o_ret + o_disc * r, o_disc * cfg.gamma
            end = acc or rej or ep_t >= cfg.max_episode_steps
            if end or node2[1] != o_u:  # SMDP update of the controller when the option ends
                nxt = 0.0 if (acc or rej or node2[1] not in ctrl) else ctrl[node2[1]][s2].max()
                ctrl[o_u][o_s, active] += cfg.hrm_lr * (o_ret + o_disc * nxt - ctrl[o_u][o_s, active])
                active = None
            node, s = node2, s2
            if end or t >= steps:
                break
        returns.append(ep_r)
        lengths.append(ep_t)
    return HierarchicalRun(np.array(returns), np.array(lengths), len(all_opts))
