"""The authoring loop on the office world: does the offline template author find a reward whose
trained agents reach >= 90% of optimal on `coffee_mail`, from the sparse start?

For each loop seed the script runs `author_reward` with `TemplateAuthor(seed)` (k candidates x
r rounds, stopping after the round that reaches the target), then **re-trains the best reward
on fresh training seeds** (the loop picked it as the best of many noisy trainings, so its own
score is optimistic) and compares, with the same budget and the same learner:

- the sparse start (1 on success, the task's own reward);
- the reward machine's automated shaping (Toro Icarte et al., JAIR 2022, sec. 5.3: potential
  Phi(u) = -V(u) from value iteration over the machine, as `ql-rs` in `rewardlab.envs.tabular`),
  the expert shaping one writes by hand from the task's structure; on a task without a reward
  machine (`--task grid/maze`), shaping by the optimal value itself (Phi = V* of the sparse
  reward, Ng et al. 1999), the ideal potential.

`--learner dqn` (or ppo) trains every candidate, validation and re-training with
Stable-Baselines3 instead of tabular Q-learning; it is about a hundred times slower per env
step, so use a small task and budget: `--task grid/maze --learner dqn --steps 3000 --train-seeds 2`.

Run: `python bench/bench_author.py --seeds 3` (two to four minutes per seed on a loaded core).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rewardlab.author import (
    LoopConfig,
    RewardTable,
    TemplateAuthor,
    TrainConfig,
    author_reward,
    evaluate_candidate,
    office_task_env,
    task_by_name,
    train_on_table,
)
from rewardlab.author.probes import value_iteration
from rewardlab.author.tasks import FiniteTask
from rewardlab.sandbox import SandboxPool

#: the goal in words, as the author is told it
GOALS = {"office/coffee_mail": "bring coffee and mail to the office", "grid/maze": "reach the goal cell, avoid the trap"}


def rm_shaping_table(task_name: str, gamma: float) -> np.ndarray:
    """r + gamma Phi(u') - Phi(u) on the task's transitions (Phi = 0 once the episode ends)."""
    from rewardlab.envs.officeworld import office_problem

    problem = office_problem((task_name,))
    task = office_task_env(task_name)
    phi = problem.potential[0]
    P, A = task.shape
    shaped = np.zeros(P * A)
    for i, (obs, _, next_obs, info) in enumerate(task.transitions):
        ended = info["success"] or info["failed"]
        shaped[i] = float(info["success"]) + (0.0 if ended else gamma * phi[next_obs["stage"]]) - phi[obs["stage"]]
    return shaped.reshape(P, A)


def optimal_value_shaping_table(task: FiniteTask, gamma: float) -> np.ndarray:
    """r + gamma V*(s') - V*(s) with V* the optimal value of the sparse reward (0 once the episode ends)."""
    sparse = task.true_reward()
    v = value_iteration(task, sparse, gamma=gamma).max(axis=1)
    after = np.where(task.next_state >= 0, v[np.maximum(task.next_state, 0)], 0.0)
    return sparse + gamma * after - v[:, None]


def expert_table(task: FiniteTask, gamma: float) -> tuple[str, np.ndarray]:
    """The expert baseline of the task: RM shaping on the office world, else optimal-value shaping."""
    if task.name.startswith("office/"):
        return "RM shaping (expert)", rm_shaping_table(task.name.split("/", 1)[1], gamma)
    return "V* shaping (ideal)", optimal_value_shaping_table(task, gamma)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="coffee_mail", help="an office task (coffee_mail) or any task_by_name name (grid/maze)")
    parser.add_argument("--learner", default="q", choices=["q", "dqn", "ppo"], help="who trains (TrainConfig.learner)")
    parser.add_argument("--train-seeds", type=int, default=TrainConfig.seeds, help="training seeds per candidate")
    parser.add_argument("--seeds", type=int, default=3, help="loop seeds (template search and training)")
    parser.add_argument("--first-seed", type=int, default=0, help="the first loop seed (seeds run first-seed, first-seed+1, ...)")
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--steps", type=int, default=20_000, help="training budget per seed")
    parser.add_argument("--heldout-seeds", type=int, default=8, help="fresh training seeds for the re-training")
    parser.add_argument("--validation-seeds", type=int, default=8, help="seeds the loop validates its leader on (0: none)")
    args = parser.parse_args()

    task = task_by_name(args.task if "/" in args.task else f"office/{args.task}")
    learner = {"learner": args.learner, "steps": args.steps}
    train = TrainConfig(**learner)
    heldout = TrainConfig(**learner, seeds=args.heldout_seeds, seed=10_000)
    sparse = train_on_table(task, RewardTable(task.true_reward(), {"success": task.true_reward()}), heldout)
    expert_name, expert = expert_table(task, train.gamma)
    rm_fit = train_on_table(task, RewardTable(expert, {"expert": expert}), heldout)
    print(f"{task.name}: optimal {task.optimal_steps()} steps; learner {args.learner}; budget {args.steps} steps x "
          f"{heldout.seeds} fresh seeds")  # fmt: skip
    print(f"sparse start        optimality {sparse.optimality:.3f}  success {sparse.success_rate:.3f}")
    print(f"{expert_name:<19} optimality {rm_fit.optimality:.3f}  success {rm_fit.success_rate:.3f}")
    rows = []
    with SandboxPool(size=1) as pool:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            validation = TrainConfig(**learner, seeds=args.validation_seeds, seed=5_000 + 100 * seed) if args.validation_seeds else None
            config = LoopConfig(candidates=args.candidates, rounds=args.rounds, target=args.target,
                                train=TrainConfig(**learner, seeds=args.train_seeds, seed=seed), validation=validation)  # fmt: skip
            started = time.perf_counter()
            result = author_reward(task, TemplateAuthor(seed=seed), goal=GOALS.get(task.name, task.description),
                                   config=config, pool=pool)  # fmt: skip
            seconds = time.perf_counter() - started
            best = result.best
            assert best is not None
            table = evaluate_candidate(best["code"], task.transitions, task.shape, pool)
            again = train_on_table(task, table, heldout)
            rows.append((seed, len(result.records), best["fitness"]["optimality"], again.optimality, again.success_rate, seconds))
            print(f"loop seed {seed}: {len(result.records)} candidates ({result.fates()}), best in-loop {best['fitness']['optimality']:.3f}, "
                  f"re-trained on fresh seeds {again.optimality:.3f} (success {again.success_rate:.3f}), {seconds:.0f} s; "
                  f"params {best['meta']['params']}")  # fmt: skip
    heldouts = [r[3] for r in rows]
    print(f"\nre-trained optimality over {len(rows)} loop seeds: mean {np.mean(heldouts):.3f}, min {min(heldouts):.3f} "
          f"(target {args.target}); {sum(h >= args.target for h in heldouts)}/{len(rows)} reach it")  # fmt: skip
    def ratio(base: float) -> str:
        return f"{np.mean(heldouts) / base:.2f}x" if base > 0 else f"n/a (it scores 0; difference +{np.mean(heldouts):.3f})"

    print(f"ratio vs sparse start: {ratio(sparse.optimality)}; vs {expert_name}: {ratio(rm_fit.optimality)}")
    print(f"seconds per candidate: {sum(r[5] for r in rows) / sum(r[1] for r in rows):.1f}")


if __name__ == "__main__":
    main()
