"""Reward imputation: a reward model fit on a small labelled fraction of transitions labels the rest.

Offline RL from a dataset in which only a few transitions carry a reward: a model of the
reward is fit on the labelled ones and its predictions stand in for the missing labels, after
which any offline learner runs on the whole dataset (Konyushkova, Zolna, Aytar, Novikov,
Reed, Cabi & de Freitas, "Semi-supervised reward learning for offline reinforcement
learning", NeurIPS 2020 Offline RL Workshop, whose reward model sees about 1% of the labels).

The model regresses the reward on transition features `[obs, action, next_obs]` (discrete
actions one-hot): `method="knn"` averages the k nearest labelled transitions (the labelled
set is the whole model: it saves as arrays), `method="mlp"` fits a small MLP. `impute`
returns the labels where they are known and the predictions elsewhere.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np

from rewardlab.errors import ArrayError, ConfigError, InputError
from rewardlab.learn._mlp import MLP, fit_mlp
from rewardlab.learn.base import DemoReward, as_rows

__all__ = ["RewardImputer"]


class RewardImputer(DemoReward):
    """Reward model of transitions fit on labelled ones; see the module docstring.

    Args:
        n_actions: number of discrete actions (one-hot in the features), or 0 for no actions.
    """

    kind: ClassVar[str] = "imputed"

    def __init__(self, method: Literal["knn", "mlp"], arrays: dict[str, np.ndarray], *, dim: int, n_actions: int,
                 k: int = 3, net: MLP | None = None):  # fmt: skip
        if method not in ("knn", "mlp") or (method == "mlp" and net is None):
            raise ConfigError(f"method must be 'knn' or 'mlp' (with a net), got {method!r}")
        self.method, self.arrays, self.dim, self.n_actions, self.k, self.net = method, arrays, dim, n_actions, k, net

    def features(self, obs: Any, actions: Any, next_obs: Any) -> np.ndarray:
        """(N, 2 D + A) transition features."""
        x, y = as_rows(obs, "obs", self.dim), as_rows(next_obs, "next_obs", self.dim)
        parts = [x]
        if self.n_actions:
            if actions is None:
                raise ConfigError("this reward model was fit on actions: pass actions")
            a = np.asarray(actions, dtype=np.int64).reshape(-1)
            if a.shape != (len(x),) or (a < 0).any() or (a >= self.n_actions).any():
                raise ArrayError("actions", f"need {len(x)} action ids in [0, {self.n_actions})")
            parts.append(np.eye(self.n_actions)[a])
        return np.hstack([*parts, y])

    @classmethod
    def fit(cls, obs: Any, actions: Any, next_obs: Any, rewards: Any, labelled: Any, *, n_actions: int = 0,
            method: Literal["knn", "mlp"] = "knn", k: int = 3, epochs: int = 200, seed: int = 0) -> RewardImputer:  # fmt: skip
        """Fit on the transitions where `labelled` (bool mask or indices) is set; `rewards` is read only there."""
        o = np.asarray(obs, dtype=np.float64)
        if o.ndim != 2:
            raise ArrayError("obs", f"need (N, D) observation features, got shape {o.shape}")
        probe = cls("knn", {}, dim=o.shape[1], n_actions=n_actions)  # only for its `features`
        feats = probe.features(obs, actions, next_obs)
        mask = np.zeros(len(feats), dtype=bool)
        mask[np.asarray(labelled)] = True
        r = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if r.shape != (len(feats),):
            raise ArrayError("rewards", f"need one reward per transition ({len(feats)}), got {r.shape}")
        if mask.sum() < max(k, 1) or not np.isfinite(r[mask]).all():
            raise ConfigError(f"need at least {max(k, 1)} labelled transitions with finite rewards, got {int(mask.sum())}")
        arrays = {"x": feats[mask], "y": r[mask]}
        if method == "mlp":
            net = fit_mlp(feats[mask], r[mask], hidden=(64, 64), epochs=epochs, seed=seed)
            return cls("mlp", arrays, dim=probe.dim, n_actions=n_actions, k=k, net=net)
        return cls(method, arrays, dim=probe.dim, n_actions=n_actions, k=k)

    def predict(self, obs: Any, actions: Any, next_obs: Any) -> np.ndarray:
        """(N,) predicted rewards."""
        f = self.features(obs, actions, next_obs)
        if self.method == "mlp" and self.net is not None:
            return self.net(f)[:, 0]
        x, y = self.arrays["x"], self.arrays["y"]
        out = np.empty(len(f))
        for start in range(0, len(f), 1024):  # (chunk, labelled) distances stay small
            d2 = ((f[start : start + 1024, None, :] - x[None]) ** 2).sum(-1)
            near = np.argsort(d2, axis=1)[:, : self.k]
            out[start : start + 1024] = y[near].mean(1)
        return out

    def impute(self, obs: Any, actions: Any, next_obs: Any, rewards: Any, labelled: Any) -> np.ndarray:
        """The known rewards where `labelled`, the predictions elsewhere."""
        out = self.predict(obs, actions, next_obs)
        mask = np.zeros(len(out), dtype=bool)
        mask[np.asarray(labelled)] = True
        out[mask] = np.asarray(rewards, dtype=np.float64).reshape(-1)[mask]
        return out

    def reward(self, obs: Any, next_obs: Any, actions: Any = None) -> np.ndarray:
        return self.predict(obs, actions, next_obs)

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        arrays = dict(self.arrays)
        if self.net is not None:
            arrays.update(self.net.arrays("net"))
        return {"method": self.method, "dim": self.dim, "n_actions": self.n_actions, "k": self.k}, arrays

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], *, source: str) -> RewardImputer:
        if "x" not in arrays or "y" not in arrays:
            raise InputError("saved reward imputer misses its labelled set", source=source)
        net = MLP.from_arrays("net", arrays, source=source) if config["method"] == "mlp" else None
        return cls(config["method"], {"x": arrays["x"], "y": arrays["y"]}, dim=int(config["dim"]),
                   n_actions=int(config["n_actions"]), k=int(config["k"]), net=net)  # fmt: skip
