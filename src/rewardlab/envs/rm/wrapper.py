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

from collections.abc import Sequence
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rewardlab.envs.rm.compiled import CompiledMachines, Hop
from rewardlab.envs.rm.labels import InfoLabels, LabelFn
from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.errors import SpecError

__all__ = ["LabelFn", "RewardMachineWrapper"]

_NOT_STEPPED = object()  # `_prev` until the first step after a reset
_MEMO_LIMIT = 1 << 16  # most one-hot encodings memoised (values x machine states): a few MB at most


def _finite_int_box(space: spaces.Box, n_rm: int) -> bool:
    """Whether an integer Box has few enough values to memoise every one-hot encoding."""
    if not np.issubdtype(space.dtype, np.integer) or not space.is_bounded():
        return False
    sizes = (np.asarray(space.high, dtype=np.float64) - np.asarray(space.low, dtype=np.float64) + 1).ravel()
    return float(np.prod(sizes)) * n_rm <= _MEMO_LIMIT


class _OneHotTables:
    """The one-hot encoding tables of a wrapper over `n` machine states and `k` flat env dims."""

    __slots__ = ("box", "dtype", "k", "onehot", "rows", "shape")

    def __init__(self, base: gym.Space, n: int, k: int):  # type: ignore[type-arg]
        self.box = isinstance(base, spaces.Box)
        self.dtype, self.shape, self.k = base.dtype, base.shape, k
        self.onehot = np.eye(n, dtype=np.float32)
        # row g: zeros for the env part, then the one-hot code of global RM state g
        self.rows = np.zeros((n, k + n), dtype=np.float32)
        self.rows[:, k:] = self.onehot


