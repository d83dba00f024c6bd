"""A demonstration reward inside a Stable-Baselines3 VecEnv (see `rewardlab.learn.shaping` for the modes)."""

from __future__ import annotations

from typing import Any

try:
    import numpy as np
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.envs.vec import TransitionVecWrapper
from rewardlab.learn.base import DemoReward
from rewardlab.learn.shaping import Featurize, Mode, check_mode, learned_term

__all__ = ["DemoRewardVecWrapper"]


def _flat(obs: Any) -> np.ndarray:
    a = np.asarray(obs, dtype=np.float64)
    return a.reshape(len(a), -1)


class DemoRewardVecWrapper(TransitionVecWrapper):
    """A Stable-Baselines3 VecEnv's rewards with a learned term, one batched call per step.

    Same arguments as `DemoRewardWrapper`, with `featurize` mapping (n_envs, ...) observations
    to (n_envs, D). A finished env's term is computed on its true terminal observation.
    """

    def __init__(self, venv: Any, learner: DemoReward, *, mode: Mode = "shape", gamma: float | None = None,
                 scale: float = 1.0, featurize: Featurize | None = None):  # fmt: skip
        super().__init__(venv)
        check_mode(learner, mode, gamma)
        self.learner, self.mode, self.gamma, self.scale = learner, mode, gamma, scale
        self.featurize = featurize or _flat

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        prev, actions, reached, rewards, dones, infos, obs = self._transition()
        terminated = np.array([bool(d) and not i.get("TimeLimit.truncated", False) for d, i in zip(dones, infos, strict=True)])
        term = learned_term(self.learner, self.mode, self.featurize(prev), self.featurize(reached), actions,
                        terminated, self.gamma)  # fmt: skip
        for i, info in enumerate(infos):
            info["reward/env"], info["reward/learned"] = float(rewards[i]), float(term[i])
        total = term if self.mode == "replace" else rewards + self.scale * term
        return obs, np.asarray(total, dtype=np.float32), dones, infos
