"""Benchmarks for `rewardlab.envs` (issue 10).

    .venv/bin/python bench/bench_envs.py curves [--seeds 20] [--steps 100000]
    .venv/bin/python bench/bench_envs.py speed
    .venv/bin/python bench/bench_envs.py extras [--seeds 5]     # preferences, noisy TV, delayed chain
    .venv/bin/python bench/bench_envs.py sb3-crm [--seeds 3] [--first-seed 0] [--budget 30000] [--obs-mode onehot|flat]
    .venv/bin/python bench/bench_envs.py sb3-pref [--seeds 4]
    .venv/bin/python bench/bench_envs.py sb3-ppo [--seeds 3]
    .venv/bin/python bench/bench_envs.py sb3-start [--seeds 3]

`curves`: the office-world learning curves of Toro Icarte et al. (JAIR 2022, fig. 6/7 tabular):
normalised reward per step vs env steps, median and quartiles over seeds, for the single task
(coffee and mail) and the four-task setting, in compatibility mode (the original code's
behaviour) and with correct semantics. Writes bench/envs_curves.png and prints a table.

`extras`: the preference label-efficiency curve (disagreement vs uniform queries), the noisy-TV
comparison of ICM and curiosity-critic, and the delayed-chain redistribution speed-up.

`sb3-crm`: Stable-Baselines3 DQN with and without `CounterfactualReplayBuffer` (CRM) on the
office world through `RewardMachineWrapper`: env steps until the greedy policy solves `coffee`,
per seed, and the ratio. The result depends on the observation code: `--obs-mode flat` (raw
(x, y) + one-hot RM state, what the first table in bench/RESULTS.md called "one-hot") or `onehot`
(today's factored one-hot of x, y and the RM state, the default). CRM on tasks the agent never
runs (trained on some tasks, evaluated on held-out ones): `bench/bench_crm_heldout.py`.

`sb3-ppo`: SB3 PPO on office-world `coffee` from the factored `onehot` and the `joint` observation
codes, with exploring starts and from the paper's fixed start.

`sb3-start`: SB3 DQN from the paper's fixed start: plain, with CRM, with a count bonus.

`sb3-pref`: SB3 DQN on a learned preference reward, raw and through `RewardNormalizer`.

`speed`: env steps/s of `RewardMachineWrapper` over the plain env (overhead ratio, goal <= 1.5x)
and steps/s of the vectorised tabular learners against a per-step dict-based Q-learning loop
written like the original code (the original itself needs Python 3.7 and TensorFlow 1).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from rewardlab.envs.officeworld import (
    TASK_ORDER,
    OfficeWorld,
    office_labels,
    office_problem,
    office_task,
)
from rewardlab.envs.rm.wrapper import RewardMachineWrapper
from rewardlab.envs.tabular import METHODS, greedy_reward_per_step, optimal_q, run_learner

HERE = Path(__file__).parent
SETTINGS = {"single task (coffee and mail)": ("coffee_mail",), "four tasks": TASK_ORDER}
LABELS = {"ql": "QL", "ql-rs": "QL+RS", "crm": "CRM", "crm-rs": "CRM+RS", "hrm": "HRM"}
COLORS = {"ql": "tab:gray", "ql-rs": "tab:brown", "crm": "tab:blue", "crm-rs": "tab:green", "hrm": "tab:red"}


def run_curves(seeds: int, steps: int, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharex=True, sharey=True)
    marks = sorted({m for m in (10_000, 25_000, 50_000, steps) if m <= steps})
    print(f"| setting | mode | method | {' | '.join(f'{m // 1000}k' for m in marks)} | time (s) |")
    print("|---|---|---|" + "---|" * len(marks) + "---|")
    for row, (setting, tasks) in enumerate(SETTINGS.items()):
        for col, compat in enumerate((True, False)):
            problem = office_problem(tasks, compat=compat)
            norm = greedy_reward_per_step(problem, optimal_q(problem))
            ax = axes[row, col]
            for method in METHODS:
                t0 = time.perf_counter()
                c = run_learner(problem, method, seeds=seeds, total_steps=steps, normaliser=norm)
                dt = time.perf_counter() - t0
                lo, med, hi = c.quartiles()
                ax.plot(c.steps, med, color=COLORS[method], label=LABELS[method])
                ax.fill_between(c.steps, lo, hi, color=COLORS[method], alpha=0.2)
                cells = [f"{med[m // 1000 - 1]:.2f} [{lo[m // 1000 - 1]:.2f}, {hi[m // 1000 - 1]:.2f}]" for m in marks]
                mode = "compat" if compat else "correct"
                print(f"| {setting} | {mode} | {LABELS[method]} | {' | '.join(cells)} | {dt:.1f} |", flush=True)
            ax.set_title(f"{setting}, {'compatibility mode' if compat else 'correct semantics'}")
            ax.set_ylim(0, 1.3)
            ax.grid(alpha=0.3)
            if row == 1:
                ax.set_xlabel("training steps")
            if col == 0:
                ax.set_ylabel("normalised reward per step")
    axes[0, 0].legend(loc="lower right")
    fig.suptitle(f"Office world, median and quartiles over {seeds} seeds (rewardlab.envs.tabular)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def _episode_ends(env, actions: list[int]) -> list[bool]:  # type: ignore[no-untyped-def]
    """After which of `actions` `env` (started with `reset(seed=0)`) ends an episode."""
    env.reset(seed=0)
    ends = []
    for a in actions:
        _, _, term, trunc, _ = env.step(a)
        ends.append(bool(term or trunc))
        if term or trunc:
            env.reset()
    return ends


def _run_steps(env, actions: list[int], resets: list[bool]) -> float:  # type: ignore[no-untyped-def]
    """CPU seconds this process spends stepping `env` through `actions` (resets included).

    Every run starts from `reset(seed=0)`, takes the same actions and resets where `resets`
    says (and wherever the env itself ends an episode), so a plain env and its wrapped twin go
    through the very same env transitions. CPU time, not wall time: on the shared, loaded
    machine wall time mostly measures how long the scheduler kept us waiting.
    """
    env.reset(seed=0)
    step, reset = env.step, env.reset
    t0 = time.process_time()
    for a, r in zip(actions, resets, strict=True):
        _, _, term, trunc, _ = step(a)
        if term or trunc or r:
            reset()
    return time.process_time() - t0


def measure_overhead(plain, wrapped, *, steps: int, rounds: int, same_episodes: bool) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """`(plain steps/s, wrapped steps/s, overhead)`, medians over `rounds` alternating rounds.

    Both envs are built once and warmed up by one untimed round (the wrapper's transition
    tables and one-hot memo fill on first use, as in any training run longer than a few
    thousand steps). Rounds alternate which env goes first, so load from other processes hits
    both alike; the overhead is the median of the per-round ratios wrapped time / plain time.

    `same_episodes`: the plain env also resets wherever the wrapped one ended an episode (the
    reward machine ends office-world episodes ~27x more often than the bare env's 1,000-step
    limit), so both make exactly the same env calls and the ratio is the wrapper's own cost.
    Otherwise each env resets only when it ends an episode itself, and the extra env resets
    the machine causes are charged to the wrapper.
    """
    actions = np.random.default_rng(0).integers(0, plain.action_space.n, steps).tolist()
    ends = _episode_ends(wrapped, actions)
    resets = ends if same_episodes else [False] * steps
    _run_steps(plain, actions, resets), _run_steps(wrapped, actions, resets)
    times = []
    for r in range(rounds):
        first, second = (plain, wrapped) if r % 2 == 0 else (wrapped, plain)
        a, b = _run_steps(first, actions, resets), _run_steps(second, actions, resets)
        times.append((a, b) if r % 2 == 0 else (b, a))
    t_plain, t_wrapped = np.median([p for p, _ in times]), np.median([w for _, w in times])
    return steps / t_plain, steps / t_wrapped, float(np.median([w / p for p, w in times]))


_LEFT, _RIGHT, _NONE = frozenset({"left"}), frozenset({"right"}), frozenset()


def _cartpole_labels(obs, action, next_obs, info) -> frozenset[str]:  # type: ignore[no-untyped-def]
    """`left` / `right` when the cart is past -0.5 / 0.5 (shared frozensets: nothing is built)."""
    x = next_obs[0]
    return _LEFT if x < -0.5 else _RIGHT if x > 0.5 else _NONE


def speed_wrapper(steps: int = 50_000, rounds: int = 21) -> None:
    import gymnasium as gym

    from rewardlab.envs.rm import RewardMachine

    visit = RewardMachine(
        [{"from": "0", "to": "1", "guard": "left", "reward": 0}, {"from": "1", "to": "2", "guard": "right", "reward": 1}],
        initial="0", accepting=["2"],
    )
    cases = {
        "office world (1 us/step env)": (lambda: OfficeWorld(), office_task("coffee_mail"), office_labels),
        "CartPole-v1 via gym.make": (lambda: gym.make("CartPole-v1"), visit, _cartpole_labels),
    }
    print(f"RM wrapper vs the same env unwrapped: {rounds} alternating rounds of {steps:,} random steps, CPU time, medians")
    print("| env | obs mode | plain steps/s | wrapped steps/s | added us/step | overhead, same episodes | overhead, own episodes |")
    print("|---|---|---|---|---|---|---|")
    for name, (make, rm, label) in cases.items():
        for mode in ("dict", "flat", "onehot") if name.startswith("office") else ("dict", "flat"):
            plain, wrapped = make(), RewardMachineWrapper(make(), rm, label, obs_mode=mode)
            p, w, ratio = measure_overhead(plain, wrapped, steps=steps, rounds=rounds, same_episodes=True)
            *_, own = measure_overhead(plain, wrapped, steps=steps, rounds=rounds, same_episodes=False)
            added = 1e6 / w - 1e6 / p
            print(f"| {name} | {mode} | {p:,.0f} | {w:,.0f} | {added:.2f} | {ratio:.2f}x | {own:.2f}x |", flush=True)


def reference_q_learning(steps: int, crm: bool, seed: int = 0) -> float:
    """Per-step dict-of-dicts Q-learning/CRM in the style of the original tabular code."""
    import random

    rng = random.Random(seed)
    env = OfficeWorld()
    rm = office_task("coffee_mail", compat=True)
    actions = list(range(4))
    Q: dict[tuple[int, int, int], dict[int, float]] = {}
    live = [u for u, s in enumerate(rm.states) if not rm.is_terminal(s)]

    def qs(key: tuple[int, int, int]) -> dict[int, float]:
        if key not in Q:
            Q[key] = dict.fromkeys(actions, 2.0)
        return Q[key]

    obs, info = env.reset()
    u = rm.index[rm.initial]
    t0 = time.perf_counter()
    for _ in range(steps):
        s = (int(obs[0]), int(obs[1]))
        q = qs((*s, u))
        best = max(q.values())
        a = rng.choice(actions) if rng.random() < 0.1 else rng.choice([b for b in actions if q[b] == best])
        obs, _, _, trunc, info = env.step(a)
        s2 = (int(obs[0]), int(obs[1]))
        for uu in live if crm else [u]:
            v, r, acc, rej, _ = rm.step_index(uu, info["labels"])
            done = acc or rej or trunc
            target = r if done else r + 0.9 * max(qs((*s2, v)).values())
            qs((*s, uu))[a] += 0.5 * (target - qs((*s, uu))[a])
        v, r, acc, rej, _ = rm.step_index(u, info["labels"])
        u = v
        if acc or rej or trunc:
            obs, info = env.reset()
            u = rm.index[rm.initial]
    return steps / (time.perf_counter() - t0)


def speed_learners(steps: int) -> None:
    problem = office_problem(("coffee_mail",), compat=True)
    norm = np.ones(1)
    print("| method | reference dict loop (1 seed) steps/s | rewardlab, 1 seed | rewardlab, 20 seeds (total steps/s) | ratio at 20 seeds |")
    print("|---|---|---|---|---|")
    for method in METHODS:
        ref = reference_q_learning(steps, crm=method.startswith("crm")) if method in ("ql", "crm") else float("nan")
        rates = []
        for seeds in (1, 20):
            t0 = time.perf_counter()
            run_learner(problem, method, seeds=seeds, total_steps=steps, normaliser=norm)
            rates.append(seeds * steps / (time.perf_counter() - t0))
        ratio = f"{rates[1] / ref:.1f}x" if ref == ref else "n/a"
        ref_s = f"{ref:,.0f}" if ref == ref else "n/a (no HRM/RS loop)"
        print(f"| {method} | {ref_s} | {rates[0]:,.0f} | {rates[1]:,.0f} | {ratio} |", flush=True)


def run_preference_agents(mdp, seeds: int, budget: int = 64) -> None:  # type: ignore[no-untyped-def]
    """Agents trained on a learned preference reward: raw, and through `RewardNormalizer`."""
    from rewardlab.envs.gridworld import q_learning
    from rewardlab.envs.preferences import (
        RewardNormalizer,
        learn_grid_reward,
        normalised_policy_return,
    )

    print(f"\nAgents on the learned reward ({budget} labels, disagreement), 6x6 grid: normalised true return of the")
    print(f"agent's greedy policy (1 = optimal), per seed 0-{2 * seeds - 1}; tabular Q-learning, Q = 0, 20k steps")
    print("| seed | value iteration on the learned reward | Q-learning, raw | Q-learning, RewardNormalizer() |")
    print("|---|---|---|---|")
    rows = []
    for seed in range(2 * seeds):
        learned = learn_grid_reward(mdp, budget, seed=seed)
        norm = RewardNormalizer.fit(learned.reward)
        raw_q = normalised_policy_return(mdp, q_learning(mdp, learned.reward, seed=seed))
        norm_q = normalised_policy_return(mdp, q_learning(mdp, norm(learned.reward), seed=seed))
        rows.append((learned.normalised_return, raw_q, norm_q))
        print(f"| {seed} | {learned.normalised_return:.2f} | {raw_q:.2f} | {norm_q:.2f} |", flush=True)
    vi, raw, normed = (np.array(c) for c in zip(*rows, strict=True))
    solved = vi >= 0.9
    print(f"seeds where value iteration on the learned reward reaches >= 0.9: {solved.sum()}/{len(vi)}; on those, "
          f"Q-learning reaches >= 0.9 in {int((raw[solved] >= 0.9).sum())} (raw) and {int((normed[solved] >= 0.9).sum())} "
          f"(normalised); mean {raw[solved].mean():.2f} vs {normed[solved].mean():.2f}")


def dqn_on_learned_reward(seed: int, normalise: bool, budget: int = 40_000, every: int = 4000) -> list[float]:
    """SB3 DQN on the 6x6 grid through `LearnedRewardWrapper` with the reward learned from 64
    labels (seed `seed`); normalised true return of its greedy policy every `every` steps, from
    a callback inside one `learn(budget)` call (so epsilon decays over the whole budget)."""
    import stable_baselines3 as sb3
    from stable_baselines3.common.callbacks import BaseCallback

    from rewardlab.envs.preferences import (
        LearnedRewardWrapper,
        PreferenceRewardModel,
        RewardNormalizer,
        learn_grid_reward,
        normalised_policy_return,
        preference_grid,
    )

    mdp = preference_grid()
    learned = learn_grid_reward(mdp, 64, seed=seed).reward
    model = PreferenceRewardModel(mdp.n_states, ensemble=1)
    model.weights[0] = learned  # the learned per-cell reward as a linear model over one-hot cells
    eye = np.eye(mdp.n_states, dtype=np.float32)
    env = LearnedRewardWrapper(mdp.to_env(max_episode_steps=50), model, lambda o, a, o2: eye[o2],
                               normalizer=RewardNormalizer.fit(learned) if normalise else None)
    agent = sb3.DQN("MlpPolicy", env, learning_starts=500, train_freq=4, buffer_size=50_000, exploration_fraction=0.5,
                    exploration_final_eps=0.05, learning_rate=1e-3, target_update_interval=250, gamma=0.95, batch_size=64,
                    policy_kwargs={"net_arch": [64]}, seed=seed, device="cpu")
    out: list[float] = []

    class Probe(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps % every == 0:
                policy = self.model.predict(np.arange(mdp.n_states), deterministic=True)[0]
                out.append(normalised_policy_return(mdp, policy))
            return True

    agent.learn(budget, callback=Probe())
    return out


def run_sb3_preferences(seeds: int, budget: int, first_seed: int = 0) -> None:
    import torch

    torch.set_num_threads(1)
    every = 2000
    print(f"SB3 DQN on the learned preference reward (6x6 grid, 64 labels): normalised true return of the greedy policy, "
          f"every {every:,} steps up to {budget:,}")
    print("| seed | reward | " + " | ".join(f"{k // 1000}k" for k in range(every, budget + 1, every)) + " |")
    print("|---|---|" + "---|" * (budget // every))
    reached = {False: 0, True: 0}
    for seed in range(first_seed, first_seed + seeds):
        for normalise in (False, True):
            curve = dqn_on_learned_reward(seed, normalise, budget, every)
            reached[normalise] += curve[-1] >= 0.9
            name = "RewardNormalizer()" if normalise else "raw"
            print(f"| {seed} | {name} | " + " | ".join(f"{v:.2f}" for v in curve) + " |", flush=True)
    print(f"runs at >= 0.9 of optimal at {budget // 1000}k: raw {reached[False]}/{seeds}, "
          f"RewardNormalizer() {reached[True]}/{seeds}")


def run_extras(seeds: int = 5) -> None:
    from functools import partial

    import torch

    from rewardlab.envs.intrinsic import CuriosityCriticBonus, DisagreementBonus, ICMBonus
    from rewardlab.envs.noisy_tv import noisy_tv_rollout
    from rewardlab.envs.preferences import learn_grid_reward, preference_grid
    from rewardlab.envs.redistribution import DelayedChain, chain_q_learning

    torch.set_num_threads(1)  # tiny models: one thread avoids oversubscribing the shared CPU
    mdp = preference_grid()
    budgets = (8, 16, 32, 64, 128)
    print("Preference learning, 6x6 grid, oracle teacher: normalised true return of the learned reward's")
    print(f"optimal policy (0 = random policy, 1 = optimal), mean [min, max] over {2 * seeds} seeds")
    print("| labels | " + " | ".join(str(b) for b in budgets) + " |")
    print("|---|" + "---|" * len(budgets))
    for sel in ("disagreement", "uniform"):
        cells = []
        for b in budgets:
            v = [learn_grid_reward(mdp, b, selection=sel, seed=s).normalised_return for s in range(2 * seeds)]
            cells.append(f"{np.mean(v):.2f} [{min(v):.2f}, {max(v):.2f}]")
        print(f"| {sel} | " + " | ".join(cells) + " |", flush=True)
    run_preference_agents(mdp, seeds)
    print(f"\nNoisy TV (5x5 grid, TV in a corner; 1,500 random steps then 1,500 epsilon-greedy on the bonus; seeds 0-{seeds - 1})")
    print("| bonus | share of steps on the TV after warm-up, mean [min, max] | cells visited | bonus into the TV | bonus elsewhere |")
    print("|---|---|---|---|---|")
    dim = 25 + 4
    bonuses = (("ICM (prediction error)", ICMBonus), ("curiosity-critic (0.9-quantile critic)", CuriosityCriticBonus),
               ("curiosity-critic, mean critic (quantile=None, ablation)", partial(CuriosityCriticBonus, quantile=None)),
               ("ensemble disagreement", DisagreementBonus))
    for name, make in bonuses:
        runs = [noisy_tv_rollout(make(dim, 4, hidden=32, epochs=2, seed=s), seed=s) for s in range(seeds)]
        mean = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
        tv = [r["tv_fraction"] for r in runs]
        print(f"| {name} | {mean['tv_fraction']:.2f} [{min(tv):.2f}, {max(tv):.2f}] | {mean['visited_fraction']:.2f} "
              f"| {mean['tv_bonus']:.2f} | {mean['other_bonus']:.2f} |", flush=True)
    print("\nDelayed chain (10 states, horizon 20, reward only at the end; optimum with epsilon 0.2 ~ 18)")
    print("| per-step rewards | mean return, episodes 1-20 | 21-40 | 41-60 |")
    print("|---|---|---|---|")
    for mode in ("delayed", "uniform", "least_squares"):
        r = np.array([chain_q_learning(DelayedChain(), episodes=60, mode=mode, seed=s) for s in range(seeds)])
        print(f"| {mode} | {r[:, :20].mean():.1f} | {r[:, 20:40].mean():.1f} | {r[:, 40:].mean():.1f} |", flush=True)


def _sb3_office_env(start: str, crm: bool, obs_mode: str = "onehot"):  # type: ignore[no-untyped-def]
    return RewardMachineWrapper(OfficeWorld(max_episode_steps=50, start=start), office_task("coffee"), office_labels,
                                obs_mode=obs_mode, counterfactuals=crm)  # type: ignore[arg-type]


def _greedy_succeeds(model, env) -> bool:  # type: ignore[no-untyped-def]
    """Whether the greedy policy, from the paper's start (2, 1), finishes the task within 50 steps."""
    obs, _ = env.reset(seed=0)
    for _ in range(50):
        action, _ = model.predict(obs, deterministic=True)
        obs, r, term, trunc, _ = env.step(int(action))
        if term or trunc:
            return bool(r > 0)
    return False


