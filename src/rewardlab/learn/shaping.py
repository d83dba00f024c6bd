"""Learned rewards inside Gymnasium and Stable-Baselines3 environments, and shaping that keeps the optimum.

Three ways to use a `DemoReward` while an agent trains (`mode`):

- `"shape"`: the env's own reward plus potential-based shaping from the learner's progress,
  `r + scale * (gamma * Phi(s') - Phi(s))` with Phi(s') = 0 when the episode really ends
  (terminated, not truncated). Ng, Harada & Russell (1999, "Policy invariance under reward
  transformations", Theorem 1) show that adding such a term leaves the optimal policies
  unchanged for any potential, so a poor progress estimate can slow learning but cannot change
  what is optimal; the terminal potential must be 0 in episodic tasks (Grzes 2017), as in
  `rewardlab.shape.potential`. Needs a learner with a potential (`has_potential`), and the
  agent's discount as `gamma`.
- `"add"`: `r + scale * learned(s, s')`. Does NOT keep the optimal policy in general: a learned
  reward that pays for a state can make loitering there worth more than finishing (DrS's stage
  reward, VIPER's likelihood and the similarity rewards are state rewards of this kind).
- `"replace"`: the learned reward alone (imitation without the env's reward, as VIPER and the
  similarity papers train). The optimum is whatever the learned reward's optimum is.

`DemoRewardWrapper` wraps one Gymnasium env; `rewardlab.learn.vec.DemoRewardVecWrapper` a
Stable-Baselines3 VecEnv (one batched call per step, the true terminal observation of finished
envs). Both keep the
env's reward in `info["reward/env"]` and put the learned term in `info["reward/learned"]`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

try:
    import gymnasium as gym
    import numpy as np
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.errors import ConfigError
from rewardlab.learn.base import DemoReward

__all__ = ["DemoRewardWrapper", "potential_shaping_term"]

Mode = Literal["shape", "add", "replace"]
Featurize = Callable[[Any], np.ndarray]



def potential_shaping_term(learner: DemoReward, obs: np.ndarray, next_obs: np.ndarray, terminated: np.ndarray, *,
                           gamma: float) -> np.ndarray:  # fmt: skip
    """(N,) `gamma * Phi(s') * (1 - terminated) - Phi(s)` (Ng et al. 1999; Phi(terminal) = 0)."""
    if not 0.0 <= gamma <= 1.0:
        raise ConfigError(f"gamma must be in [0, 1], got {gamma}")
    phi, phi_next = learner.potential(obs), learner.potential(next_obs)
    return np.asarray(gamma * phi_next * (1.0 - np.asarray(terminated, dtype=np.float64)) - phi)


def check_mode(learner: DemoReward, mode: str, gamma: float | None) -> None:
    if mode not in ("shape", "add", "replace"):
        raise ConfigError(f"mode must be 'shape', 'add' or 'replace', got {mode!r}")
    if mode == "shape" and not learner.has_potential:
        raise ConfigError(f"the {learner.kind} reward has no potential: use mode='add' or 'replace', or a progress learner")
    if mode == "shape" and gamma is None:
        raise ConfigError("mode='shape' needs the agent's discount gamma (shaping keeps the optimum only with it)")


class DemoRewardWrapper(gym.Wrapper):
    """One env's reward with a learned term; see the module docstring.

    Args:
        env: the env.
        learner: the fitted reward.
        mode: "shape", "add" or "replace".
        gamma: the agent's discount (required for "shape").
        scale: weight of the learned term.
        featurize: observation -> (D,) features the learner was fit on (default: flattened floats).
    """

    def __init__(self, env: gym.Env, learner: DemoReward, *, mode: Mode = "shape", gamma: float | None = None,
                 scale: float = 1.0, featurize: Featurize | None = None):  # fmt: skip
        super().__init__(env)
        check_mode(learner, mode, gamma)
        self.learner, self.mode, self.gamma, self.scale = learner, mode, gamma, scale
        self.featurize = featurize or (lambda o: np.asarray(o, dtype=np.float64).reshape(-1))
        self._last: np.ndarray | None = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._last = self.featurize(obs)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._last is None:
            raise ConfigError("step() before reset(): reset the env first")
        obs, reward, terminated, truncated, info = self.env.step(action)
        x, y = self._last[None], self.featurize(obs)[None]
        term = learned_term(self.learner, self.mode, x, y, np.array([action]), np.array([terminated]), self.gamma)[0]
        self._last = y[0]
        info["reward/env"], info["reward/learned"] = float(reward), float(term)
        total = term if self.mode == "replace" else float(reward) + self.scale * term
        return obs, float(total), terminated, truncated, info


def learned_term(learner: DemoReward, mode: str, x: np.ndarray, y: np.ndarray, actions: np.ndarray, terminated: np.ndarray,
             gamma: float | None) -> np.ndarray:  # fmt: skip
    if mode == "shape":
        return potential_shaping_term(learner, x, y, terminated, gamma=float(gamma or 0.0))
    return np.asarray(learner.reward(x, y, actions), dtype=np.float64).reshape(-1)
