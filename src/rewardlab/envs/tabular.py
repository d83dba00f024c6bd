"""Fast tabular learners for reward-machine tasks, vectorised across seeds.

The methods of Toro Icarte et al. (JAIR 2022), section 7 (tabular office-world experiments):

- `ql`      Q-learning on the product (env state, task, RM state);
- `ql-rs`   the same with automated reward shaping, potential Phi(u) = -V(u) from value
            iteration over the RM graph (`rewardlab.envs.rm.shaping`);
- `crm`     counterfactual experiences: every step also updates every other (task, RM state)
            on the same (s, a, s'), one vectorised update;
- `crm-rs`  counterfactual experiences with shaping;
- `hrm`     hierarchical RL: one option per RM edge, trained off-policy on every step, and a
            controller that picks options (Q-learning over options).

All seeds of one run advance in lock-step as one batch (arrays shaped (B, ...)), so a run of
20+ seeds costs about as much Python overhead as one. Each seed has its own random stream.
The dynamics come in as a `TabularProblem`: a deterministic env given by tables plus reward
machines compiled to tables over the env's alphabet of label sets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from rewardlab.core.numbers import refuse_nan
from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.envs.rm.shaping import rm_potentials
from rewardlab.errors import SpecError

__all__ = [
    "METHODS",
    "Curves",
    "LearnerConfig",
    "Method",
    "TabularProblem",
    "greedy_reward_per_step",
    "optimal_q",
    "run_learner",
]

Method = Literal["ql", "ql-rs", "crm", "crm-rs", "hrm"]
METHODS: tuple[Method, ...] = ("ql", "ql-rs", "crm", "crm-rs", "hrm")


@dataclass(frozen=True)
class TabularProblem:
    """A deterministic tabular env and its tasks as stacked RM tables.

    Shapes: S env states, A actions, T tasks, U = max RM states, L label sets.
    `next_obs` (S, A); `obs_label` (S,) label id emitted on entering a state;
    `rm_next`, `rm_reward`, `rm_done`, `rm_reject` (T, U, L); `rm_live` (T, U) marks real,
    non-terminal RM states; `potential` (T, U) is Phi(u) = -V(u), 0 on terminal states.
    """

    next_obs: np.ndarray
    obs_label: np.ndarray
    start: int
    rm_next: np.ndarray
    rm_reward: np.ndarray
    rm_done: np.ndarray
    rm_reject: np.ndarray
    rm_live: np.ndarray
    rm_initial: np.ndarray
    potential: np.ndarray
    truncation_is_terminal: bool = False
    names: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        *,
        next_obs: np.ndarray,
        obs_label: np.ndarray,
        alphabet: Sequence[frozenset[str]],
        start: int,
        machines: Sequence[RewardMachine],
        truncation_is_terminal: bool = False,
        names: tuple[str, ...] = (),
        shaping_gamma: float = 0.9,
    ) -> TabularProblem:
        """Compile `machines` over `alphabet` and stack them (padding to the largest)."""
        if not machines:
            raise SpecError("a tabular problem needs at least one reward machine")
        T, U, L = len(machines), max(m.n_states for m in machines), len(alphabet)
        nxt = np.tile(np.arange(U)[None, :, None], (T, 1, L))
        rew, done, rej = np.zeros((T, U, L)), np.ones((T, U, L), dtype=bool), np.zeros((T, U, L), dtype=bool)
        live = np.zeros((T, U), dtype=bool)
        pot = np.zeros((T, U))
        for t, rm in enumerate(machines):
            tab = rm.tables(alphabet)
            n = rm.n_states
            nxt[t, :n], rew[t, :n], done[t, :n], rej[t, :n] = tab.next_state, tab.reward, tab.done, tab.reject
            live[t, :n] = [not rm.is_terminal(s) for s in rm.states]
            pot[t, :n] = rm_potentials(rm, gamma=shaping_gamma)
        init = np.array([m.index[m.initial] for m in machines])
        return cls(np.asarray(next_obs), np.asarray(obs_label), int(start), nxt, rew, done, rej, live, init, pot,
                   truncation_is_terminal, names)

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """(T, U, S, A)."""
        T, U, _ = self.rm_next.shape
        S, A = self.next_obs.shape
        return T, U, S, A


@dataclass(frozen=True)
class LearnerConfig:
    """Hyper-parameters; defaults are the paper's tabular office-world settings."""

    lr: float = 0.5  # learning rate of every Q-table (paper: 0.5 for tabular)
    epsilon: float = 0.1  # epsilon-greedy exploration, random tie-break among greedy actions
    gamma: float = 0.9
    q_init: float = 2.0  # optimistic initial Q-values (the original code's q_init)
    hrm_lr: float = 0.5  # controller learning rate for HRM
    r_max: float = 1.0  # HRM: bonus for an option that reaches its target RM state
    r_min: float = 0.0  # HRM: bonus for an option that ends elsewhere
    max_episode_steps: int = 1000
    window: int = 10  # episodes in the running mean of the normalised reward per step

    def __post_init__(self) -> None:
        refuse_nan(self)