def _steps_to_success(model, obs_mode: str, budget: int, every: int) -> int | None:  # type: ignore[no-untyped-def]
    """One `learn(budget)` call, probed every `every` env steps by a callback that stops it when
    the greedy policy solves coffee from (2, 1): the env steps taken then, or None."""
    from stable_baselines3.common.callbacks import BaseCallback

    probe = _sb3_office_env("paper", False, obs_mode)

    class StopWhenSolved(BaseCallback):
        solved_at: int | None = None
        next_probe = every

        def _on_step(self) -> bool:
            if self.num_timesteps < self.next_probe:
                return True
            self.next_probe += every
            if _greedy_succeeds(self.model, probe):
                self.solved_at = self.num_timesteps
                return False
            return True

    stop = StopWhenSolved()
    model.learn(budget, callback=stop)
    return stop.solved_at


def _count_bonus_venv(venv, obs_mode: str, budget: int):  # type: ignore[no-untyped-def]
    """`venv` plus a count bonus 0.2 / sqrt(N(cell, RM state)) decaying to 0 over `budget` steps."""
    from rewardlab.envs.intrinsic import CountBonus, DecaySchedule
    from rewardlab.envs.vec import IntrinsicRewardVecWrapper

    codec = _sb3_office_env("paper", False, obs_mode).codec  # "joint": one index per (cell, RM state)
    return IntrinsicRewardVecWrapper(venv, CountBonus(codec.n_states, scale=0.2), schedule=DecaySchedule(steps=budget),
                                     featurize=codec.state_index)


