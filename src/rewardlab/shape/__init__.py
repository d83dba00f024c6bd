"""Group-level reward transforms: normalisation, process-reward shaping, zero-variance rescues.

Framework-agnostic: numpy in, numpy out (torch tensors in, torch tensors out), float64 inside.
Shapes are explicit: `(groups, samples)` for group transforms, `(batch, steps)` for process
rewards, with boolean masks marking entries that hold a score. See docs/credit.md.
"""

from rewardlab.shape.normalize import center, hero, minmax, normalize_then_sum, rank, zscore
from rewardlab.shape.potential import potential_shaping
from rewardlab.shape.process import (
    aggregate_steps,
    clip_steps,
    delta_steps,
    gate_process,
    min_form,
    par,
)
from rewardlab.shape.zero_variance import (
    Drop,
    Mark,
    Rerank,
    Rescue,
    RescueResult,
    bradley_terry_vs_anchors,
    rescue,
    zero_variance,
)

__all__ = [
    "Drop",
    "Mark",
    "Rerank",
    "Rescue",
    "RescueResult",
    "aggregate_steps",
    "bradley_terry_vs_anchors",
    "center",
    "clip_steps",
    "delta_steps",
    "gate_process",
    "hero",
    "min_form",
    "minmax",
    "normalize_then_sum",
    "par",
    "potential_shaping",
    "rank",
    "rescue",
    "zero_variance",
    "zscore",
]
