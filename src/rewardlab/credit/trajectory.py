"""A denoising trajectory: what a diffusion or flow sampler hands the credit rules.

A sampler that starts from noise `x_T` and ends at a sample `x_0` in `steps` denoising steps
records every state it passed through, the time of each state and, optionally, a spatial
attention map per step. The credit rules in `rewardlab.credit.diffusion` read it; nothing here
knows which model produced it, so a toy DDPM, a flow-matching model or an SD3-class pipeline
hands over the same arrays (latents or images: whatever space the policy's steps act in).

Shapes (B trajectories, K steps, a state of any shape S, a spatial map of shape M):

* `latents`: `(B, K + 1, *S)`, index 0 is the starting noise `x_T`, index K the final sample;
* `timesteps`: `(K + 1,)` the time of each state, strictly decreasing (DDPM indices `T … 0`,
  or flow times `1 … 0`), shared by the batch as samplers share a schedule;
* `attention`: `(B, K, *M)` or None; the map of step k is the one the model computed while
  taking `latents[:, k]` to `latents[:, k + 1]`. Non-negative, with some mass in every map.
* `predictions`: `(B, K, *S)` or None; the model's estimate of the final sample at step k
  (x̂_0 from the predicted noise, Tweedie's formula), which progress-based credit compares.

Bad input raises `ArrayError` (or `NonFiniteError`) naming the field, e.g. `attention: ...`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import F64, check_finite, to_numpy

__all__ = ["DenoisingTrajectory", "checked_attention", "checked_latents"]


@dataclass(frozen=True)
class DenoisingTrajectory:
    """States, times and optional attention maps of a batch of denoising runs (validated).

    Build it with `DenoisingTrajectory.of(latents, timesteps, ...)`, which accepts numpy
    arrays, lists or torch tensors and checks every field; the constructor itself takes
    already-validated float64 arrays.

    Attributes:
        latents: `(B, K + 1, *S)` states from the starting noise (index 0) to the sample (index K).
        timesteps: `(K + 1,)` strictly decreasing time of each state.
        attention: `(B, K, *M)` non-negative map per step, or None.
        predictions: `(B, K, *S)` the model's estimate of the final sample at each step (the
            x̂_0 of DDPM/DDIM, Tweedie's formula), or None.
    """

    latents: F64
    timesteps: F64
    attention: F64 | None = None
    predictions: F64 | None = None

    @classmethod
    def of(cls, latents: Any, timesteps: Any, attention: Any = None, predictions: Any = None) -> DenoisingTrajectory:
        """Validate and convert; raises `ArrayError` naming the field that is wrong."""
        lat = checked_latents(latents)
        times = to_numpy(timesteps, "timesteps", ndim=1)
        if times.shape[0] != lat.shape[1]:
            raise ArrayError("timesteps", f"need one time per state ({lat.shape[1]}), got {times.shape[0]}")
        check_finite(times, "timesteps")
        if (np.diff(times) >= 0).any():
            raise ArrayError("timesteps", "must be strictly decreasing from the noise to the sample")
        maps = None if attention is None else checked_attention(attention, (lat.shape[0], lat.shape[1] - 1))
        pred = None
        if predictions is not None:
            pred = to_numpy(predictions, "predictions")
            want = (lat.shape[0], lat.shape[1] - 1, *lat.shape[2:])
            if pred.shape != want:
                raise ArrayError("predictions", f"must be one estimate per step {want}, got shape {pred.shape}")
            check_finite(pred, "predictions")
        return cls(latents=lat, timesteps=times, attention=maps, predictions=pred)

    @property
    def batch(self) -> int:
        """Number of trajectories B."""
        return int(self.latents.shape[0])

    @property
    def steps(self) -> int:
        """Number of denoising steps K (one fewer than the states)."""
        return int(self.latents.shape[1] - 1)

    @property
    def final(self) -> F64:
        """`(B, *S)` the samples the trajectories ended at."""
        out: F64 = self.latents[:, -1]
        return out


def checked_latents(latents: Any) -> F64:
    """`(B, K + 1, *S)` finite float64 states, or `ArrayError` naming `latents`."""
    if isinstance(latents, DenoisingTrajectory):
        return latents.latents
    lat = to_numpy(latents, "latents")
    if lat.ndim < 3:
        raise ArrayError("latents", f"must be (batch, steps + 1, *state) with at least 3 axes, got shape {lat.shape}")
    if lat.shape[1] < 2:
        raise ArrayError("latents", f"need at least 2 states (noise and sample) per trajectory, got {lat.shape[1]}")
    check_finite(lat, "latents")
    return lat


def checked_attention(attention: Any, batch_steps: tuple[int, int] | None = None) -> F64:
    """`(B, K, *M)` non-negative maps with mass in each, or `ArrayError` naming `attention`."""
    if isinstance(attention, DenoisingTrajectory):
        if attention.attention is None:
            raise ArrayError("attention", "the trajectory carries no attention maps")
        return attention.attention
    maps = to_numpy(attention, "attention")
    if maps.ndim < 3 or (batch_steps is not None and maps.shape[:2] != batch_steps):
        want = "(batch, steps, *map)" if batch_steps is None else f"(batch={batch_steps[0]}, steps={batch_steps[1]}, *map)"
        raise ArrayError("attention", f"must be {want}, got shape {maps.shape}")
    batch, steps = maps.shape[:2]
    check_finite(maps, "attention")
    if (maps < 0).any():
        raise ArrayError("attention", "must be non-negative (attention weights, not logits)")
    mass = maps.reshape(batch, steps, -1).sum(axis=2)
    if (mass <= 0).any():
        b, k = (int(i) for i in np.argwhere(mass <= 0)[0])
        raise ArrayError("attention", f"the map of trajectory {b} at step {k} has no mass (all zeros)")
    return maps
