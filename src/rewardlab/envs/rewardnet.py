"""A learned preference reward as an `imitation` `RewardNet` (imitation 1.0, HumanCompatibleAI).

imitation's reward nets take `(state, action, next_state, done)` batches of preprocessed
tensors (Discrete observations and actions one-hot, Box ones as floats) and return (B,) rewards;
its `RewardVecEnvWrapper(venv, net.predict_processed)` trains SB3 agents on them. This adapter
puts a `PreferenceRewardModel` behind that interface:

    net = PreferenceRewardNet(env.observation_space, env.action_space, model,
                              featurize=lambda s, a, s2, d: s2)   # the cell entered, one-hot
    venv = RewardVecEnvWrapper(venv, net.predict_processed)

The model's torch members are shared (training the net through imitation trains them); a
linear model's weight array is shared too: `net.weights` is a float64 parameter over the same
memory as `model.weights`, so training the net trains the model and `model.save()` stores the
trained weights.

What works of imitation 1.0.1 here: it pins gymnasium 0.29 and SB3 2.2 and is installed
`--no-deps` next to newer ones. `rewards.reward_nets`, `rewards.reward_wrapper`, `data.rollout`,
`data.types`, `algorithms.bc`, `algorithms.density` and `algorithms.adversarial.{gail,airl}`
import (GAIL and AIRL need tensorboard, which the dev set-up installs); `algorithms.dagger`,
`data.huggingface_utils` (jsonpickle), `policies.serialize` (huggingface_sb3) and the `scripts`
(sacred) do not. `tests/envs/test_rewardnet.py` checks both lists and runs GAIL through this net.
"""

from __future__ import annotations

from collections.abc import Callable

try:
    import gymnasium as gym
    import numpy as np
    import torch
    from imitation.rewards.reward_nets import RewardNet
    from torch import nn
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.envs.preferences import PreferenceRewardModel

__all__ = ["PreferenceRewardNet"]

Featurize = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def _next_state(state: torch.Tensor, action: torch.Tensor, next_state: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
    return next_state


class PreferenceRewardNet(RewardNet):
    """imitation `RewardNet` whose reward is the ensemble mean of a `PreferenceRewardModel`.

    Args:
        observation_space: the env's observation space (imitation preprocesses with it).
        action_space: the env's action space.
        model: the learned reward.
        featurize: `(state, action, next_state, done)` preprocessed tensors -> (B, F) features,
            the same features the model was trained on; default: `next_state`.
    """

    def __init__(self, observation_space: gym.Space, action_space: gym.Space,  # type: ignore[type-arg]
                 model: PreferenceRewardModel, *, featurize: Featurize = _next_state):
        super().__init__(observation_space, action_space, normalize_images=False)
        self.featurize = featurize
        self.members = nn.ModuleList(model.members)
        # one array for both: an optimizer's in-place step on the parameter is the model's update
        model.weights = np.ascontiguousarray(model.weights, dtype=np.float64)
        self.weights = nn.Parameter(torch.from_numpy(model.weights), requires_grad=not model.hidden)
        self.hidden = model.hidden

    def forward(self, state: torch.Tensor, action: torch.Tensor, next_state: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
        feats = self.featurize(state, action, next_state, done).to(torch.float32)  # (B, F)
        if self.hidden:
            return torch.stack([m(feats).squeeze(-1) for m in self.members]).mean(0)
        return feats @ self.weights.mean(0).to(torch.float32)

    def extra_repr(self) -> str:
        kind = f"MLP x{len(self.members)}" if self.hidden else f"linear x{self.weights.shape[0]}"
        return f"{kind}, features={self.weights.shape[1]}"
