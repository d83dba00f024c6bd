"""How `RewardMachineWrapper` shows the machine state to the agent: one codec per `obs_mode`.

    "dict"    {"obs": env obs, "rm": g}                 Dict(env space, Discrete(n))
    "flat"    [flatten(env obs), one-hot(g)]            float32 Box, the env's bounds + [0, 1]
    "onehot"  [one-hot of every env value, one-hot(g)]  float32 Box in [0, 1], discrete envs only
    "joint"   [one-hot of the whole env obs, one-hot(g)] float32 Box in [0, 1], small discrete envs
    "none"    env obs                                   the env's space

`g` is the global index of the machine state (every state of every task, laid end to end; see
`CompiledMachines`). "onehot" codes each component on its own: on a grid, the one-hot code of x,
of y and of the RM state (24 units on the office world), under which Stable-Baselines3's DQN
learns the office world (a raw coordinate is a poor input for a small MLP). "joint" codes the
env observation as one value: one unit per cell (108 on the office world) plus the RM state, so
a linear layer over it is a table of the cells. A policy over factored codes must build every
cell it acts on from conjunctions of x and y units; SB3's PPO learns office-world `coffee` within
a small budget only from the joint code (`bench/RESULTS.md`, "SB3 PPO on office-world coffee").

Every `encode` returns a new object: Gymnasium's `check_env` asks that observations returned
by `reset` and `step` never share memory, since callers keep them. Codecs are picklable.
"""

from __future__ import annotations

from typing import Any

try:
    import gymnasium as gym
    import numpy as np
    from gymnasium import spaces
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.errors import InputError, SpecError

__all__ = ["JOINT_LIMIT", "ObsCodec", "make_codec"]

OBS_MODES = ("dict", "flat", "onehot", "joint", "none")
#: most one-hot templates memoised (env values x machine states): a few MB at most
_MEMO_LIMIT = 1 << 16
#: most env observation values "joint" codes (one float32 unit each; a replay buffer stores
#: every observation at this width)
JOINT_LIMIT = 1 << 14


class ObsCodec:
    """Encodes (env obs, global RM state `g`) as the wrapper's observation.

    Attributes:
        space: the observation space of encoded observations.
        n: number of machine states (over every task).
        memo: for array encodings of envs with few observation values, one dict per state `g`
            from the env obs bytes to its encoding (a template: hand out copies); else None.
            Only observations of the declared dtype and shape enter it, so a key's bytes always
            mean the same values. The wrapper reads it inline on its per-step path.
    """

    space: gym.Space  # type: ignore[type-arg]
    memo: list[dict[bytes, np.ndarray]] | None = None

    def __init__(self, base: gym.Space, n: int):  # type: ignore[type-arg]
        self.base, self.n = base, n

    def encode(self, obs: Any, g: int) -> Any:
        """The observation of env obs `obs` in global machine state `g` (a new object)."""
        memo = self.memo
        if memo is not None and type(obs) is np.ndarray and obs.dtype == self.base.dtype and obs.shape == self.base.shape:
            key = obs.tobytes()
            found = memo[g].get(key)
            if found is None:
                found = memo[g][key] = self._compute(obs, g)
            return found.copy()
        return self._compute(obs, g)

    def _compute(self, obs: Any, g: int) -> Any:
        raise NotImplementedError

    def _enable_memo(self, values: float) -> None:
        """Memoise encodings when `values` env observations times `n` states is small."""
        if values * self.n <= _MEMO_LIMIT:
            self.memo = [{} for _ in range(self.n)]

    def encode_batch(self, obs: Any, g: np.ndarray) -> Any:
        """Observations of one env obs in each state of `g` (B,), stacked along a first axis."""
        encoded = [self.encode(obs, int(k)) for k in g]
        if isinstance(encoded[0], dict):
            return {key: np.stack([np.asarray(e[key]) for e in encoded]) for key in encoded[0]}
        return np.stack(encoded)


class _DictCodec(ObsCodec):
    def __init__(self, base: gym.Space, n: int):  # type: ignore[type-arg]
        super().__init__(base, n)
        self.space = spaces.Dict({"obs": base, "rm": spaces.Discrete(n)})

    def _compute(self, obs: Any, g: int) -> Any:
        return {"obs": obs, "rm": g}  # a new dict every step: callers may keep observations


class _NoneCodec(ObsCodec):
    def __init__(self, base: gym.Space, n: int):  # type: ignore[type-arg]
        super().__init__(base, n)
        self.space = base

    def _compute(self, obs: Any, g: int) -> Any:
        return obs


class _FlatCodec(ObsCodec):
    """`[flatten(obs), one-hot(g)]`; a Box env obs is copied in directly (no `spaces.flatten`)."""

    def __init__(self, base: gym.Space, n: int):  # type: ignore[type-arg]
        super().__init__(base, n)
        flat = spaces.flatten_space(base)
        if not isinstance(flat, spaces.Box):
            raise SpecError(f"obs_mode='flat' needs a space that flattens to a Box, got {base}; use obs_mode='dict'")
        self.k = int(np.prod(flat.shape))
        low = np.concatenate((np.asarray(flat.low, dtype=np.float32).ravel(), np.zeros(n, np.float32)))
        high = np.concatenate((np.asarray(flat.high, dtype=np.float32).ravel(), np.ones(n, np.float32)))
        self.space = spaces.Box(low, high, dtype=np.float32)
        self.box = isinstance(base, spaces.Box)
        # row g: zeros for the env part, then the one-hot code of state g
        self.rows = np.zeros((n, self.k + n), dtype=np.float32)
        self.rows[:, self.k :] = np.eye(n, dtype=np.float32)
        if isinstance(base, spaces.Box) and np.issubdtype(base.dtype, np.integer) and base.is_bounded():
            sizes = np.asarray(base.high, dtype=np.float64) - np.asarray(base.low, dtype=np.float64) + 1
            self._enable_memo(float(sizes.prod()))

    def _compute(self, obs: Any, g: int) -> np.ndarray:
        out = self.rows[g].copy()
        if self.box:
            out[: self.k] = obs if type(obs) is np.ndarray and obs.ndim == 1 else np.asarray(obs).reshape(-1)
        else:
            out[: self.k] = spaces.flatten(self.base, obs)
        return out  # type: ignore[no-any-return]