def dqn_steps_to_success(crm: bool, seed: int, budget: int, *, start: str = "random", obs_mode: str = "onehot",
                         bonus: bool = False, every: int = 1000) -> int | None:
    """Env steps until SB3 DQN's greedy policy solves office-world `coffee` from (2, 1), or None.

    `start="random"`: exploring starts (`OfficeWorld(start="random")`); with `crm`, the replay
    buffer stores every RM state's experience of each step; with `bonus` (`obs_mode="joint"`),
    a count bonus over (cell, RM state) through `IntrinsicRewardVecWrapper`.
    """
    import stable_baselines3 as sb3
    from stable_baselines3.common.env_util import make_vec_env

    from rewardlab.envs.rm.sb3 import CounterfactualReplayBuffer

    venv = make_vec_env(lambda: _sb3_office_env(start, crm, obs_mode), n_envs=8, seed=seed)
    if bonus:
        venv = _count_bonus_venv(venv, obs_mode, budget)
    model = sb3.DQN("MlpPolicy", venv, learning_starts=1000, train_freq=1, gradient_steps=1, buffer_size=100_000,
                    exploration_fraction=0.3, exploration_final_eps=0.05, learning_rate=1e-3, target_update_interval=100,
                    gamma=0.9, batch_size=64, replay_buffer_class=CounterfactualReplayBuffer if crm else None,
                    policy_kwargs={"net_arch": [128]}, seed=seed, device="cpu")
    return _steps_to_success(model, obs_mode, budget, every)


