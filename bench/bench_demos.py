"""Claims of `rewardlab.learn` checked on toys, with seeds.

    .venv/bin/python bench/bench_demos.py progress [--seeds 5] [--budget 200000] [--task coffee_mail]
    .venv/bin/python bench/bench_demos.py mountain-car [--seeds 5] [--budget 200000]
    .venv/bin/python bench/bench_demos.py impute [--seeds 5] [--transitions 20000] [--fraction 0.01]

`--first-seed N` runs seeds N, N+1, ... (fresh seeds for a re-check) in every mode.

`progress`: tabular epsilon-greedy Q-learning (Q = 0, gamma 0.9, alpha 0.5, epsilon 0.1,
episodes from the paper's start (2, 1), at most 200 steps) on office-world `coffee_mail` with
the task's sparse reward, against the same learner on the sparse reward plus potential-based
shaping gamma * Phi(s') - Phi(s) from progress learned on 40 planner demonstrations from
random start cells (temporal distance, TimeRewarder; and subtask budgets). Reported: env steps
until the greedy policy reaches the goal from the start (checked every 1,000 steps), per seed;
"> budget" when it never did. Shaping keeps the optimal policy (Ng et al. 1999), so a faster
run is the learned progress helping exploration, not a different task.

`mountain-car`: the same comparison on a classic-control task. Tabular Q-learning over a
24 x 24 grid of MountainCar-v0's (position, velocity) (Q = 0, gamma 0.99, alpha 0.1, epsilon
0.1; the env's -1 per step until the flag, 200-step episodes) against the same learner with
shaping gamma * Phi(s') - Phi(s), Phi = H x the temporal-distance progress learned from 20
episodes of the energy controller (H: the longest one; progress in steps, so a step forward is
worth about the -1 it costs), read at the cell centres (a function of the state, so the shaping
is potential-based). Reported: env steps until the greedy policy reaches the flag from
`reset(seed=0)` within 200 steps (checked every 20 episodes).

`impute`: offline RL on CliffWalking-v1 from `--transitions` uniformly drawn transitions.
Fitted Q iteration (exact on the finite dataset: each (s, a) takes its mean reward and its
next state; gamma 0.95) learns from (a) every reward label, (b) `--fraction` of the labels
with the rest imputed by `RewardImputer` (1-nearest labelled neighbour, and an MLP, on
(x, y, action, x', y'); averaging 3 neighbours blurs a cliff label into its neighbours), (c) the
same few labels with the rest set to 0 (no imputation). Score: the greedy policy's return from
the start over 100 steps, normalised as (R - R_floor) / (R_all - R_floor) with R_floor = -100
(never arriving, never falling); the claim is >= 0.9 of the all-labels policy.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rewardlab.learn.impute import RewardImputer
from rewardlab.learn.planners import TabularTask, office_tabular, plan_demos, toy_text_tabular
from rewardlab.learn.progress import SubtaskBudgetProgress, TemporalDistanceProgress

GAMMA = 0.9


def greedy_reaches_goal(task: TabularTask, q: np.ndarray, horizon: int = 200) -> bool:
    s = task.start
    for _ in range(horizon):
        a = int(q[s].argmax())
        if task.success[s, a]:
            return True
        s = int(task.next_state[s, a])
        if s < 0:
            return False
    return False


def q_learning_steps_to_goal(task: TabularTask, shaping: np.ndarray | None, seed: int, budget: int, every: int = 1000) -> int | None:
    """Env steps until the greedy policy reaches the goal, or None within `budget`."""
    rng = np.random.default_rng(seed)
    P, A = task.shape
    q = np.zeros((P, A))
    reward = task.reward + (shaping if shaping is not None else 0.0)
    s, t_ep = task.start, 0
    for step in range(1, budget + 1):
        best = np.flatnonzero(q[s] == q[s].max())
        a = int(rng.integers(A)) if rng.random() < 0.1 else int(rng.choice(best))  # random tie-break
        s2 = int(task.next_state[s, a])
        target = reward[s, a] + (GAMMA * q[s2].max() if s2 >= 0 else 0.0)
        q[s, a] += 0.5 * (target - q[s, a])
        t_ep += 1
        s = s2
        if s < 0 or t_ep >= 200:  # episode over (goal, decoration) or truncated
            s, t_ep = task.start, 0
        if step % every == 0 and greedy_reaches_goal(task, q):
            return step
    return None


def shaping_table(task: TabularTask, potential: np.ndarray) -> np.ndarray:
    """F(p, a) = gamma Phi(p') - Phi(p) with Phi = 0 once the episode ends."""
    after = np.where(task.next_state >= 0, potential[np.maximum(task.next_state, 0)], 0.0)
    return GAMMA * after - potential[:, None]


def run_progress(seeds: int, budget: int, task_name: str, first: int = 0) -> None:
    task = office_tabular(task_name)
    print(f"tabular Q-learning on office-world {task_name}: env steps until the greedy policy reaches the goal "
          f"from (2, 1); budget {budget:,}, seeds {first}-{first + seeds - 1}")  # fmt: skip
    print("| seed | sparse | sparse + shaping (temporal distance) | sparse + shaping (subtask budgets) | fit s |")
    print("|---|---|---|---|---|")
    found: dict[str, list[float]] = {"sparse": [], "td": [], "budgets": []}
    for seed in range(first, first + seeds):
        t0 = time.perf_counter()
        demos = plan_demos(task, 40, seed=1000 + seed)
        td = TemporalDistanceProgress.fit(demos, seed=seed)
        bud = SubtaskBudgetProgress.fit(demos, seed=seed)
        fit_s = time.perf_counter() - t0
        cells = []
        for key, shaping in (("sparse", None), ("td", shaping_table(task, td.potential(task.features))),
                             ("budgets", shaping_table(task, bud.potential(task.features)))):  # fmt: skip
            n = q_learning_steps_to_goal(task, shaping, seed, budget)
            found[key].append(float(n) if n is not None else float("inf"))
            cells.append(f"{n:,}" if n is not None else f"> {budget:,}")
        print(f"| {seed} | " + " | ".join(cells) + f" | {fit_s:.0f} |", flush=True)
    med = {k: np.median(v) for k, v in found.items()}
    print(f"median steps: sparse {med['sparse']:,.0f}, temporal distance {med['td']:,.0f}, budgets {med['budgets']:,.0f} "
          "(inf: never within the budget)")  # fmt: skip


CAR_BINS, CAR_LOW, CAR_HIGH = 24, np.array([-1.2, -0.07]), np.array([0.6, 0.07])


def car_cell(obs: np.ndarray) -> int:
    i = np.clip(((obs - CAR_LOW) / (CAR_HIGH - CAR_LOW) * CAR_BINS).astype(int), 0, CAR_BINS - 1)
    return int(i[0] * CAR_BINS + i[1])


def car_greedy_reaches_flag(env, q: np.ndarray) -> bool:  # type: ignore[no-untyped-def]
    obs, _ = env.reset(seed=0)
    for _ in range(200):
        obs, _, terminated, _, _ = env.step(int(q[car_cell(obs)].argmax()))
        if terminated:
            return True
    return False


def car_steps_to_flag(potential: np.ndarray | None, seed: int, budget: int, gamma: float = 0.99) -> int | None:
    import gymnasium as gym

    env, probe = gym.make("MountainCar-v0").unwrapped, gym.make("MountainCar-v0").unwrapped
    rng = np.random.default_rng(seed)
    q = np.zeros((CAR_BINS * CAR_BINS, 3))
    steps, episode = 0, 0
    while steps < budget:
        obs, _ = env.reset(seed=seed * 100_000 + episode)
        c = car_cell(obs)
        for _ in range(200):
            a = int(rng.integers(3)) if rng.random() < 0.1 else int(rng.choice(np.flatnonzero(q[c] == q[c].max())))
            obs, r, terminated, _, _ = env.step(a)
            c2 = car_cell(obs)
            if potential is not None:
                r += (0.0 if terminated else gamma * potential[c2]) - potential[c]
            q[c, a] += 0.1 * (r + (0.0 if terminated else gamma * q[c2].max()) - q[c, a])
            c, steps = c2, steps + 1
            if terminated:
                break
        episode += 1
        if episode % 20 == 0 and car_greedy_reaches_flag(probe, q):
            return steps
    return None


def run_mountain_car(seeds: int, budget: int, first: int = 0) -> None:
    from rewardlab.learn.planners import mountain_car_demos

    print(f"tabular Q-learning on MountainCar-v0 ({CAR_BINS}x{CAR_BINS} cells): env steps until the greedy policy "
          f"reaches the flag from reset(seed=0); budget {budget:,}, seeds {first}-{first + seeds - 1}")  # fmt: skip
    print("| seed | env reward | env reward + shaping (temporal distance) |")
    print("|---|---|---|")
    centres = np.array([CAR_LOW + (np.array([i, j]) + 0.5) / CAR_BINS * (CAR_HIGH - CAR_LOW)
                        for i in range(CAR_BINS) for j in range(CAR_BINS)])  # fmt: skip
    for seed in range(first, first + seeds):
        progress = TemporalDistanceProgress.fit(mountain_car_demos(20, seed=1000 + 20 * seed), seed=seed)
        cells = []
        # progress in steps (times the horizon H): one step forward is worth about the -1 it costs
        for potential in (None, progress.horizon * progress.potential(centres)):
            n = car_steps_to_flag(potential, seed, budget)
            cells.append(f"{n:,}" if n is not None else f"> {budget:,}")
        print(f"| {seed} | " + " | ".join(cells) + " |", flush=True)


def cliff_dataset(n: int, seed: int) -> tuple[TabularTask, np.ndarray, np.ndarray, np.ndarray]:
    task = toy_text_tabular("CliffWalking-v1")
    rng = np.random.default_rng(seed)
    s, a = rng.choice(task.starts, n), rng.integers(0, 4, n)
    return task, s, a, task.reward[s, a]


def xy(p: np.ndarray) -> np.ndarray:
    return np.stack([p % 12 / 11, p // 12 / 3], axis=1)


def fitted_q(task: TabularTask, s: np.ndarray, a: np.ndarray, r: np.ndarray, gamma: float = 0.95, iters: int = 300) -> np.ndarray:
    """Q iteration on the dataset (deterministic dynamics: each (s, a) its mean reward and next state)."""
    P, A = task.shape
    total, count = np.zeros((P, A)), np.zeros((P, A))
    np.add.at(total, (s, a), r)
    np.add.at(count, (s, a), 1.0)
    seen = count > 0
    mean_r = np.where(seen, total / np.maximum(count, 1), 0.0)
    q = np.zeros((P, A))
    for _ in range(iters):
        v = q.max(1)
        nxt = task.next_state
        q = np.where(seen, mean_r + gamma * np.where(nxt >= 0, v[np.maximum(nxt, 0)], 0.0), -1e9)  # unseen: never chosen
    return q


def greedy_return(task: TabularTask, q: np.ndarray, horizon: int = 100) -> float:
    s, total = task.start, 0.0
    for _ in range(horizon):
        a = int(q[s].argmax())
        total += float(task.reward[s, a])
        s = int(task.next_state[s, a])
        if s < 0:
            break
    return total


def run_impute(seeds: int, n: int, fraction: float, first: int = 0) -> None:
    floor = -100.0
    print(f"fitted Q on CliffWalking-v1, {n:,} uniform transitions, {fraction:.1%} labelled; return of the greedy "
          f"policy from the start over 100 steps (optimum -13), normalised to the all-labels policy with floor {floor}")  # fmt: skip
    print("| seed | all labels | kNN-imputed | MLP-imputed | unlabelled as 0 |")
    print("|---|---|---|---|---|")
    scores: dict[str, list[float]] = {"knn": [], "mlp": [], "zero": []}
    for seed in range(first, first + seeds):
        task, s, a, r = cliff_dataset(n, seed)
        s2 = np.where(task.next_state[s, a] >= 0, task.next_state[s, a], 47)
        labelled = np.random.default_rng(seed + 1).choice(n, max(1, round(fraction * n)), replace=False)
        r_all = greedy_return(task, fitted_q(task, s, a, r))
        row = [f"{r_all:.0f}"]
        for method in ("knn", "mlp"):
            model = RewardImputer.fit(xy(s), a, xy(s2), r, labelled, n_actions=4, method=method, k=1, seed=seed)
            ret = greedy_return(task, fitted_q(task, s, a, model.impute(xy(s), a, xy(s2), r, labelled)))
            scores[method].append((ret - floor) / (r_all - floor))
            row.append(f"{ret:.0f} ({scores[method][-1]:.2f})")
        zero = np.zeros(n)
        zero[labelled] = r[labelled]
        ret = greedy_return(task, fitted_q(task, s, a, zero))
        scores["zero"].append((ret - floor) / (r_all - floor))
        row.append(f"{ret:.0f} ({scores['zero'][-1]:.2f})")
        print(f"| {seed} | " + " | ".join(row) + " |", flush=True)
    print("mean normalised score: " + ", ".join(f"{k} {np.mean(v):.2f} (min {np.min(v):.2f})" for k, v in scores.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("progress", "mountain-car", "impute"))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0, help="the first seed (seeds run first-seed, first-seed+1, ...)")
    parser.add_argument("--budget", type=int, default=200_000, help="progress, mountain-car: env steps per run")
    parser.add_argument("--task", default="coffee_mail", help="progress: office task")
    parser.add_argument("--transitions", type=int, default=20_000, help="impute: dataset size")
    parser.add_argument("--fraction", type=float, default=0.01, help="impute: labelled fraction")
    args = parser.parse_args()
    if args.what == "progress":
        run_progress(args.seeds, args.budget, args.task, args.first_seed)
    elif args.what == "mountain-car":
        run_mountain_car(args.seeds, args.budget, args.first_seed)
    else:
        run_impute(args.seeds, args.transitions, args.fraction, args.first_seed)


if __name__ == "__main__":
    main()