def _discrete_layout(base: gym.Space, mode: str = "onehot") -> tuple[np.ndarray, np.ndarray]:  # type: ignore[type-arg]
    """`(low, size)` per discrete component of `base`, or SpecError when it is not discrete."""
    if isinstance(base, spaces.Discrete):
        return np.array([int(base.start)]), np.array([int(base.n)])
    if isinstance(base, spaces.MultiDiscrete):
        return np.asarray(base.start, dtype=np.int64).ravel(), np.asarray(base.nvec, dtype=np.int64).ravel()
    if isinstance(base, spaces.MultiBinary):
        k = int(np.prod(base.shape))
        return np.zeros(k, np.int64), np.full(k, 2, np.int64)
    if isinstance(base, spaces.Box) and np.issubdtype(base.dtype, np.integer) and base.is_bounded():
        low = np.asarray(base.low, dtype=np.int64).ravel()
        return low, np.asarray(base.high, dtype=np.int64).ravel() - low + 1
    raise SpecError(
        f"obs_mode={mode!r} needs a discrete observation space (Discrete, MultiDiscrete, MultiBinary or a bounded "
        f"integer Box), got {base}; use obs_mode='flat' for continuous observations"
    )


class _OneHotCodec(ObsCodec):
    """One-hot code of every discrete component of the env obs, then of the machine state.

    Encodings are memoised per (obs bytes, g) when the space is small, and copied out.
    """

    def __init__(self, base: gym.Space, n: int):  # type: ignore[type-arg]
        super().__init__(base, n)
        self.low, self.size = _discrete_layout(base)
        self.starts = np.concatenate(([0], np.cumsum(self.size)[:-1])).astype(np.int64)
        self.k = int(self.size.sum())
        self.space = spaces.Box(0.0, 1.0, shape=(self.k + n,), dtype=np.float32)
        if isinstance(base, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
            self._enable_memo(float(self.size.astype(np.float64).prod()))

    def _compute(self, obs: Any, g: int) -> np.ndarray:
        values = np.asarray(obs).reshape(-1).astype(np.int64) - self.low
        if values.shape != self.low.shape or (values < 0).any() or (values >= self.size).any():
            raise InputError(f"observation {np.asarray(obs).tolist()} is outside the observation space {self.base}")
        out = np.zeros(self.k + self.n, dtype=np.float32)
        out[self.starts + values] = 1.0
        out[self.k + g] = 1.0
        return out


class _JointCodec(ObsCodec):
    """One-hot code of the env obs's index in its discrete space (C order), then of the machine state."""

    def __init__(self, base: gym.Space, n: int):  # type: ignore[type-arg]
        super().__init__(base, n)
        self.low, self.size = _discrete_layout(base, mode="joint")
        values = float(self.size.astype(np.float64).prod())
        if values > JOINT_LIMIT:
            raise SpecError(
                f"obs_mode='joint' needs one unit per observation value; {base} has {values:.0f} values "
                f"(limit {JOINT_LIMIT}); use obs_mode='onehot' (one unit per value of each component)"
            )
        self.k = int(values)
        #: number of distinct (env value, machine state) pairs: `state_index` is below it
        self.n_states = self.k * n
        self.space = spaces.Box(0.0, 1.0, shape=(self.k + n,), dtype=np.float32)
        self._enable_memo(values)

    def state_index(self, encoded: np.ndarray) -> np.ndarray:
        """`(B, k + n)` joint codes -> `(B,)` int index `value * n + g` of each (env value, machine
        state), in `[0, n_states)`: what a tabular `CountBonus` counts over a VecEnv's observations."""
        codes = np.asarray(encoded).reshape(-1, self.k + self.n)
        return codes[:, : self.k].argmax(1) * self.n + codes[:, self.k :].argmax(1)  # type: ignore[no-any-return]

    def _compute(self, obs: Any, g: int) -> np.ndarray:
        values = np.asarray(obs).reshape(-1).astype(np.int64) - self.low
        if values.shape != self.low.shape or (values < 0).any() or (values >= self.size).any():
            raise InputError(f"observation {np.asarray(obs).tolist()} is outside the observation space {self.base}")
        out = np.zeros(self.k + self.n, dtype=np.float32)
        out[int(np.ravel_multi_index(tuple(values), tuple(self.size)))] = 1.0
        out[self.k + g] = 1.0
        return out


_CODECS: dict[str, type[ObsCodec]] = {
    "dict": _DictCodec, "flat": _FlatCodec, "onehot": _OneHotCodec, "joint": _JointCodec, "none": _NoneCodec,
}


def make_codec(obs_mode: str, base: gym.Space, n: int) -> ObsCodec:  # type: ignore[type-arg]
    """The codec of `obs_mode` for env space `base` and `n` machine states.

    Raises:
        SpecError: an unknown mode, "onehot" or "joint" over a continuous space, or "joint" over
            more than `JOINT_LIMIT` observation values.
    """
    if obs_mode not in _CODECS:
        raise SpecError(f"obs_mode must be one of {OBS_MODES}, got {obs_mode!r}")
    return _CODECS[obs_mode](base, n)