def ppo_steps_to_success(obs_mode: str, seed: int, budget: int, *, start: str = "random", every: int = 8192) -> int | None:
    """Env steps until SB3 PPO's greedy policy solves `coffee` from (2, 1), or None."""
    import stable_baselines3 as sb3
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(lambda: _sb3_office_env(start, False, obs_mode), n_envs=8, seed=seed)
    model = sb3.PPO("MlpPolicy", venv, n_steps=128, batch_size=256, n_epochs=4, gamma=0.95, ent_coef=0.01,
                    learning_rate=1e-3, policy_kwargs={"net_arch": [64]}, seed=seed, device="cpu")
    return _steps_to_success(model, obs_mode, budget, every)


def _timed(steps_to_success, budget: int, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    """`steps_to_success(*args, budget=budget, **kwargs)` (or "> budget") with its CPU time."""
    t0 = time.process_time()
    n = steps_to_success(*args, budget=budget, **kwargs)
    return (f"{n:,}" if n is not None else f"> {budget:,}") + f" ({time.process_time() - t0:.0f} s CPU)"


def run_sb3_ppo(seeds: int, budget: int, first_seed: int = 0) -> None:
    import torch

    torch.set_num_threads(1)
    print(f"SB3 PPO on office-world coffee, env steps until the greedy policy solves the task from (2, 1); "
          f"budget {budget:,}, seeds {first_seed}-{first_seed + seeds - 1}")
    print("| seed | onehot (x, y, RM units), exploring starts | joint (cell, RM units), exploring starts "
          "| joint, paper start (2, 1) |")
    print("|---|---|---|---|")
    for seed in range(first_seed, first_seed + seeds):
        cells = [_timed(ppo_steps_to_success, budget, m, seed, start=st) for m, st in (("onehot", "random"), ("joint", "random"), ("joint", "paper"))]
        print(f"| {seed} | " + " | ".join(cells) + " |", flush=True)


def run_sb3_start(seeds: int, budget: int, first_seed: int = 0) -> None:
    """DQN from the paper's fixed start: plain, with CRM, with a count bonus (joint code)."""
    import torch

    torch.set_num_threads(1)
    print(f"SB3 DQN on office-world coffee from the paper's start (2, 1) (no exploring starts, joint code), env "
          f"steps until the greedy policy solves the task; budget {budget:,}, seeds {first_seed}-{first_seed + seeds - 1}")
    print("| seed | DQN | DQN + CRM | DQN + count bonus (IntrinsicRewardVecWrapper) |")
    print("|---|---|---|---|")
    for seed in range(first_seed, first_seed + seeds):
        cells = [_timed(dqn_steps_to_success, budget, crm, seed, start="paper", obs_mode="joint", bonus=bonus)
                 for crm, bonus in ((False, False), (True, False), (False, True))]
        print(f"| {seed} | " + " | ".join(cells) + " |", flush=True)


def run_sb3_crm(seeds: int, budget: int, obs_mode: str = "onehot", first_seed: int = 0) -> None:
    import torch

    torch.set_num_threads(1)
    print(f"SB3 DQN on office-world coffee (obs_mode={obs_mode!r}, exploring starts), env steps until the greedy "
          f"policy solves the task from (2, 1); budget {budget:,}, seeds {first_seed}-{first_seed + seeds - 1}")
    print("| seed | DQN | DQN + CRM (CounterfactualReplayBuffer) |")
    print("|---|---|---|")
    found: dict[bool, list[float]] = {False: [], True: []}
    for seed in range(first_seed, first_seed + seeds):
        row = []
        for crm in (False, True):
            t0 = time.perf_counter()
            n = dqn_steps_to_success(crm, seed, budget, obs_mode=obs_mode)
            found[crm].append(float(n) if n is not None else float("inf"))
            row.append((f"{n:,}" if n is not None else f"> {budget:,}") + f" ({time.perf_counter() - t0:.0f} s)")
        print(f"| {seed} | {row[0]} | {row[1]} |", flush=True)
    plain, crm_steps = np.median(found[False]), np.median(found[True])
    capped = np.minimum(found[False], budget)
    ratio = float(np.median(np.array(capped) / np.array(found[True])))
    bound = " (at least: plain DQN runs that never succeed count as the budget)" if np.isinf(plain) or np.isinf(found[False]).any() else ""
    print(f"median steps to success: DQN {plain:,.0f}, DQN + CRM {crm_steps:,.0f}; "
          f"median per-seed ratio DQN / DQN + CRM = {ratio:.2f}x{bound}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("curves", "speed", "extras", "sb3-crm", "sb3-start", "sb3-pref", "sb3-ppo", "all"))
    parser.add_argument("--seeds", type=int, default=None, help="default: 20 for curves, 5 for extras, 3 for sb3-crm")
    parser.add_argument("--budget", type=int, default=30_000, help="sb3-crm: env steps per run")
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--obs-mode", default="onehot", choices=("onehot", "flat", "joint"), help="sb3-crm: observation code")
    parser.add_argument("--first-seed", type=int, default=0, help="sb3-*: the first seed")
    parser.add_argument("--out", type=Path, default=HERE / "envs_curves.png")
    args = parser.parse_args()
    if args.what in ("speed", "all"):
        speed_wrapper()
        speed_learners(20_000)
    if args.what in ("extras", "all"):
        run_extras(args.seeds or 5)
    if args.what in ("sb3-crm", "all"):
        run_sb3_crm(args.seeds or 3, args.budget, args.obs_mode, args.first_seed)
    if args.what in ("sb3-ppo", "all"):
        run_sb3_ppo(args.seeds or 3, 64_000, args.first_seed)
    if args.what in ("sb3-start", "all"):
        run_sb3_start(args.seeds or 3, 20_000, args.first_seed)
    if args.what in ("sb3-pref", "all"):
        run_sb3_preferences(args.seeds or 4, 30_000, args.first_seed)
    if args.what in ("curves", "all"):
        run_curves(args.seeds or 20, args.steps, args.out)


if __name__ == "__main__":
    main()
