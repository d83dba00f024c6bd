"""Advantages and credit assignment: from rewards to what the policy gradient multiplies.

Framework-agnostic: numpy in, numpy out; torch tensors are accepted at the edge and returned as
torch tensors (torch is never imported unless one arrives). Float64 inside, explicit epsilons.
Every estimator is a small pure function citing its paper and equation. See docs/credit.md
(and docs/diffusion.md for credit over denoising steps and pixels).
"""

from rewardlab.credit.diffusion import (
    backward_credit,
    backward_stage,
    backward_step_mask,
    cosine_progress,
    cosine_progress_advantages,
    cosine_progress_credit,
    noisy_step_advantages,
    pixel_advantages,
    spatial_advantages,
)
from rewardlab.credit.grouping import Packed, from_results, pack, steps_from_results
from rewardlab.credit.outcome import a_hpo, dr_grpo, gdpo, grpo, hpo, reinforce_pp, rloo
from rewardlab.credit.steps import gae, process_advantages, segment_advantages, steps_to_tokens
from rewardlab.credit.tokens import length_weights, redistribute, redistribute_deltas, to_tokens
from rewardlab.credit.trajectory import DenoisingTrajectory
from rewardlab.credit.tree import tree_advantages
from rewardlab.credit.turns import turn_advantages, turn_index, turns_to_tokens

__all__ = [
    "DenoisingTrajectory",
    "Packed",
    "a_hpo",
    "backward_credit",
    "backward_stage",
    "backward_step_mask",
    "cosine_progress",
    "cosine_progress_advantages",
    "cosine_progress_credit",
    "dr_grpo",
    "from_results",
    "gae",
    "gdpo",
    "grpo",
    "hpo",
    "length_weights",
    "noisy_step_advantages",
    "pack",
    "pixel_advantages",
    "process_advantages",
    "redistribute",
    "redistribute_deltas",
    "reinforce_pp",
    "rloo",
    "segment_advantages",
    "spatial_advantages",
    "steps_from_results",
    "steps_to_tokens",
    "to_tokens",
    "tree_advantages",
    "turn_advantages",
    "turn_index",
    "turns_to_tokens",
]
