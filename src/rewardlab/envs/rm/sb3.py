"""Counterfactual experiences (CRM) in Stable-Baselines3 replay buffers.

Toro Icarte et al. (JAIR 2022), sec. 5.1: one env transition `(s, a, s')` and its labels say what
every reward-machine state would have done, so each real step is stored once per live
(task, RM state). With SB3:

    env = RewardMachineWrapper(OfficeWorld(), office_task("coffee"), office_labels,
                               obs_mode="onehot", counterfactuals=True)
    model = DQN("MlpPolicy", env, replay_buffer_class=CounterfactualReplayBuffer)

`RewardMachineWrapper(counterfactuals=True)` puts each step's experiences in
`info["rm/counterfactual"]` (`RewardMachineWrapper.counterfactual_batch`), inside the env, so it
works in every VecEnv (`DummyVecEnv`, `SubprocVecEnv`: the info travels back with the step) and
is right across VecEnv auto-resets (the experiences are built before the reset). The buffer
stores those experiences in place of the real transition, which is one of them. Rewards are the
wrapper's own (shaped when it shapes); `VecNormalize`'s reward scaling is not applied to them.
"""

from __future__ import annotations

from typing import Any

try:
    import numpy as np
    from stable_baselines3.common.buffers import DictReplayBuffer, ReplayBuffer
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.errors import InputError, SpecError

__all__ = ["CounterfactualDictReplayBuffer", "CounterfactualReplayBuffer"]

#: the info key where `RewardMachineWrapper(counterfactuals=True)` puts a step's experiences
COUNTERFACTUAL_KEY = "rm/counterfactual"


def _stack_envs(batches: list[dict[str, Any]], key: str) -> Any:
    """`batches[i][key]` of every env, stacked to (n_cf, n_envs, ...) (dicts: per sub-key)."""
    first = batches[0][key]
    if isinstance(first, dict):
        return {k: np.stack([b[key][k] for b in batches], axis=1) for k in first}
    return np.stack([b[key] for b in batches], axis=1)


def _row(value: Any, j: int) -> Any:
    return {k: v[j] for k, v in value.items()} if isinstance(value, dict) else value[j]


class _Counterfactual:
    """`add` that stores every env's counterfactual experiences instead of its real transition."""

    n_envs: int

    def _check_options(self, optimize_memory_usage: bool) -> None:
        if optimize_memory_usage:
            raise SpecError(
                "counterfactual replay buffers store several next observations per step; "
                "pass optimize_memory_usage=False"
            )

    def _experiences(self, infos: list[dict[str, Any]]) -> list[dict[str, Any]]:
        batches = [info.get(COUNTERFACTUAL_KEY) for info in infos]
        missing = [i for i, b in enumerate(batches) if b is None]
        if missing:
            raise InputError(
                f"env(s) {missing} reported no {COUNTERFACTUAL_KEY!r} in their step info; wrap each env in "
                "RewardMachineWrapper(..., counterfactuals=True)"
            )
        sizes = {len(b["reward"]) for b in batches}  # type: ignore[index]
        if len(sizes) != 1:
            raise InputError(f"envs report different numbers of counterfactual experiences {sorted(sizes)}; "
                             "every env of one VecEnv needs the same reward machines")
        return batches  # type: ignore[return-value]

    def add(self, obs: Any, next_obs: Any, action: Any, reward: Any, done: Any, infos: list[dict[str, Any]]) -> None:
        """Store, for each env, one experience per live (task, RM state) of its step."""
        batches = self._experiences(infos)
        stacked = {k: _stack_envs(batches, k) for k in ("obs", "next_obs", "action", "reward", "done")}
        no_timeouts: list[dict[str, Any]] = [{} for _ in range(self.n_envs)]  # CRM's `done` already leaves truncation out
        for j in range(len(batches[0]["reward"])):
            super().add(  # type: ignore[misc]
                _row(stacked["obs"], j), _row(stacked["next_obs"], j), stacked["action"][j],
                stacked["reward"][j], stacked["done"][j], no_timeouts,
            )


class CounterfactualReplayBuffer(_Counterfactual, ReplayBuffer):
    """SB3 `ReplayBuffer` for Box observations (`obs_mode` "flat" or "onehot") that stores CRM
    experiences; pass it as `replay_buffer_class` to DQN, SAC, TD3, DDPG.

    Raises:
        SpecError: `optimize_memory_usage=True` (next observations would be overwritten).
        InputError: on `add`, an env whose info has no counterfactual experiences.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        self._check_options(bool(kwargs.get("optimize_memory_usage", False)))
        super().__init__(*args, **kwargs)


class CounterfactualDictReplayBuffer(_Counterfactual, DictReplayBuffer):
    """`DictReplayBuffer` (`obs_mode="dict"`, `MultiInputPolicy`) that stores CRM experiences."""

    def __init__(self, *args: Any, **kwargs: Any):
        self._check_options(bool(kwargs.get("optimize_memory_usage", False)))
        super().__init__(*args, **kwargs)
