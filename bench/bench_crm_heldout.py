"""SB3 DQN with and without counterfactual experiences (CRM) on office-world tasks it never runs.

    .venv/bin/python bench/bench_crm_heldout.py [--seeds 3] [--first-seed 0] [--budget 30000]
        [--every 5000] [--code onehot|props] [--train coffee,mail] [--heldout coffee_mail]

The multi-task setting of Toro Icarte et al. (JAIR 2022, sec. 5.1), with a split: the wrapper
knows every task's reward machine (training and held-out ones; they share the office world's
propositions), but episodes are only ever run on the training tasks (cycled, one per episode,
exploring starts). DQN's replay buffer then holds

- without CRM: the real transitions, whose RM states are the training tasks' only;
- with CRM (`CounterfactualReplayBuffer`): every env step once per live (task, RM state) of
  *every* machine, held-out ones included, so the held-out tasks are learned off-policy from
  the training tasks' experience. CRM needs the held-out machines at training time: the tasks
  are held out of the episodes, not hidden from the learner.

Observation codes (`--code`):

- `onehot`: the wrapper's `obs_mode="onehot"` (x, y and the global RM state, one unit each);
  a held-out task's RM-state units are never active in a real transition.
- `props`: the same x, y units, and the RM state replaced by the propositions that advance it
  (e.g. coffee's first state = {f}, `coffee_mail`'s first = {e, f}); states with the same
  next wanted propositions share a code across tasks, so plain DQN can transfer by the code
  alone, and what CRM adds on top of that is measured.

Evaluation, every `--every` env steps, for each task: the greedy policy from every empty cell
(95 starts, 100 steps): the success rate and the mean optimality (fewest steps / steps taken,
0 on failure). Step counts, not times: the figures do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import time
from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np

from rewardlab.envs.officeworld import (
    EMPTY_CELLS,
    OFFICE_ALPHABET,
    WIDTH,
    OfficeWorld,
    office_labels,
    office_task,
    office_transitions,
)
from rewardlab.envs.rm import RewardMachine
from rewardlab.envs.rm.wrapper import RewardMachineWrapper

PROPS = "abcdefg"
HORIZON = 100


class TrainingTasks(gym.Wrapper[Any, Any, Any, Any]):
    """Runs episodes only on `tasks` (indices into the wrapped machines), cycling one per episode."""

    def __init__(self, env: RewardMachineWrapper, tasks: list[int]):
        super().__init__(env)
        self.tasks, self.next = tasks, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        task = self.tasks[self.next % len(self.tasks)]
        self.next += 1
        return self.env.reset(seed=seed, options={**(options or {}), "task": task})


def advancing_props(machines: list[RewardMachine]) -> np.ndarray:
    """(global RM states, 7): which single propositions move each state on, to a non-failing state."""
    rows = []
    for rm in machines:
        for u, name in enumerate(rm.states):
            row = np.zeros(len(PROPS), dtype=np.float32)
            if not rm.is_terminal(name):
                for i, p in enumerate(PROPS):
                    v, _, _, rej, _ = rm.step_index(u, frozenset(p))
                    row[i] = float(v != u and not rej)
            rows.append(row)
    return np.stack(rows)


class PropsCode(gym.Wrapper[Any, Any, Any, Any]):
    """Re-codes the `onehot` RM-state units as the state's advancing propositions (obs and CRM rows)."""

    def __init__(self, env: gym.Env[Any, Any], table: np.ndarray):
        super().__init__(env)
        self.table, self.n = table, table.shape[0]
        width = env.observation_space.shape[0] - self.n + table.shape[1]  # type: ignore[index]
        self.observation_space = gym.spaces.Box(0.0, 1.0, (width,), np.float32)

    def code(self, obs: np.ndarray) -> np.ndarray:
        return np.concatenate([obs[..., : -self.n], obs[..., -self.n :] @ self.table], axis=-1).astype(np.float32)

    def reset(self, **kwargs: Any) -> Any:
        obs, info = self.env.reset(**kwargs)
        return self.code(obs), info

    def step(self, action: Any) -> Any:
        obs, r, term, trunc, info = self.env.step(action)
        batch = info.get("rm/counterfactual")
        if batch is not None:
            info["rm/counterfactual"] = {**batch, "obs": self.code(batch["obs"]), "next_obs": self.code(batch["next_obs"])}
        return self.code(obs), r, term, trunc, info


def make_env(machines: list[RewardMachine], train: list[int], crm: bool, code: str) -> gym.Env[Any, Any]:
    env: gym.Env[Any, Any] = RewardMachineWrapper(OfficeWorld(max_episode_steps=50, start="random"), machines,
                                                  office_labels, obs_mode="onehot", counterfactuals=crm)
    env = TrainingTasks(env, train)  # type: ignore[arg-type]
    return PropsCode(env, advancing_props(machines)) if code == "props" else env


