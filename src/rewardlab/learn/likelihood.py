"""Likelihood of a transition under a model of expert trajectories (VIPER-style).

VIPER, Escontrela, Adeniji, Yan, Jain, Peng, Goldberg, Lee, Hafner & Abbeel, "Video Prediction
Models as Rewards for Reinforcement Learning" (NeurIPS 2023), trains an autoregressive video
model on expert videos and rewards the agent with the log-likelihood of what it sees next,

    r_t = ln p(x_{t+1} | x_{1:t})

so that the agent keeps to trajectories the expert model finds likely. On low-dimensional
states the sequence model here conditions on the last state (a first-order model of the expert
dynamics) and comes in two kinds:

- `kind="gaussian"`: a Gaussian mixture over expert pairs (s, s') (scikit-learn's EM), and
  ln p(s' | s) = ln p(s, s') - ln p(s) with p(s) the same mixture's marginal; features are
  standardised first (by the experts' mean and spread), so that a small covariance floor
  still resolves dimensions of small range (MountainCar's velocity spans 0.14);
- `kind="markov"`: for discrete states (exact feature rows, e.g. one-hot codes), transition
  counts with add-`smoothing`: p(s' | s) = (N(s, s') + k) / (N(s) + k (M + 1)) over the M expert
  states plus one slot for anything unseen; a state the experts never left is uniform.

The reward is floored at `floor` (default ln 1e-6) so one unseen transition cannot dominate a
return; VIPER's exploration bonus is left to an intrinsic reward (`rewardlab.envs.intrinsic`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np

from rewardlab._lazy import require
from rewardlab.errors import ConfigError, InputError
from rewardlab.learn.base import DemoReward, as_rows
from rewardlab.learn.demos import DemoSet

__all__ = ["TrajectoryLikelihoodReward"]


def _gauss_logpdf(x: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """(N,) ln N(x; mean, cov) for rows of x."""
    chol = np.linalg.cholesky(cov)
    z = np.linalg.solve(chol, (x - mean).T)  # (D, N)
    logdet = 2.0 * np.log(np.diag(chol)).sum()
    return -0.5 * ((z**2).sum(0) + logdet + x.shape[1] * np.log(2 * np.pi))  # type: ignore[no-any-return]


def _mixture_logpdf(x: np.ndarray, weights: np.ndarray, means: np.ndarray, covs: np.ndarray) -> np.ndarray:
    parts = np.stack([np.log(w) + _gauss_logpdf(x, m, c) for w, m, c in zip(weights, means, covs, strict=True)])
    top = parts.max(0)
    return top + np.log(np.exp(parts - top).sum(0))  # type: ignore[no-any-return]


class TrajectoryLikelihoodReward(DemoReward):
    """ln p(s' | s) under a model of the expert transitions; see the module docstring."""

    kind: ClassVar[str] = "likelihood"

    def __init__(self, model: Literal["gaussian", "markov"], arrays: dict[str, np.ndarray], *, dim: int,
                 floor: float = float(np.log(1e-6)), smoothing: float = 0.1):  # fmt: skip
        if model not in ("gaussian", "markov"):
            raise ConfigError(f"kind must be 'gaussian' or 'markov', got {model!r}")
        self.model, self.arrays, self.dim, self.floor, self.smoothing = model, arrays, dim, float(floor), float(smoothing)
        if model == "markov":
            self._index = {row.tobytes(): i for i, row in enumerate(np.asarray(arrays["states"], dtype=np.float64))}

    @classmethod
    def fit(cls, demos: DemoSet, *, kind: Literal["gaussian", "markov"] = "gaussian", components: int = 4,
            smoothing: float = 0.1, seed: int = 0) -> TrajectoryLikelihoodReward:  # fmt: skip
        """Fit the expert model on every (s, s') of `demos`."""
        obs, _, nxt, _ = demos.transitions()
        if kind == "markov":
            states, inverse = np.unique(np.vstack([obs, nxt]).astype(np.float64), axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            counts = np.zeros((len(states), len(states)))
            np.add.at(counts, (inverse[: len(obs)], inverse[len(obs) :]), 1.0)
            return cls("markov", {"states": states, "counts": counts}, dim=demos.dim, smoothing=smoothing)
        if kind != "gaussian":
            raise ConfigError(f"kind must be 'gaussian' or 'markov', got {kind!r}")
        require("sklearn", needed_by="the Gaussian-mixture expert model")
        from sklearn.mixture import GaussianMixture

        both = np.vstack([obs, nxt])
        center, scale = both.mean(0), both.std(0) + 1e-8
        pairs = np.hstack([(obs - center) / scale, (nxt - center) / scale])
        k = min(components, len(pairs))
        gmm = GaussianMixture(k, covariance_type="full", reg_covar=1e-4, random_state=seed).fit(pairs)
        arrays = {"weights": gmm.weights_, "means": gmm.means_, "covariances": gmm.covariances_, "center": center,
                  "scale": scale}  # fmt: skip
        return cls("gaussian", arrays, dim=demos.dim)

    def reward(self, obs: Any, next_obs: Any, actions: Any = None) -> np.ndarray:
        """(N,) ln p(next_obs | obs), floored at `floor`."""
        x, y = as_rows(obs, "obs", self.dim), as_rows(next_obs, "next_obs", self.dim)
        if len(x) != len(y):
            raise ConfigError(f"obs and next_obs need the same number of rows, got {len(x)} and {len(y)}")
        if self.model == "markov":
            return np.asarray(np.maximum(self._markov(x, y), self.floor))
        w, m, c = self.arrays["weights"], self.arrays["means"], self.arrays["covariances"]
        d, center, scale = self.dim, self.arrays["center"], self.arrays["scale"]
        x, y = (x - center) / scale, (y - center) / scale  # ln p in standardised units: a constant shift
        joint = _mixture_logpdf(np.hstack([x, y]), w, m, c)
        marginal = _mixture_logpdf(x, w, m[:, :d], c[:, :d, :d])
        return np.asarray(np.maximum(joint - marginal, self.floor))

    def _markov(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        counts, k = self.arrays["counts"], self.smoothing
        M = len(counts)
        out = np.empty(len(x))
        for i, (a, b) in enumerate(zip(x, y, strict=True)):
            u, v = self._index.get(a.tobytes()), self._index.get(b.tobytes())
            if u is None or counts[u].sum() == 0:
                out[i] = -np.log(M + 1)  # a state the experts never left: nothing known, uniform
                continue
            n = counts[u, v] if v is not None else 0.0
            out[i] = np.log((n + k) / (counts[u].sum() + k * (M + 1)))
        return out

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return {"model": self.model, "dim": self.dim, "floor": self.floor, "smoothing": self.smoothing}, dict(self.arrays)

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], *, source: str) -> TrajectoryLikelihoodReward:
        need = ("states", "counts") if config["model"] == "markov" else ("weights", "means", "covariances", "center", "scale")
        if any(k not in arrays for k in need):
            raise InputError(f"saved {config['model']} likelihood model misses {[k for k in need if k not in arrays]}", source=source)
        return cls(config["model"], {k: arrays[k] for k in need}, dim=int(config["dim"]), floor=float(config["floor"]),
                   smoothing=float(config["smoothing"]))  # fmt: skip
