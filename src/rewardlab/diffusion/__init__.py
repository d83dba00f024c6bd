"""Diffusion and flow policies on a CPU: a toy DDPM, a noisy-latent reward model, and the reward
layer's side of a DDPO-style policy gradient with pluggable credit over steps and pixels.

Needs torch (the `models` extra). The credit rules themselves are numpy functions in
`rewardlab.credit.diffusion`; this package produces the trajectories they read and the
log-probs they weight. See docs/diffusion.md.

    from rewardlab.diffusion import ToyDiffusionConfig, train_toy_diffusion
    model = train_toy_diffusion(ToyDiffusionConfig(data="ring"))
    rollout = model.sample(64, seed=0)          # trajectories, step log-probs, attention maps

Names are imported on first use (PEP 562), so importing the package does not import torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rewardlab._lazy import exports

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from rewardlab.diffusion.ddpo import CreditInputs, CreditRule, DDPOConfig, DDPORun, train_ddpo
    from rewardlab.diffusion.noisy_rm import (
        NoisyLatentRM,
        NoisyRMConfig,
        NoisyRMReport,
        train_noisy_rm,
    )
    from rewardlab.diffusion.toy import (
        Rollout,
        ToyDenoiser,
        ToyDiffusion,
        ToyDiffusionConfig,
        train_toy_diffusion,
    )

__all__ = [
    "CreditInputs",
    "CreditRule",
    "DDPOConfig",
    "DDPORun",
    "NoisyLatentRM",
    "NoisyRMConfig",
    "NoisyRMReport",
    "Rollout",
    "ToyDenoiser",
    "ToyDiffusion",
    "ToyDiffusionConfig",
    "train_ddpo",
    "train_noisy_rm",
    "train_toy_diffusion",
]

_WHERE = {
    "CreditInputs": "rewardlab.diffusion.ddpo",
    "CreditRule": "rewardlab.diffusion.ddpo",
    "DDPOConfig": "rewardlab.diffusion.ddpo",
    "DDPORun": "rewardlab.diffusion.ddpo",
    "train_ddpo": "rewardlab.diffusion.ddpo",
    "NoisyLatentRM": "rewardlab.diffusion.noisy_rm",
    "NoisyRMConfig": "rewardlab.diffusion.noisy_rm",
    "NoisyRMReport": "rewardlab.diffusion.noisy_rm",
    "train_noisy_rm": "rewardlab.diffusion.noisy_rm",
    "Rollout": "rewardlab.diffusion.toy",
    "ToyDenoiser": "rewardlab.diffusion.toy",
    "ToyDiffusion": "rewardlab.diffusion.toy",
    "ToyDiffusionConfig": "rewardlab.diffusion.toy",
    "train_toy_diffusion": "rewardlab.diffusion.toy",
}
__getattr__, __dir__ = exports(__name__, _WHERE)
