"""Demonstrations: trajectories of encoded observations, saved as one `.npz` file with a loader.

A `Demo` is one trajectory: `observations` (T+1, D) float features (the state before every step
and the last one), `actions` (T,) or (T, A), the env's own `rewards` (T,), optional `stages`
(T+1,) subtask index of every state (a reward machine's state count of completed subtasks, for
the stage-aware learners) and whether it reached the goal (`success`).

File format (`DemoSet.save`, read back by `DemoSet.load`), an `.npz` written by
`rewardlab.envs.persist.save_state` under kind `"DemoSet"` (no pickle: safe to load):

    header (JSON)   env, encoding (how observations were made), source (planner or agent)
    obs             (sum_i (T_i + 1), D) float32, every demo's observations end to end
    obs_offsets     (N + 1,) int64, demo i's observations are obs[obs_offsets[i]:obs_offsets[i + 1]]
    actions         (sum_i T_i,) or (sum_i T_i, A), end to end
    rewards         (sum_i T_i,) float64
    step_offsets    (N + 1,) int64, demo i's steps are actions[step_offsets[i]:step_offsets[i + 1]]
    stages          (sum_i (T_i + 1),) int64, -1 everywhere when the task has no stages
    success         (N,) bool

A file whose offsets, lengths or dtypes disagree is an `InputError` naming the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rewardlab.envs.persist import load_state, save_state
from rewardlab.errors import ArrayError, ConfigError, InputError

__all__ = ["Demo", "DemoSet"]


@dataclass(frozen=True)
class Demo:
    """One trajectory; shapes in the module docstring."""

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    success: bool
    stages: np.ndarray | None = None

    def __post_init__(self) -> None:
        obs = np.asarray(self.observations)
        T = len(self.actions)
        if obs.ndim != 2 or len(obs) != T + 1:
            raise ArrayError("observations", f"need (T + 1, D) = ({T + 1}, D) for {T} actions, got {obs.shape}")
        if np.shape(self.rewards) != (T,):
            raise ArrayError("rewards", f"need ({T},), got {np.shape(self.rewards)}")
        if self.stages is not None and np.shape(self.stages) != (T + 1,):
            raise ArrayError("stages", f"need ({T + 1},), got {np.shape(self.stages)}")
        if not np.isfinite(obs).all():
            raise ArrayError("observations", "must be finite")

    def __len__(self) -> int:
        """Number of steps T."""
        return len(self.actions)

    def progress(self) -> np.ndarray:
        """(T + 1,) the normalised time t / T of every state (0 at the start, 1 at the end)."""
        return np.arange(len(self) + 1) / max(len(self), 1)


@dataclass(frozen=True)
class DemoSet:
    """Demonstrations of one env in one observation encoding.

    Attributes:
        demos: the trajectories.
        env: which task they come from, e.g. `"office/coffee_mail"`, `"gym/MountainCar-v0"`.
        encoding: how observations were made from env states (the reward must see the same).
        source: who produced them (`"bfs planner"`, `"energy controller"`, an agent's name).
    """

    demos: tuple[Demo, ...]
    env: str
    encoding: str
    source: str

    def __post_init__(self) -> None:
        if not self.demos:
            raise ConfigError("a DemoSet needs at least one demonstration")
        dims = {d.observations.shape[1] for d in self.demos}
        if len(dims) != 1:
            raise ArrayError("observations", f"every demo needs the same feature size, got {sorted(dims)}")

    def __len__(self) -> int:
        return len(self.demos)

    @property
    def dim(self) -> int:
        """Feature size D of the observations."""
        return int(self.demos[0].observations.shape[1])

    def successes(self) -> DemoSet:
        """The demos that reached the goal."""
        return self._with([d for d in self.demos if d.success])

    def split(self, test_fraction: float, *, seed: int = 0) -> tuple[DemoSet, DemoSet]:
        """(train, test): a seeded random split of whole demos (held-out demos for a test)."""
        if not 0.0 < test_fraction < 1.0 or len(self) < 2:
            raise ConfigError(f"need 0 < test_fraction < 1 and >= 2 demos, got {test_fraction} and {len(self)}")
        order = np.random.default_rng(seed).permutation(len(self))
        k = min(max(1, round(test_fraction * len(self))), len(self) - 1)
        return self._with([self.demos[i] for i in order[k:]]), self._with([self.demos[i] for i in order[:k]])

    def _with(self, demos: Sequence[Demo]) -> DemoSet:
        return DemoSet(tuple(demos), self.env, self.encoding, self.source)

    def transitions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`(obs, actions, next_obs, rewards)` of every step of every demo, stacked."""
        obs = np.concatenate([d.observations[:-1] for d in self.demos])
        nxt = np.concatenate([d.observations[1:] for d in self.demos])
        acts = np.concatenate([np.asarray(d.actions) for d in self.demos])
        return obs, acts, nxt, np.concatenate([np.asarray(d.rewards, dtype=np.float64) for d in self.demos])

    def save(self, path: str | Path) -> None:
        """Write the set in the format of the module docstring."""
        lengths = np.array([len(d) for d in self.demos], dtype=np.int64)
        stages = [d.stages if d.stages is not None else np.full(len(d) + 1, -1) for d in self.demos]
        arrays: dict[str, np.ndarray] = {
            "obs": np.concatenate([d.observations for d in self.demos]).astype(np.float32),
            "obs_offsets": np.concatenate([[0], np.cumsum(lengths + 1)]).astype(np.int64),
            "actions": np.concatenate([np.asarray(d.actions) for d in self.demos]),
            "rewards": np.concatenate([np.asarray(d.rewards, dtype=np.float64) for d in self.demos]),
            "step_offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            "stages": np.concatenate(stages).astype(np.int64),
            "success": np.array([d.success for d in self.demos], dtype=bool),
        }
        save_state(path, "DemoSet", {"env": self.env, "encoding": self.encoding, "source": self.source}, arrays)

    @classmethod
    def load(cls, path: str | Path) -> DemoSet:
        """The set saved at `path`; InputError naming the file when it is not a consistent DemoSet."""
        config, a = load_state(path, "DemoSet")
        need = ("obs", "obs_offsets", "actions", "rewards", "step_offsets", "stages", "success")
        missing = [k for k in need if k not in a]
        if missing:
            raise InputError(f"DemoSet file misses arrays {missing}", source=str(path))
        oo, so, n = a["obs_offsets"], a["step_offsets"], len(a["success"])
        ok = (
            a["obs"].ndim == 2 and oo.shape == so.shape == (n + 1,) and oo[0] == so[0] == 0
            and oo[-1] == len(a["obs"]) == len(a["stages"]) and so[-1] == len(a["actions"]) == len(a["rewards"])
            and np.array_equal(np.diff(oo), np.diff(so) + 1) and bool((np.diff(so) >= 0).all())
        )  # fmt: skip
        if not ok:
            raise InputError("DemoSet arrays disagree: offsets, lengths and observation rows must line up", source=str(path))
        demos = []
        for i in range(n):
            stages = a["stages"][oo[i] : oo[i + 1]]
            try:
                demos.append(Demo(a["obs"][oo[i] : oo[i + 1]].astype(np.float64), a["actions"][so[i] : so[i + 1]],
                                  a["rewards"][so[i] : so[i + 1]], bool(a["success"][i]),
                                  None if (stages < 0).all() else stages))  # fmt: skip
            except ArrayError as exc:
                raise InputError(f"demo {i}: {exc}", source=str(path)) from exc
        try:
            return cls(tuple(demos), str(config["env"]), str(config["encoding"]), str(config["source"]))
        except (KeyError, ConfigError) as exc:
            raise InputError(f"DemoSet header or demos unusable: {exc}", source=str(path)) from exc
