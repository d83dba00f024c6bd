"""What every learner of this package is: a reward of transitions, fit from demonstrations.

A `DemoReward` scores batches of transitions, `reward(obs, next_obs) -> (N,)`, over the same
observation features its demonstrations were recorded in (`DemoSet.encoding`); a learner that
measures progress also has a `potential(obs) -> (N,)`, for policy-preserving shaping
(`rewardlab.learn.shaping`). Its fitted state is a JSON config plus numpy arrays, so
`save(path)` writes an `.npz` without pickle and `load_learned(path)` reads any learner back.
"""

from __future__ import annotations

import json
import zipfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from rewardlab.envs.persist import load_state, save_state
from rewardlab.errors import ArrayError, ConfigError, InputError

__all__ = ["DemoReward", "as_rows", "load_learned"]

#: learner kind -> "module:class", read by `load_learned` (imported on use)
KINDS: dict[str, str] = {
    "temporal_distance": "rewardlab.learn.progress:TemporalDistanceProgress",
    "subtask_budgets": "rewardlab.learn.progress:SubtaskBudgetProgress",
    "drs_stages": "rewardlab.learn.stages:DrSStageReward",
    "demo_similarity": "rewardlab.learn.similarity:DemoSimilarityReward",
    "goal_baseline": "rewardlab.learn.similarity:GoalBaselineReward",
    "likelihood": "rewardlab.learn.likelihood:TrajectoryLikelihoodReward",
    "imputed": "rewardlab.learn.impute:RewardImputer",
}


def as_rows(x: Any, name: str, dim: int) -> np.ndarray:
    """`x` as an (N, dim) float64 array of finite values; a single row (dim,) becomes (1, dim)."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 1:
        a = a[None]
    if a.ndim != 2 or a.shape[1] != dim:
        raise ArrayError(name, f"need (N, {dim}) observation features, got shape {np.shape(x)}")
    if not np.isfinite(a).all():
        raise ArrayError(name, "observation features must be finite")
    return a


class DemoReward(ABC):
    """A reward fit from demonstrations; see the module docstring."""

    kind: ClassVar[str]
    dim: int

    @abstractmethod
    def reward(self, obs: Any, next_obs: Any, actions: Any = None) -> np.ndarray:
        """(N,) reward of each transition `obs[i] -> next_obs[i]` (both (N, dim)); `actions` (N,)
        only for learners fit on actions (the others ignore them)."""

    def potential(self, obs: Any) -> np.ndarray:
        """(N,) progress of each state; learners without one raise ConfigError."""
        raise ConfigError(f"the {self.kind} reward has no progress potential; shape with a progress learner instead")

    @property
    def has_potential(self) -> bool:
        return type(self).potential is not DemoReward.potential

    @abstractmethod
    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The fitted state: a JSON-able config and named arrays."""

    @classmethod
    @abstractmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], *, source: str) -> DemoReward:
        """The learner `state()` described; InputError naming `source` when it does not fit."""

    def save(self, path: str | Path) -> None:
        """Write the learner to an `.npz` file (`load_learned` or `type(self).load` reads it)."""
        config, arrays = self.state()
        save_state(path, f"learn.{self.kind}", config, arrays)

    @classmethod
    def load(cls, path: str | Path) -> DemoReward:
        """The learner of this kind saved at `path`."""
        config, arrays = load_state(path, f"learn.{cls.kind}")
        try:
            return cls.from_state(config, arrays, source=str(path))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"saved {cls.kind} learner is incomplete: {exc!r}", source=str(path)) from exc


def load_learned(path: str | Path) -> DemoReward:
    """Any learner saved by `DemoReward.save`, whatever its kind."""
    import importlib

    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["__rewardlab__"])) if "__rewardlab__" in data.files else {}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(f"cannot read a saved learner: {exc}", source=str(path)) from exc
    kind = str(header.get("kind", ""))
    target = KINDS.get(kind.removeprefix("learn."))
    if not kind.startswith("learn.") or target is None:
        raise InputError(f"not a saved demonstration learner (kind {kind or 'missing'!r}); kinds: {sorted(KINDS)}",
                         source=str(path))  # fmt: skip
    module, _, name = target.partition(":")
    cls: type[DemoReward] = getattr(importlib.import_module(module), name)
    return cls.load(path)
