"""Batched reward wrappers for Stable-Baselines3 VecEnvs: intrinsic bonuses and learned rewards.

The per-env Gymnasium wrappers (`IntrinsicRewardWrapper`, `LearnedRewardWrapper`) score one
transition per call; these score a whole VecEnv step in one call to the bonus or model (one
torch forward for N envs), and train a bonus on the batch. Both see the true next observation
of an env that just finished an episode (`info["terminal_observation"]`, where SB3's VecEnvs
keep it after the automatic reset), never the first observation of the next episode.

    venv = IntrinsicRewardVecWrapper(make_vec_env(...), RNDBonus(obs_dim), schedule=DecaySchedule(steps=50_000))
    model = PPO("MlpPolicy", venv)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    import numpy as np
    from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.envs.intrinsic import DecaySchedule, IntrinsicBonus
from rewardlab.envs.preferences import PreferenceRewardModel
from rewardlab.errors import InputError

__all__ = ["IntrinsicRewardVecWrapper", "LearnedRewardVecWrapper", "next_observations"]


def _flat(obs: Any) -> np.ndarray:
    if isinstance(obs, dict):
        raise InputError("Dict observations need a featurize function that maps them to (n_envs, F) arrays")
    return np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)


def next_observations(obs: Any, dones: np.ndarray, infos: list[dict[str, Any]]) -> Any:
    """The observations each env reached on this step: `obs`, with the terminal observation of
    every env that finished an episode (SB3 VecEnvs return the next episode's first one)."""
    if not dones.any():
        return obs
    if isinstance(obs, dict):
        out = {k: np.array(v) for k, v in obs.items()}
        for i in np.flatnonzero(dones):
            for k in out:
                out[k][i] = infos[i]["terminal_observation"][k]
        return out
    out_arr = np.array(obs)
    for i in np.flatnonzero(dones):
        out_arr[i] = infos[i]["terminal_observation"]
    return out_arr


class TransitionVecWrapper(VecEnvWrapper):
    """Keeps the previous observations and the actions, so `step_wait` sees whole transitions
    (the base of every wrapper here that rewards a transition, and of `learn.vec`'s)."""

    def __init__(self, venv: VecEnv):
        super().__init__(venv)
        self._obs: Any = None
        self._actions: np.ndarray | None = None

    def reset(self) -> Any:
        self._obs = self.venv.reset()
        return self._obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions
        self.venv.step_async(actions)

    def _transition(self) -> tuple[Any, np.ndarray, Any, np.ndarray, np.ndarray, list[dict[str, Any]], Any]:
        """`(obs, actions, next_obs, rewards, dones, infos, returned obs)` of the step just taken."""
        obs, rewards, dones, infos = self.venv.step_wait()
        prev, actions = self._obs, self._actions
        if prev is None or actions is None:
            raise InputError("step() was called before reset(); reset the VecEnv first")
        self._obs = obs
        return prev, actions, next_observations(obs, dones, infos), rewards, dones, infos, obs


class IntrinsicRewardVecWrapper(TransitionVecWrapper):
    """Adds `schedule(t) * bonus.reward(...)` to every env's reward, batched, and trains the bonus.

    Args:
        venv: the VecEnv.
        bonus: any `IntrinsicBonus` (`CountBonus`, `HashedCountBonus`, `RNDBonus`, ...).
        schedule: the bonus weight by env step `t` (counted over every env); default `DecaySchedule()`.
        featurize: `(n_envs, ...) observations -> (n_envs, F)` what the bonus sees (default:
            flattened float32 arrays; required for Dict observations).
        learn: train the bonus on every step's batch.

    infos get `reward/env`, `reward/intrinsic` (unweighted) and `intrinsic/weight`.
    """

    def __init__(self, venv: VecEnv, bonus: IntrinsicBonus, *, schedule: DecaySchedule | None = None,
                 featurize: Callable[[Any], np.ndarray] | None = None, learn: bool = True):
        super().__init__(venv)
        self.bonus, self.schedule, self.learn = bonus, schedule or DecaySchedule(), learn
        self.featurize = featurize or _flat
        self.t = 0

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        prev, actions, nxt, rewards, dones, infos, obs = self._transition()
        f, f2 = self.featurize(prev), self.featurize(nxt)
        bonus = np.asarray(self.bonus.reward(f, actions, f2), dtype=np.float64)
        if self.learn:
            self.bonus.update(f, actions, f2)
        weight = self.schedule(self.t)
        self.t += self.num_envs
        for i, info in enumerate(infos):
            info["reward/env"], info["reward/intrinsic"], info["intrinsic/weight"] = float(rewards[i]), float(bonus[i]), weight
        return obs, (rewards + weight * bonus).astype(np.float32), dones, infos


class LearnedRewardVecWrapper(TransitionVecWrapper):
    """Replaces every env's reward with `model.reward(featurize(obs, actions, next_obs))`, batched.

    Args:
        venv: the VecEnv.
        model: a `PreferenceRewardModel` (or anything with `reward((n_envs, F)) -> (n_envs,)`).
        featurize: `(obs, actions, next_obs)` batches -> (n_envs, F) per-step features, the same
            features the model was trained on.

    infos keep the env's reward in `reward/env` and get the learned one in `reward/learned`.
    """

    def __init__(self, venv: VecEnv, model: PreferenceRewardModel,
                 featurize: Callable[[Any, np.ndarray, Any], np.ndarray]):
        super().__init__(venv)
        self.model, self.featurize = model, featurize

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        prev, actions, nxt, rewards, dones, infos, obs = self._transition()
        learned = np.asarray(self.model.reward(self.featurize(prev, actions, nxt)), dtype=np.float64).reshape(-1)
        if learned.shape != (self.num_envs,):
            raise InputError(f"the learned reward gave shape {learned.shape} for {self.num_envs} envs; "
                             "featurize must return one feature row per env")
        for i, info in enumerate(infos):
            info["reward/env"], info["reward/learned"] = float(rewards[i]), float(learned[i])
        return obs, learned.astype(np.float32), dones, infos
