"""`RewardMachineWrapper`: run reward machines beside any Gymnasium env.

    env = RewardMachineWrapper(OfficeWorld(), office_task("coffee"), office_labels)
    obs, info = env.reset(seed=0)          # obs = {"obs": [x, y], "rm": 0}
    obs, r, terminated, truncated, info = env.step(1)
    info["reward/env"], info["reward/rm"], info["rm/state"], info["rm/labels"]

The labelling function `label(obs, action, next_obs, info) -> frozenset[str]` says which events
happened. `terminated` is set when the machine accepts or rejects (or the env terminates);
time limits stay `truncated`. Observations are augmented with the machine state either as a
`Dict` (`{"obs", "rm"}`, `rm` a Discrete index over every state of every task) or flattened
with a one-hot code (`obs_mode="onehot"`, a float32 Box, for MLP policies).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.envs.rm.shaping import rm_potentials
from rewardlab.errors import SpecError

__all__ = ["LabelFn", "RewardMachineWrapper"]

LabelFn = Callable[[Any, Any, Any, dict[str, Any]], frozenset[str]]


class RewardMachineWrapper(gym.Wrapper):  # type: ignore[type-arg]
    """Adds reward machines to an env: RM reward, RM state in the observation, RM termination.

    Args:
        env: any Gymnasium env.
        machines: one machine, or several tasks (multi-task: one task per episode).
        label: the labelling function.
        obs_mode: `"dict"` (default), `"onehot"` (flat float32 Box) or `"none"` (env obs only).
        reward_mode: `"rm"` (the agent gets the machine's reward; the env's is in info) or
            `"sum"` (env reward + RM reward).
        task_schedule: `"cycle"` (T1, T2, ... one per episode, as in the paper) or `"random"`;
            `reset(options={"task": i})` picks one explicitly.
        shaping_gamma: when set, add potential-based shaping gamma*Phi(u') - Phi(u) with
            Phi = -V from value iteration on each machine (info keeps the unshaped reward).
    """

    def __init__(
        self,
        env: gym.Env,  # type: ignore[type-arg]
        machines: RewardMachine | Sequence[RewardMachine],
        label: LabelFn,
        *,
        obs_mode: Literal["dict", "onehot", "none"] = "dict",
        reward_mode: Literal["rm", "sum"] = "rm",
        task_schedule: Literal["cycle", "random"] = "cycle",
        shaping_gamma: float | None = None,
    ):
        super().__init__(env)
        self.machines = [machines] if isinstance(machines, RewardMachine) else list(machines)
        if not self.machines:
            raise SpecError("RewardMachineWrapper needs at least one reward machine")
        if obs_mode not in ("dict", "onehot", "none") or reward_mode not in ("rm", "sum"):
            raise SpecError(f"obs_mode must be dict|onehot|none and reward_mode rm|sum, got {obs_mode!r}, {reward_mode!r}")
        self.label, self.obs_mode, self.reward_mode, self.task_schedule = label, obs_mode, reward_mode, task_schedule
        self.offsets = [0, *np.cumsum([m.n_states for m in self.machines]).tolist()]  # plain ints: fast
        n = self.offsets[-1]
        self._onehot = np.eye(n, dtype=np.float32)
        self.shaping_gamma = shaping_gamma
        self._phi = [rm_potentials(m, gamma=shaping_gamma) for m in self.machines] if shaping_gamma else None
        base = env.observation_space
        self._box = isinstance(base, spaces.Box)
        if obs_mode == "dict":
            self.observation_space = spaces.Dict({"obs": base, "rm": spaces.Discrete(n)})
        elif obs_mode == "onehot":
            self._k = spaces.flatdim(base)
            dim = self._k + n
            self.observation_space = spaces.Box(-np.inf, np.inf, shape=(dim,), dtype=np.float32)
            # row g: zeros for the env part, then the one-hot code of global RM state g
            self._rows = np.zeros((n, dim), dtype=np.float32)
            self._rows[:, self._k :] = self._onehot
        self.task, self.u = -1, 0
        self._obs: Any = None
        #: (env obs, action, next env obs, labels, env terminated) of the last step, for CRM
        self.last_transition: tuple[Any, Any, Any, frozenset[str], bool] | None = None

    # -- encoding ------------------------------------------------------------------------
    def encode(self, obs: Any, task: int, u: int) -> Any:
        """The augmented observation for env obs `obs` in state index `u` of task `task`."""
        g = self.offsets[task] + u
        if self.obs_mode == "dict":
            return {"obs": obs, "rm": g}
        if self.obs_mode == "onehot":
            if self._box:  # fast path: copy the row for state g and write the ravelled Box values
                out = self._rows[g].copy()
                out[: self._k] = np.asarray(obs).reshape(-1)
                return out
            flat = np.asarray(spaces.flatten(self.env.observation_space, obs), dtype=np.float32)
            return np.concatenate((flat, self._onehot[g]))
        return obs

    @property
    def machine(self) -> RewardMachine:
        return self.machines[self.task]

    # -- gym API ---------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        if options and "task" in options:
            self.task = int(options["task"]) % len(self.machines)
        elif self.task_schedule == "random":
            self.task = int(self.np_random.integers(len(self.machines)))
        else:
            self.task = (self.task + 1) % len(self.machines)
        rm = self.machine
        self.u = rm.index[rm.initial]
        self._obs = obs
        info["rm/state"], info["rm/task"] = rm.initial, self.task
        return self.encode(obs, self.task, self.u), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, env_r, terminated, truncated, info = self.env.step(action)
        labels = self.label(self._obs, action, obs, info)
        rm = self.machines[self.task]
        u = self.u
        v, rm_r, acc, rej, _ = rm.step_index(u, labels)
        done = terminated or acc or rej
        reward = rm_r + float(env_r) if self.reward_mode == "sum" else rm_r
        if self._phi is not None:
            phi = self._phi[self.task]
            reward += self.shaping_gamma * (0.0 if done else phi[v]) - phi[u]  # type: ignore[operator]
        task = self.task
        info.update({"reward/env": env_r, "reward/rm": rm_r, "rm/state": rm.states[v], "rm/labels": labels,
                     "rm/task": task, "rm/accepted": acc, "rm/rejected": rej})
        self.last_transition = (self._obs, action, obs, labels, terminated)
        self.u, self._obs = v, obs
        out = {"obs": obs, "rm": self.offsets[task] + v} if self.obs_mode == "dict" else self.encode(obs, task, v)
        return out, reward, bool(done), bool(truncated and not done), info

    # -- counterfactuals -------------------------------------------------------------------
    def counterfactual_batch(
        self, obs: Any, action: Any, next_obs: Any, labels: frozenset[str], *, env_terminated: bool = False
    ) -> dict[str, Any]:
        """Every (task, state) experience of one env transition, encoded like observations.

        Returns a dict of lists `obs`, `next_obs`, `action`, `reward`, `done`, ready for a
        replay buffer (`buffer.add(o, o2, a, r, d, [{}])` per entry in Stable-Baselines3).
        """
        out: dict[str, list[Any]] = {"obs": [], "next_obs": [], "action": [], "reward": [], "done": []}
        for t, rm in enumerate(self.machines):
            for u, name in enumerate(rm.states):
                if rm.is_terminal(name):
                    continue
                v, r, acc, rej, _ = rm.step_index(u, labels)
                out["obs"].append(self.encode(obs, t, u))
                out["next_obs"].append(self.encode(next_obs, t, v))
                out["action"].append(action)
                out["reward"].append(r)
                out["done"].append(bool(acc or rej or env_terminated))
        return out