def fewest_steps(rm: RewardMachine, nxt: np.ndarray, label: np.ndarray, cell: int) -> int:
    """Breadth-first search over (cell, RM state): the fewest steps to acceptance from `cell`."""
    start = (cell, rm.index[rm.initial])
    seen, queue = {start}, deque([(start, 0)])
    while queue:
        (c, u), d = queue.popleft()
        for a in range(4):
            c2 = int(nxt[c, a])
            v, _, acc, rej, _ = rm.step_index(u, OFFICE_ALPHABET[label[c2]])
            if acc:
                return d + 1
            if not rej and (c2, v) not in seen:
                seen.add((c2, v))
                queue.append(((c2, v), d + 1))
    return -1


def evaluate(model: Any, env: gym.Env[Any, Any], task: int, optimum: np.ndarray) -> tuple[float, float]:
    """Greedy rollouts of task `task` from every empty cell at once: (success rate, mean optimality)."""
    rmw: Any = env
    while not isinstance(rmw, RewardMachineWrapper):
        rmw = rmw.env
    code = env.code if isinstance(env, PropsCode) else (lambda o: o)
    rm = rmw.machines[task]
    nxt, label = office_transitions()
    cells, u = EMPTY_CELLS.copy(), np.full(len(EMPTY_CELLS), rm.index[rm.initial])
    live, steps = np.ones(len(cells), bool), np.zeros(len(cells), int)
    for t in range(HORIZON):
        idx = np.flatnonzero(live)
        if not len(idx):
            break
        obs = np.stack([rmw.encode(np.array([cells[i] % WIDTH, cells[i] // WIDTH]), task, int(u[i])) for i in idx])
        actions = model.predict(code(obs), deterministic=True)[0]
        for i, a in zip(idx, actions, strict=True):
            cells[i] = nxt[cells[i], int(a)]
            u[i], _, acc, rej, _ = rm.step_index(int(u[i]), OFFICE_ALPHABET[label[cells[i]]])
            if acc or rej:
                live[i] = False
                steps[i] = t + 1 if acc else 0
    solved = steps > 0
    return float(solved.mean()), float(np.where(solved, optimum / np.maximum(steps, 1), 0.0).mean())


def run(machines: list[RewardMachine], train: list[int], crm: bool, code: str, seed: int, budget: int,
        every: int) -> list[list[tuple[float, float]]]:
    """One DQN run; per checkpoint, (success, optimality) for every task."""
    import stable_baselines3 as sb3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    from rewardlab.envs.rm.sb3 import CounterfactualReplayBuffer

    nxt, label = office_transitions()
    optimum = [np.array([fewest_steps(rm, nxt, label, int(c)) for c in EMPTY_CELLS]) for rm in machines]
    probe = make_env(machines, train, False, code)
    venv = make_vec_env(lambda: make_env(machines, train, crm, code), n_envs=8, seed=seed)
    model = sb3.DQN("MlpPolicy", venv, learning_starts=1000, train_freq=1, gradient_steps=1, buffer_size=100_000,
                    exploration_fraction=0.3, exploration_final_eps=0.05, learning_rate=1e-3, target_update_interval=100,
                    gamma=0.9, batch_size=64, replay_buffer_class=CounterfactualReplayBuffer if crm else None,
                    policy_kwargs={"net_arch": [128]}, seed=seed, device="cpu")
    out: list[list[tuple[float, float]]] = []

    class Probe(BaseCallback):
        next_probe = every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_probe:
                self.next_probe += every
                out.append([evaluate(self.model, probe, t, optimum[t]) for t in range(len(machines))])
            return True

    model.learn(budget, callback=Probe())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=30_000, help="env steps per run")
    parser.add_argument("--every", type=int, default=5_000, help="env steps between evaluations")
    parser.add_argument("--code", default="onehot", choices=("onehot", "props"))
    parser.add_argument("--train", default="coffee,mail", help="tasks episodes run on")
    parser.add_argument("--heldout", default="coffee_mail", help="tasks evaluated, never run in training")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    names = args.train.split(",") + args.heldout.split(",")
    machines = [office_task(n) for n in names]
    train = list(range(len(args.train.split(","))))
    print(f"SB3 DQN, office world, episodes on {args.train} (exploring starts), held out: {args.heldout}; code "
          f"{args.code}; budget {args.budget:,} env steps; greedy policy from the 95 empty cells, {HORIZON} steps: "
          f"success rate / mean optimality")
    print("| seed | arm | env steps | " + " | ".join(f"{n}{' (held out)' if i >= len(train) else ''}" for i, n in enumerate(names)) + " |")
    print("|---|---|---:|" + "---|" * len(names))
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for crm in (False, True):
            t0 = time.process_time()
            curve = run(machines, train, crm, args.code, seed, args.budget, args.every)
            arm = "DQN + CRM" if crm else "DQN"
            for k, row in enumerate(curve):
                cells = " | ".join(f"{s:.2f} / {o:.2f}" for s, o in row)
                print(f"| {seed} | {arm} | {(k + 1) * args.every:,} | {cells} |", flush=True)
            print(f"(seed {seed}, {arm}: {time.process_time() - t0:.0f} s CPU)", flush=True)


if __name__ == "__main__":
    main()