@dataclass
class Curves:
    """Learning curves: `values[seed, k]` is the metric after `steps[k]` env steps."""

    steps: np.ndarray
    values: np.ndarray
    method: str = ""
    episodes: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def quartiles(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(25th percentile, median, 75th percentile) across seeds at each step."""
        q = np.percentile(self.values, [25, 50, 75], axis=0)
        return q[0], q[1], q[2]


def _argmax_random(q: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """Argmax over the last axis with a uniformly random tie-break (noise in [0, 1))."""
    best = q >= q.max(axis=-1, keepdims=True)
    return np.argmax(np.where(best, noise, -1.0), axis=-1)  # type: ignore[no-any-return]


def optimal_q(problem: TabularProblem, gamma: float = 0.9, iters: int = 500) -> np.ndarray:
    """Q* on the product MDP by value iteration; shape (T, U, S, A). Terminal targets: reward only."""
    T, U, S, A = problem.shape
    lab = problem.obs_label[problem.next_obs]  # (S, A)
    un = problem.rm_next[:, :, lab]  # (T, U, S, A)
    r = problem.rm_reward[:, :, lab]
    d = problem.rm_done[:, :, lab]
    s2 = np.broadcast_to(problem.next_obs, (T, U, S, A))
    t_idx = np.arange(T)[:, None, None, None]
    q = np.zeros((T, U, S, A))
    for _ in range(iters):
        v = q.max(axis=-1)  # (T, U, S)
        new = r + gamma * np.where(d, 0.0, v[t_idx, un, s2])
        if np.max(np.abs(new - q)) < 1e-10:
            return new
        q = new
    return q


class _Batch:
    """B independent lanes (seeds) of one env + RM task cycle, advanced in lock-step."""

    def __init__(self, problem: TabularProblem, cfg: LearnerConfig, lanes: int, seed: int, norm: np.ndarray):
        self.p, self.cfg, self.B = problem, cfg, lanes
        self.rng = np.random.default_rng(seed)
        self.b = np.arange(lanes)
        self.s = np.full(lanes, problem.start)
        self.task = np.zeros(lanes, dtype=np.int64)
        self.u = problem.rm_initial[self.task].copy()
        self.t_ep = np.zeros(lanes, dtype=np.int64)
        self.ep_r = np.zeros(lanes)
        self.norm = norm
        self.hist = np.zeros((lanes, cfg.window))
        self.hist_n = np.zeros(lanes, dtype=np.int64)
        T = problem.rm_next.shape[0]
        self.task_sum, self.task_n = np.zeros(T), np.zeros(T, dtype=np.int64)

    def choose(self, q: np.ndarray) -> np.ndarray:
        """Epsilon-greedy actions from q (B, A) with random tie-break."""
        A = q.shape[-1]
        noise = self.rng.random((self.B, A + 2))
        greedy = _argmax_random(q, noise[:, :A])
        random_a = np.minimum((noise[:, A + 1] * A).astype(np.int64), A - 1)
        return np.where(noise[:, A] < self.cfg.epsilon, random_a, greedy)

    def env_step(self, a: np.ndarray) -> tuple[np.ndarray, ...]:
        """(s2, label, u2, reward, terminated, truncated, env_end) for actions `a`."""
        p = self.p
        s2 = p.next_obs[self.s, a]
        lab = p.obs_label[s2]
        u2 = p.rm_next[self.task, self.u, lab]
        r = p.rm_reward[self.task, self.u, lab]
        term = p.rm_done[self.task, self.u, lab]
        self.t_ep += 1
        trunc = (self.t_ep >= self.cfg.max_episode_steps) & ~term
        # the original code treats the time limit as a terminal state (no bootstrapping)
        env_end = trunc if p.truncation_is_terminal else np.zeros(self.B, dtype=bool)
        return s2, lab, u2, r, term, trunc, env_end

    def finish(self, s2: np.ndarray, u2: np.ndarray, r: np.ndarray, end: np.ndarray) -> None:
        """Book-keeping after a step: episode metrics and resets of finished lanes."""
        self.ep_r += r
        s2, u2 = s2.copy(), u2.copy()
        if end.any():
            i = np.nonzero(end)[0]
            per_step = self.ep_r[i] / self.t_ep[i]
            np.add.at(self.task_sum, self.task[i], per_step)
            np.add.at(self.task_n, self.task[i], 1)
            self.hist[i, self.hist_n[i] % self.cfg.window] = per_step / self.norm[self.task[i]]
            self.hist_n[i] += 1
            T = self.p.rm_next.shape[0]
            self.task[i] = (self.task[i] + 1) % T
            s2[i], u2[i] = self.p.start, self.p.rm_initial[self.task[i]]
            self.t_ep[i], self.ep_r[i] = 0, 0.0
        self.s, self.u = s2, u2

    def metric(self) -> np.ndarray:
        """Running mean of the normalised reward per step over each lane's last episodes."""
        filled = np.minimum(self.hist_n, self.cfg.window)
        return self.hist.sum(axis=1) / np.maximum(filled, 1)  # type: ignore[no-any-return]


def _q_step(run: _Batch, Q: np.ndarray, *, crm: bool, rs: bool, learn: bool = True) -> None:
    """One step of Q-learning (optionally counterfactual and/or shaped) on every lane."""
    p, cfg, b = run.p, run.cfg, run.b
    s, u, task = run.s, run.u, run.task
    a = run.choose(Q[b, task, u, s])
    s2, lab, u2, r, term, trunc, env_end = run.env_step(a)
    if learn and crm:
        T = p.rm_next.shape[0]
        tt = np.arange(T)[None, :, None]
        un = p.rm_next[:, :, lab].transpose(2, 0, 1)  # (B, T, U): every (task, RM state) at once
        rr = p.rm_reward[:, :, lab].transpose(2, 0, 1)
        dd = p.rm_done[:, :, lab].transpose(2, 0, 1) | env_end[:, None, None]
        if rs:
            rr = rr + cfg.gamma * np.where(dd, 0.0, p.potential[tt, un]) - p.potential[None]
        vnext = Q[b[:, None, None], tt, un, s2[:, None, None]].max(axis=-1)
        target = rr + cfg.gamma * np.where(dd, 0.0, vnext)
        cur = Q[b, :, :, s, a]  # (B, T, U)
        Q[b, :, :, s, a] = np.where(p.rm_live[None], cur + cfg.lr * (target - cur), cur)
    elif learn:
        dd = term | env_end
        rr = r
        if rs:
            rr = r + cfg.gamma * np.where(dd, 0.0, p.potential[task, u2]) - p.potential[task, u]
        vnext = Q[b, task, u2, s2].max(axis=-1)
        target = rr + cfg.gamma * np.where(dd, 0.0, vnext)
        Q[b, task, u, s, a] += cfg.lr * (target - Q[b, task, u, s, a])
    run.finish(s2, u2, r, term | trunc)


@dataclass
class _Options:
    """HRM options: one per RM edge (task, u1 -> u2), u1 != u2, not into a rejecting state."""

    task: np.ndarray  # (O,)
    src: np.ndarray
    dst: np.ndarray
    slots: np.ndarray  # (T, U, K) option ids available in (task, u), -1 padded

    @classmethod
    def of(cls, p: TabularProblem) -> _Options:
        found: list[tuple[int, int, int]] = []
        T, U, L = p.rm_next.shape
        for t in range(T):
            for u in range(U):
                if not p.rm_live[t, u]:
                    continue
                targets = {int(p.rm_next[t, u, lab]) for lab in range(L) if p.rm_next[t, u, lab] != u and not p.rm_reject[t, u, lab]}
                if not targets:
                    raise SpecError(f"HRM: RM state {u} of task {t} has no edge to another state, so no option")
                found += [(t, u, v) for v in sorted(targets)]
        arr = np.array(found)
        K = max(int(np.sum((arr[:, 0] == t) & (arr[:, 1] == u))) for t, u, _ in found)
        slots = np.full((T, U, K), -1)
        for i, (t, u, _) in enumerate(found):
            k = int(np.sum(slots[t, u] >= 0))
            slots[t, u, k] = i
        return cls(arr[:, 0], arr[:, 1], arr[:, 2], slots)


@dataclass
class _HRMState:
    """Per-lane option book-keeping for HRM."""

    Qo: np.ndarray  # (B, O, S, A) option policies
    Qc: np.ndarray  # (B, T, U, S, K) controller over option slots
    active: np.ndarray  # (B,) running option id, -1 when the controller must choose
    slot: np.ndarray
    start_s: np.ndarray
    start_u: np.ndarray
    ret: np.ndarray  # discounted return collected by the running option
    disc: np.ndarray  # gamma ** (option length)


def _pick_options(run: _Batch, opts: _Options, h: _HRMState) -> None:
    i = np.nonzero(h.active < 0)[0]
    if i.size == 0:
        return
    t, u, s = run.task[i], run.u[i], run.s[i]
    valid = opts.slots[t, u] >= 0  # (n, K)
    qc = np.where(valid, h.Qc[i, t, u, s], -np.inf)
    noise = run.rng.random((i.size, 2 * valid.shape[1] + 1))
    K = valid.shape[1]
    greedy = _argmax_random(qc, noise[:, :K])
    random_slot = np.argmax(np.where(valid, noise[:, K : 2 * K], -1.0), axis=1)
    slot = np.where(noise[:, -1] < run.cfg.epsilon, random_slot, greedy)
    h.active[i], h.slot[i] = opts.slots[t, u, slot], slot
    h.start_s[i], h.start_u[i], h.ret[i], h.disc[i] = s, u, 0.0, 1.0


def _hrm_step(run: _Batch, opts: _Options, h: _HRMState) -> None:
    """One HRM step: controller picks options, every option learns from the same (s, a, s')."""
    p, cfg, b = run.p, run.cfg, run.b
    _pick_options(run, opts, h)
    s, task = run.s, run.task
    a = run.choose(h.Qo[b, h.active, s])
    s2, lab, u2, r, term, trunc, env_end = run.env_step(a)
    # off-policy update of all option policies (Toro Icarte et al. 2022, sec. 5.2)
    ot, o1, o2 = opts.task[None, :], opts.src[None, :], opts.dst[None, :]
    un = p.rm_next[ot, o1, lab[:, None]]  # (B, O)
    done = env_end[:, None] | (un != o1) | p.rm_done[ot, o1, lab[:, None]]
    bonus = np.where(un == o2, cfg.r_max, np.where(done, cfg.r_min, 0.0))
    rr = p.rm_reward[ot, o1, lab[:, None]] + bonus
    vnext = h.Qo[b[:, None], np.arange(len(opts.task))[None, :], s2[:, None]].max(axis=-1)
    cur = h.Qo[b, :, s, a]  # (B, O)
    h.Qo[b, :, s, a] = cur + cfg.lr * (rr + cfg.gamma * np.where(done, 0.0, vnext) - cur)
    # controller: SMDP Q-learning when the running option ends
    h.ret += h.disc * r
    h.disc *= cfg.gamma
    ended = (u2 != h.start_u) | term | trunc
    if ended.any():
        i = np.nonzero(ended)[0]
        t = task[i]
        stop = term[i] | env_end[i]
        valid = opts.slots[t, u2[i]] >= 0
        nxt = np.where(valid, h.Qc[i, t, u2[i], s2[i]], -np.inf).max(axis=1)
        target = h.ret[i] + h.disc[i] * np.where(stop | ~valid.any(axis=1), 0.0, nxt)
        cur_c = h.Qc[i, t, h.start_u[i], h.start_s[i], h.slot[i]]
        h.Qc[i, t, h.start_u[i], h.start_s[i], h.slot[i]] = cur_c + cfg.hrm_lr * (target - cur_c)
        h.active[i] = -1
    run.finish(s2, u2, r, term | trunc)


def run_learner(
    problem: TabularProblem,
    method: Method,
    *,
    seeds: int = 20,
    total_steps: int = 100_000,
    eval_every: int = 1000,
    seed: int = 0,
    config: LearnerConfig | None = None,
    normaliser: np.ndarray | None = None,
) -> Curves:
    """Train `method` on `seeds` independent lanes and return the learning curves.

    Args:
        problem: the env and tasks (e.g. `rewardlab.envs.officeworld.office_problem()`).
        method: one of `METHODS`.
        seeds: number of independent runs (lanes), advanced together.
        total_steps: env steps per run (the paper: 100,000).
        eval_every: record the metric every this many steps.
        seed: seed of the random stream shared by the lanes (each lane draws its own numbers).
        config: hyper-parameters (the paper's defaults).
        normaliser: (T,) reward per step that counts as 1.0; by default that of the
            epsilon-greedy optimal policy (`greedy_reward_per_step(problem, optimal_q(problem))`).

    Returns:
        `Curves` with the normalised reward per step (running mean over each lane's last
        `config.window` episodes) every `eval_every` steps.
    """
    if method not in METHODS:
        raise SpecError(f"unknown tabular method {method!r}; choose one of {METHODS}")
    cfg = config or LearnerConfig()
    if normaliser is None:
        normaliser = greedy_reward_per_step(problem, optimal_q(problem, cfg.gamma), config=cfg)
    T, U, S, A = problem.shape
    run = _Batch(problem, cfg, seeds, seed, np.asarray(normaliser, dtype=float))
    points = total_steps // eval_every
    values, episodes = np.zeros((seeds, points)), np.zeros((seeds, points), dtype=np.int64)
    step: Callable[[], None]
    if method == "hrm":
        opts = _Options.of(problem)
        K = opts.slots.shape[2]
        h = _HRMState(
            np.full((seeds, len(opts.task), S, A), cfg.q_init), np.full((seeds, T, U, S, K), cfg.q_init),
            np.full(seeds, -1), np.zeros(seeds, dtype=np.int64), np.zeros(seeds, dtype=np.int64),
            np.zeros(seeds, dtype=np.int64), np.zeros(seeds), np.ones(seeds),
        )
        step = lambda: _hrm_step(run, opts, h)  # noqa: E731
    else:
        Q = np.full((seeds, T, U, S, A), cfg.q_init)
        crm, rs = method.startswith("crm"), method.endswith("-rs")
        step = lambda: _q_step(run, Q, crm=crm, rs=rs)  # noqa: E731
    for k in range(points):
        for _ in range(eval_every):
            step()
        values[:, k] = run.metric()
        episodes[:, k] = run.hist_n
    return Curves(np.arange(1, points + 1) * eval_every, values, method, episodes)


def greedy_reward_per_step(
    problem: TabularProblem,
    q: np.ndarray,
    *,
    config: LearnerConfig | None = None,
    lanes: int = 64,
    steps: int = 6000,
    seed: int = 12345,
) -> np.ndarray:
    """Average (episode reward / episode length) of the epsilon-greedy policy on `q`, per task.

    This is the normaliser of the paper's metric when `q` is `optimal_q(problem)`: 1.0 means
    "as good as the optimal policy with the same exploration". Monte Carlo with a fixed seed.
    """
    cfg = config or LearnerConfig()
    T = problem.rm_next.shape[0]
    run = _Batch(problem, cfg, lanes, seed, np.ones(T))
    Qb = np.broadcast_to(q, (lanes, *q.shape))
    for _ in range(steps):
        _q_step(run, Qb, crm=False, rs=False, learn=False)
    if (run.task_n == 0).any():
        raise SpecError("some task finished no episode while measuring the normaliser; raise `steps`")
    out: np.ndarray = run.task_sum / run.task_n
    return out
