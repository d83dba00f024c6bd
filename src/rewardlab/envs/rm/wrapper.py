"""`RewardMachineWrapper`: run reward machines beside any Gymnasium env.

    env = RewardMachineWrapper(OfficeWorld(), office_task("coffee"), office_labels)
    obs, info = env.reset(seed=0)          # obs = {"obs": [x, y], "rm": 0}
    obs, r, terminated, truncated, info = env.step(1)
    info["reward/env"], info["reward/rm"], info["rm/state"], info["rm/labels"]

The labelling function `label(obs, action, next_obs, info) -> frozenset[str]` says which events
happened. `terminated` is set when the machine accepts or rejects (or the env terminates);
time limits stay `truncated`. Observations carry the machine state as `obs_mode` says (see
`rewardlab.envs.rm.observations`): a `Dict`, a flat Box with a one-hot RM code, a one-hot Box
of every component or of the whole env obs (tabular envs, for MLP policies), or the env obs alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

try:
    import gymnasium as gym
    import numpy as np
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.envs.rm.compiled import CompiledMachines, Hop
from rewardlab.envs.rm.labels import InfoLabels, LabelFn
from rewardlab.envs.rm.machine import RewardMachine
from rewardlab.envs.rm.observations import ObsCodec, make_codec
from rewardlab.errors import SpecError

__all__ = ["RewardMachineWrapper"]


class _NotStepped:
    """`_prev` until the first step after a reset; one object, kept across pickling."""

    def __reduce__(self) -> str:
        return "_NOT_STEPPED"


_NOT_STEPPED = _NotStepped()


class RewardMachineWrapper(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Adds reward machines to an env: RM reward, RM state in the observation, RM termination.

    Args:
        env: any Gymnasium env.
        machines: one machine, or several tasks (multi-task: one task per episode).
        label: the labelling function.
        obs_mode: `"dict"` (default), `"flat"` (flattened env obs + one-hot RM state, float32
            Box with the env's bounds), `"onehot"` (one-hot of every env value and of the RM
            state, float32 Box in [0, 1]; discrete observation spaces only), `"joint"` (one
            unit per value of the whole env obs, e.g. per grid cell, and the one-hot RM state;
            small discrete spaces, the code on which SB3's PPO learns the office world) or `"none"`.
        reward_mode: `"rm"` (the agent gets the machine's reward; the env's is in info) or
            `"sum"` (env reward + RM reward).
        task_schedule: `"cycle"` (T1, T2, ... one per episode, as in the paper; `reset(seed=...)`
            restarts the cycle at T1) or `"random"` (drawn from the seeded `np_random`);
            `reset(options={"task": i})` picks one explicitly.
        shaping_gamma: when set, add potential-based shaping gamma*Phi(u') - Phi(u) with
            Phi = -V from value iteration on each machine (info keeps the unshaped reward).
        counterfactuals: when True, every step's info carries `"rm/counterfactual"`: the
            experiences of every (task, RM state) on this step's labels (`counterfactual_batch`),
            which `rewardlab.envs.rm.sb3.CounterfactualReplayBuffer` stores (CRM).
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        machines: RewardMachine | Sequence[RewardMachine],
        label: LabelFn,
        *,
        obs_mode: Literal["dict", "flat", "onehot", "joint", "none"] = "dict",
        reward_mode: Literal["rm", "sum"] = "rm",
        task_schedule: Literal["cycle", "random"] = "cycle",
        shaping_gamma: float | None = None,
        counterfactuals: bool = False,
    ):
        # recorded so that `env.spec` can rebuild the wrapper (gymnasium's own wrappers do this)
        gym.utils.RecordConstructorArgs.__init__(
            self, machines=machines, label=label, obs_mode=obs_mode, reward_mode=reward_mode,
            task_schedule=task_schedule, shaping_gamma=shaping_gamma, counterfactuals=counterfactuals,
        )
        gym.Wrapper.__init__(self, env)
        self.machines = [machines] if isinstance(machines, RewardMachine) else list(machines)
        if not self.machines or not all(isinstance(m, RewardMachine) for m in self.machines):
            raise SpecError("RewardMachineWrapper needs one RewardMachine or a non-empty sequence of them")
        if reward_mode not in ("rm", "sum"):
            raise SpecError(f"reward_mode must be rm|sum, got {reward_mode!r}")
        if task_schedule not in ("cycle", "random"):
            raise SpecError(f"task_schedule must be cycle|random, got {task_schedule!r}")
        self.label, self.obs_mode, self.reward_mode, self.task_schedule = label, obs_mode, reward_mode, task_schedule
        self.shaping_gamma, self.counterfactuals = shaping_gamma, counterfactuals
        #: encodes (env obs, global RM state) as this wrapper's observations
        self.codec: ObsCodec = make_codec(obs_mode, env.observation_space, sum(m.n_states for m in self.machines))
        self.observation_space = self.codec.space
        self.task = -1
        # The state: `_hop` is the hop that led to the current RM state (`table.start(task)`
        # after a reset) and carries its node and global index; `_obs` is the current env obs.
        # `_prev`, `_action`, `_term` keep the rest of the last transition (see
        # `last_transition`): five plain stores per step are cheaper than building a tuple.
        self._obs: Any = None
        self._prev: Any = _NOT_STEPPED
        self._action: Any = None
        self._term = False
        self._last: tuple[Any, Any, Any, frozenset[str], bool] | None = None
        self._sum = reward_mode == "sum"
        self._dict_obs = obs_mode == "dict"
        #: labels reported by the env under this info key are read inline (`InfoLabels`)
        self._info_key = label.key if type(label) is InfoLabels else None
        self._random_tasks = task_schedule == "random"
        self._compile()

    def _compile(self) -> None:
        """Build the transition table (also after unpickling: it is not pickled)."""
        #: the machines compiled into linked per-state transition tables (see `compiled.py`)
        # every hop carries the next state's observation memo (`ObsCodec.memo`), read in `step`
        self.table = CompiledMachines(self.machines, shaping_gamma=self.shaping_gamma, payload=self.codec.memo)
        self.offsets = self.table.offsets
        self._starts = [self.table.start(t) for t in range(len(self.machines))]
        self._hop: Hop = self._starts[max(self.task, 0)]

    def __getstate__(self) -> dict[str, Any]:
        # The table is a graph of nodes and hops rebuilt from the machines in microseconds;
        # the current state is kept as its global index and labels.
        state = {k: v for k, v in self.__dict__.items() if k not in ("table", "_starts", "_hop")}
        state["_at"] = (self._hop[1], self._hop[7])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        g, labels = state.pop("_at")
        self.__dict__.update(state)
        self._compile()
        if g != self._hop[1]:
            task, u = self.table.owner[g]
            rm = self.machines[task]
            ends = rm.is_terminal(rm.states[u])
            self._hop = (self.table.nodes[g], g, ends, 0.0, 0.0, 0.0, rm.states[u], labels, None, self.table.payload[g])

    # -- encoding ------------------------------------------------------------------------
    def encode(self, obs: Any, task: int, u: int) -> Any:
        """The augmented observation for env obs `obs` in state index `u` of task `task`."""
        return self.codec.encode(obs, self.offsets[task] + u)

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
        elif self._random_tasks:  # the env's np_random, seeded by `reset(seed=...)` above
            task = int(self.np_random.integers(len(self.machines)))
        else:  # a seed restarts the cycle, so the same seed gives the same episodes
            task = 0 if seed is not None else (self.task + 1) % len(self.machines)
        self.task = task
        if self._prev is not _NOT_STEPPED:  # keep the last transition (see `last_transition`)
            self._last = (self._prev, self._action, self._obs, self._hop[7], self._term)
            self._prev = _NOT_STEPPED
        self._hop = hop = self._starts[task]
        self._obs = obs
        info["rm/state"], info["rm/task"] = hop[6], task
        return self.codec.encode(obs, hop[1]), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step the env and the machine.

        The machine's part is one lookup in the current state's node of the compiled table
        (`self.table`, keyed by the frozenset of labels; a miss evaluates the guards once and
        keeps the answer), four stores into the env's info dict (fresh on every step, so it is
        updated in place), and the new observation from `self.codec`. Labelling functions that
        return a frozenset take the fast path; any other iterable of labels is converted.
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
        if self.counterfactuals:
            info["rm/counterfactual"] = self.counterfactual_batch(
                self._obs, action, obs, labels, env_terminated=terminated, env_reward=float(env_r)
            )
        self._prev = self._obs  # one store per line: `a, b, c, d = ...` would build a tuple
        self._obs = obs
        self._hop = hop
        self._action = action
        self._term = terminated
        if memo is not None:  # the codec's memo of state g (see `ObsCodec.memo`), inline
            try:
                return memo[obs.tobytes()].copy(), reward, ends, truncated and not ends, info
            except (AttributeError, KeyError):  # not an array, or not seen yet in state g
                pass
        elif self._dict_obs:  # a new dict every step: callers may keep observations
            return {"obs": obs, "rm": g}, reward, ends, truncated and not ends, info
        return self.codec.encode(obs, g), reward, ends, truncated and not ends, info

    def _slow_hop(self, action: Any, obs: Any, info: dict[str, Any]) -> Hop:
        """The hop for this step when the inline `InfoLabels` lookup missed."""
        return self.table.hop(self._hop[1], self.label(self._obs, action, obs, info))

    # -- counterfactuals -------------------------------------------------------------------
    def counterfactual_batch(
        self,
        obs: Any,
        action: Any,
        next_obs: Any,
        labels: frozenset[str],
        *,
        env_terminated: bool = False,
        env_reward: float = 0.0,
    ) -> dict[str, Any]:
        """Every (task, state) experience of one env transition, encoded like observations.

        Rewards are what `step` would pay from each state: the machine's (shaped when
        `shaping_gamma` is set), plus `env_reward` under `reward_mode="sum"`.

        Returns:
            A dict of stacked arrays, one row per live (task, state) in (task, state) order:
            `obs`, `next_obs` (encoded; dicts of arrays in dict mode), `action`, `reward`
            (float32), `done` (bool: the machine accepts or rejects, or the env terminated).
        """
        live = self.table.live
        nxt, reward, done = [], [], []
        for g in live:
            hop = self.table.hop(g, labels)
            nxt.append(hop[1])
            reward.append((hop[4] if env_terminated else hop[3]) + (float(env_reward) if self._sum else 0.0))
            done.append(hop[2] or env_terminated)
        codec = self.codec
        return {
            "obs": codec.encode_batch(obs, live),
            "next_obs": codec.encode_batch(next_obs, np.asarray(nxt)),
            "action": np.repeat(np.asarray(action)[None], len(live), axis=0),
            "reward": np.asarray(reward, dtype=np.float32),
            "done": np.asarray(done, dtype=bool),
        }