class RewardMachineWrapper(gym.Wrapper):
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

    def __new__(cls, env: Any = None, machines: Any = None, label: Any = None, **modes: Any) -> RewardMachineWrapper:
        # The common modes get a subclass whose `step` has no mode checks (see `_InfoDict`).
        # Chosen here, not by assigning `__class__` in __init__: on CPython 3.11 that
        # materialises the instance dict and slows every attribute access on the hot path.
        # Subclasses of the user's, and unpickling (no arguments), keep `cls`.
        if cls is RewardMachineWrapper and isinstance(env, gym.Env):
            cls = _step_variant(env, machines, label, modes.get("obs_mode", "dict"), modes.get("reward_mode", "rm"))
        return super().__new__(cls)

    def __init__(
        self,
        env: gym.Env,
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
        if task_schedule not in ("cycle", "random"):
            raise SpecError(f"task_schedule must be cycle|random, got {task_schedule!r}")
        self.label, self.obs_mode, self.reward_mode, self.task_schedule = label, obs_mode, reward_mode, task_schedule
        self.shaping_gamma = shaping_gamma
        self._setup_observations(env.observation_space, sum(m.n_states for m in self.machines))
        #: the machines compiled into linked per-state transition tables (see `compiled.py`);
        #: every hop carries the next state's one-hot memo
        self.table = CompiledMachines(self.machines, shaping_gamma=shaping_gamma, payload=self._memo or None)
        self.offsets = self.table.offsets
        self.task = -1
        # The state: `_hop` is the hop that led to the current RM state (`table.start(task)`
        # after a reset) and carries its node and global index; `_obs` is the current env obs.
        # `_prev`, `_action`, `_term` keep the rest of the last transition (see
        # `last_transition`): five plain stores per step are cheaper than building a tuple.
        self._hop: Hop = self.table.start(0)
        self._obs: Any = None
        self._prev: Any = _NOT_STEPPED
        self._action: Any = None
        self._term = False
        self._last: tuple[Any, Any, Any, frozenset[str], bool] | None = None
        # Per-step fast path (see `step`): every mode check is made here, once.
        self._sum = reward_mode == "sum"
        self._dict_obs = obs_mode == "dict"
        #: labels reported by the env under this info key are read inline (`InfoLabels`)
        self._info_key = label.key if type(label) is InfoLabels else None
        self._starts = [self.table.start(t) for t in range(len(self.machines))]
        self._random_tasks = task_schedule == "random"

    def _setup_observations(self, base: gym.Space, n: int) -> None:  # type: ignore[type-arg]
        """The augmented observation space for `n` machine states, and the one-hot tables."""
        # The one-hot tables live in one slotted object, not in attributes of the wrapper:
        # CPython 3.11 keeps instance attributes inline (fast specialised loads and stores on
        # the per-step path) only up to 30 names per class, set in the same order.
        self._codec = _OneHotTables(base, n, spaces.flatdim(base) if self.obs_mode == "onehot" else 0)
        # One-hot encodings of integer Box observations, per global RM state, keyed by the obs
        # bytes; an empty list disables the memo (continuous or huge observation spaces). Only
        # observations of the declared dtype and shape are memoised (checked on a miss, see
        # `_remember`), so a key's bytes always mean the same values.
        self._memo: list[dict[bytes, np.ndarray]] = []
        if self.obs_mode == "dict":
            self.observation_space = spaces.Dict({"obs": base, "rm": spaces.Discrete(n)})
        elif self.obs_mode == "onehot":
            dim = self._codec.k + n
            self.observation_space = spaces.Box(-np.inf, np.inf, shape=(dim,), dtype=np.float32)
            if isinstance(base, spaces.Box) and _finite_int_box(base, n):
                self._memo = [{} for _ in range(n)]

    # -- encoding ------------------------------------------------------------------------
    def encode(self, obs: Any, task: int, u: int) -> Any:
        """The augmented observation for env obs `obs` in state index `u` of task `task`.

        One-hot observations of integer-valued Box envs with finitely many values (the office
        world) are memoised and handed out **read-only**: they are shared and never mutated;
        `np.array(obs)` gives a writable copy. Every other one-hot observation is a fresh array.
        """
        return self._encode(obs, self.offsets[task] + u)

    def _encode(self, obs: Any, g: int) -> Any:
        if self._dict_obs:
            return {"obs": obs, "rm": g}  # a new dict every step: callers may keep observations
        if self.obs_mode == "none":
            return obs
        if self._memo:
            try:
                return self._memo[g][obs.tobytes()]
            except (AttributeError, KeyError):  # not an array, or not seen yet in state g
                return self._remember(obs, g)
        return self._onehot_of(obs, g)

    def _remember(self, obs: Any, g: int) -> np.ndarray:
        """Encode `obs` read-only, and memoise it if it has the declared dtype and shape."""
        out = self._onehot_of(obs, g)
        out.flags.writeable = False  # shared between steps: nobody may write to it
        codec = self._codec
        if type(obs) is np.ndarray and obs.dtype == codec.dtype and obs.shape == codec.shape:
            self._memo[g][obs.tobytes()] = out
        return out

    def _onehot_of(self, obs: Any, g: int) -> np.ndarray:
        codec = self._codec
        if codec.box:  # copy the row for state g and write the ravelled Box values
            out = codec.rows[g].copy()
            out[: codec.k] = obs if type(obs) is np.ndarray and obs.ndim == 1 else np.asarray(obs).reshape(-1)
            return out  # type: ignore[no-any-return]
        flat = np.asarray(spaces.flatten(self.env.observation_space, obs), dtype=np.float32)
        return np.concatenate((flat, codec.onehot[g]))

    @property
    def machine(self) -> RewardMachine:
        """The machine of the current task."""
        return self.machines[self.task]

    @property
    def u(self) -> int:
        """Index of the current state within the current task's machine."""
        return self._hop[1] - self.offsets[self.task]

    @property
    def last_transition(self) -> tuple[Any, Any, Any, frozenset[str], bool] | None:
        """`(env obs, action, next env obs, labels, env terminated)` of the last step, for CRM.

        It survives `reset` (vectorised envs reset before callbacks see the step), and is None
        before the first step.
        """
        if self._prev is _NOT_STEPPED:
            return self._last
        return (self._prev, self._action, self._obs, self._hop[7], self._term)

    # -- gym API ---------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        if options and "task" in options:
            task = int(options["task"]) % len(self.machines)
        elif self._random_tasks:
            task = int(self.np_random.integers(len(self.machines)))
        else:
            task = (self.task + 1) % len(self.machines)
        self.task = task
        if self._prev is not _NOT_STEPPED:  # keep the last transition (see `last_transition`)
            self._last = (self._prev, self._action, self._obs, self._hop[7], self._term)
            self._prev = _NOT_STEPPED
        self._hop = hop = self._starts[task]
        self._obs = obs
        info["rm/state"], info["rm/task"] = hop[6], task
        if self._dict_obs:
            return {"obs": obs, "rm": hop[1]}, info
        if hop[9] is not None:  # the one-hot memo of the initial state, as in `step`
            try:
                return hop[9][obs.tobytes()], info
            except (AttributeError, KeyError):
                pass
        return self._encode(obs, hop[1]), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step the env and the machine.

        The machine's part is one lookup in the current state's node of the compiled table
        (`self.table`, keyed by the frozenset of labels; a miss evaluates the guards once and
        keeps the answer), four stores into the env's info dict (fresh on every step, so it is
        updated in place), and the new observation. Labelling functions that return a
        frozenset take the fast path; any other iterable of labels is converted on every step.
        """
        # Written for CPython 3.11's specialising interpreter, where this path costs about as
        # much as a 1 us gridworld step: `self.env.step(...)` and a local `label`, never a
        # callable kept on self (calls of instance attributes are not specialised); no check
        # that can be made once in __init__ is made here.
        obs, env_r, terminated, truncated, info = self.env.step(action)
        if self._info_key is not None:  # `InfoLabels`: the env reported the labels itself
            try:
                hop = self._hop[0][info[self._info_key]]
            except (KeyError, TypeError):  # no such key, a new (state, labels), or not a frozenset
                hop = self._slow_hop(action, obs, info)
        else:
            label = self.label
            labels = label(self._obs, action, obs, info)
            try:
                hop = self._hop[0][labels]
            except (KeyError, TypeError):  # first time (state, labels) is seen, or not a frozenset
                hop = self.table.hop(self._hop[1], labels)
        _, g, ends, reward, reward_if_env_ends, rm_r, state, labels, extra, memo = hop
        if terminated:
            ends, reward = True, reward_if_env_ends
        if self._sum:
            reward += float(env_r)
        info["reward/env"] = env_r
        info["reward/rm"] = rm_r
        info["rm/state"] = state
        info["rm/labels"] = labels
        if extra:
            info.update(extra)
        self._prev = self._obs  # one store per line: `a, b, c, d = ...` would build a tuple
        self._obs = obs
        self._hop = hop
        self._action = action
        self._term = terminated
        if memo is not None:  # memoised one-hot of an integer Box obs, read-only (see `encode`)
            try:
                return memo[obs.tobytes()], reward, ends, truncated and not ends, info
            except (AttributeError, KeyError):  # not an array, or not seen yet in state g
                pass
        elif self._dict_obs:  # a new dict every step: callers may keep observations
            return {"obs": obs, "rm": g}, reward, ends, truncated and not ends, info
        return self._encode(obs, g), reward, ends, truncated and not ends, info

    def _slow_hop(self, action: Any, obs: Any, info: dict[str, Any]) -> Hop:
        """The hop for this step when the inline `InfoLabels` lookup missed."""
        return self.table.hop(self._hop[1], self.label(self._obs, action, obs, info))

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


# -- per-mode step variants ----------------------------------------------------------------
# `RewardMachineWrapper.step` serves every mode; the hot modes get a copy with their mode
# checks removed (~0.04 us of a ~0.45 us overhead per step on the office world). A method on
# the class, not a callable stored on the instance: CPython 3.11 specialises the former only.
# Each variant is `RewardMachineWrapper.step` with its mode fixed; keep them in sync
# (tests/envs/test_rm_modes.py checks every mode against a plain reference implementation).


class _InfoDict(RewardMachineWrapper):
    """`step` for `InfoLabels`, Dict observations, `reward_mode="rm"`."""

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, env_r, terminated, truncated, info = self.env.step(action)
        try:
            hop = self._hop[0][info[self._info_key]]  # type: ignore[index]  # a str: InfoLabels
        except (KeyError, TypeError):  # no such key, a new (state, labels), or not a frozenset
            hop = self._slow_hop(action, obs, info)
        _, g, ends, reward, reward_if_env_ends, rm_r, state, labels, extra, _ = hop
        if terminated:
            ends, reward = True, reward_if_env_ends
        info["reward/env"] = env_r
        info["reward/rm"] = rm_r
        info["rm/state"] = state
        info["rm/labels"] = labels
        if extra:
            info.update(extra)
        self._prev = self._obs
        self._obs = obs
        self._hop = hop
        self._action = action
        self._term = terminated
        return {"obs": obs, "rm": g}, reward, ends, truncated and not ends, info


class _InfoOneHotMemo(RewardMachineWrapper):
    """`step` for `InfoLabels`, memoised one-hot observations, `reward_mode="rm"`."""

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, env_r, terminated, truncated, info = self.env.step(action)
        try:
            hop = self._hop[0][info[self._info_key]]  # type: ignore[index]  # a str: InfoLabels
        except (KeyError, TypeError):  # no such key, a new (state, labels), or not a frozenset
            hop = self._slow_hop(action, obs, info)
        _, g, ends, reward, reward_if_env_ends, rm_r, state, labels, extra, memo = hop
        if terminated:
            ends, reward = True, reward_if_env_ends
        info["reward/env"] = env_r
        info["reward/rm"] = rm_r
        info["rm/state"] = state
        info["rm/labels"] = labels
        if extra:
            info.update(extra)
        self._prev = self._obs
        self._obs = obs
        self._hop = hop
        self._action = action
        self._term = terminated
        try:
            return memo[obs.tobytes()], reward, ends, truncated and not ends, info
        except (AttributeError, KeyError, TypeError):  # not an array, not seen yet, or no memo
            return self._encode(obs, g), reward, ends, truncated and not ends, info


def _step_variant(env: gym.Env, machines: Any, label: Any, obs_mode: Any, reward_mode: Any) -> type[RewardMachineWrapper]:
    """The class whose `step` fits these modes; `RewardMachineWrapper` for the uncommon ones.

    Bad arguments get `RewardMachineWrapper`, whose __init__ reports them.
    """
    if type(label) is not InfoLabels or reward_mode != "rm":
        return RewardMachineWrapper
    if obs_mode == "dict":
        return _InfoDict
    if isinstance(machines, RewardMachine):
        machines = [machines]
    base = env.observation_space
    if (
        obs_mode == "onehot"
        and isinstance(machines, list | tuple)
        and all(isinstance(m, RewardMachine) for m in machines)
        and isinstance(base, spaces.Box)
        and _finite_int_box(base, sum(m.n_states for m in machines))
    ):
        return _InfoOneHotMemo
    return RewardMachineWrapper
