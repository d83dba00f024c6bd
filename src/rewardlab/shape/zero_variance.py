"""Zero-variance groups: detect and count them, then rescue them with a pluggable strategy.

A group whose valid rewards are all equal (all correct, all wrong) gives every response the
same advantage, 0, under any group baseline: the compute spent sampling it teaches nothing.
DAPO (Yu et al. 2025, arXiv:2503.14476, "dynamic sampling") drops such groups; others keep them
but re-rank their responses with a secondary signal (a judge, a reward model, a Bradley-Terry
strength against an anchor pool). Each rescue here is a frozen dataclass (one per strategy),
applied by `rescue(rewards, mask, strategy)`, which always reports how many groups it touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import (
    F64,
    Bool,
    check_finite,
    group_stats,
    grouped,
    like,
    to_mask,
    to_numpy,
)

__all__ = [
    "Drop",
    "Mark",
    "Rerank",
    "Rescue",
    "RescueResult",
    "bradley_terry_vs_anchors",
    "rescue",
    "zero_variance",
]


def zero_variance(rewards: Any, mask: Any = None, *, atol: float = 0.0) -> Any:
    """`(groups,)` bool: True where a group's valid rewards are all equal (within `atol`).

    Groups with fewer than two valid entries count as zero-variance too (no comparison exists).
    """
    values, valid = grouped(rewards, mask)
    return like(_zero_variance(values, valid, atol), rewards)


def _zero_variance(values: F64, valid: Bool, atol: float) -> Bool:
    if atol < 0:
        raise ArrayError("atol", f"must be >= 0, got {atol}")
    stats = group_stats(values, valid)
    flat: Bool = (stats.constant | ((stats.high - stats.low) <= atol))[:, 0]
    return flat


@dataclass(frozen=True)
class RescueResult:
    """What a rescue did.

    Attributes:
        rewards: `(groups, samples)` rewards after the rescue.
        mask: `(groups, samples)` valid entries after the rescue (Drop clears whole groups).
        zero_variance: `(groups,)` bool, the groups that were zero-variance *before*.
        count: how many groups were zero-variance (for logs: never silently wasted).
        strategy: the rescue's name.
    """

    rewards: Any
    mask: Any
    zero_variance: Any
    count: int
    strategy: str


class Rescue(Protocol):
    """A zero-variance strategy: gets float64 rewards, mask and the flat groups, returns both."""

    @property
    def name(self) -> str: ...

    def apply(self, rewards: F64, mask: Bool, flat: Bool) -> tuple[F64, Bool]: ...


@dataclass(frozen=True)
class Mark:
    """Leave everything as it is; only detect and count (the report is the point)."""

    name: str = "mark"

    def apply(self, rewards: F64, mask: Bool, flat: Bool) -> tuple[F64, Bool]:
        return rewards, mask


@dataclass(frozen=True)
class Drop:
    """Mask out every entry of a zero-variance group (DAPO dynamic sampling, arXiv:2503.14476)."""

    name: str = "drop"

    def apply(self, rewards: F64, mask: Bool, flat: Bool) -> tuple[F64, Bool]:
        return rewards, mask & ~flat[:, None]


@dataclass(frozen=True)
class Rerank:
    """Break ties inside zero-variance groups with a secondary signal.

    Inside a flat group, each response gets `r + width * (rank(secondary) - 0.5)`, its rank in
    [0, 1] within the group; the group mean moves by at most `width / 2` and the order comes from
    the secondary signal (a judge score, a reward model, or `bradley_terry_vs_anchors`). Groups
    with signal are untouched. `width` should stay below the smallest reward gap that matters
    (default 0.1 for 0/1 verifier rewards) so a rescued wrong answer never outranks a correct one
    of another group in a batch-level baseline.

    Attributes:
        secondary: `(groups, samples)` secondary scores (finite where the mask is True).
        width: total spread given to a rescued group.
    """

    secondary: Any = field(repr=False)
    width: float = 0.1
    name: str = "rerank"

    def apply(self, rewards: F64, mask: Bool, flat: Bool) -> tuple[F64, Bool]:
        from rewardlab.shape.normalize import rank

        if not self.width > 0:
            raise ArrayError("width", f"must be > 0, got {self.width}")
        second = to_numpy(self.secondary, "secondary", ndim=2)
        if second.shape != rewards.shape:
            raise ArrayError("secondary", f"must have the shape of rewards {rewards.shape}, got {second.shape}")
        check_finite(second, "secondary", mask & flat[:, None])
        ranked = np.asarray(rank(np.where(mask, second, 0.0), mask))
        bumped = rewards + self.width * (ranked - 0.5)
        return np.where(flat[:, None] & mask, bumped, rewards), mask


def rescue(rewards: Any, mask: Any = None, strategy: Rescue | None = None, *, atol: float = 0.0) -> RescueResult:
    """Detect zero-variance groups and apply `strategy` (default `Mark()`: count only)."""
    values, valid = grouped(rewards, mask)
    flat = _zero_variance(values, valid, atol)
    chosen: Rescue = strategy if strategy is not None else Mark()
    out, out_mask = chosen.apply(values, valid, flat)
    return RescueResult(
        rewards=like(out, rewards),
        mask=like(out_mask, rewards) if mask is not None else out_mask,
        zero_variance=flat,
        count=int(flat.sum()),
        strategy=chosen.name,
    )


def bradley_terry_vs_anchors(
    outcomes: Any,
    anchor_strengths: Any = None,
    mask: Any = None,
    *,
    prior: float = 1.0,
    iterations: int = 50,
) -> Any:
    """Bradley-Terry strength of each response from comparisons against a fixed anchor pool.

    Bradley & Terry (1952): P(i beats a) = σ(θ_i - b_a). With anchors of known strength b_a
    (default 0), each θ_i is a one-dimensional MAP estimate with a Gaussian prior of precision
    `prior` (keeps 0/n and n/n win records finite), solved by Newton's method:

        maximise  Σ_a [y_ia log σ(θ_i - b_a) + (1 - y_ia) log(1 - σ(θ_i - b_a))] - prior θ_i² / 2

    Args:
        outcomes: `(n, anchors)` results in [0, 1] (1 = response beat the anchor; 0.5 = tie;
            a judge's preference probability is fine too).
        anchor_strengths: `(anchors,)` known strengths `b_a` (default zeros).
        mask: `(n, anchors)` which comparisons happened.
        prior: precision of the zero-mean Gaussian prior on θ (> 0).
        iterations: Newton steps (the problem is strictly concave; 50 is far more than enough).

    Returns:
        `(n,)` strengths θ_i; comparable across groups because the anchors are shared.
    """
    y = to_numpy(outcomes, "outcomes", ndim=2)
    valid = to_mask(mask, "mask", y.shape)
    check_finite(y, "outcomes", valid)
    if ((y < 0) | (y > 1))[valid].any():
        raise ArrayError("outcomes", "must lie in [0, 1] (1 = win, 0 = loss, 0.5 = tie)")
    if not prior > 0:
        raise ArrayError("prior", f"must be > 0 (it keeps all-win records finite), got {prior}")
    b = np.zeros(y.shape[1]) if anchor_strengths is None else to_numpy(anchor_strengths, "anchor_strengths", ndim=1)
    if b.shape != (y.shape[1],):
        raise ArrayError("anchor_strengths", f"need one strength per anchor ({y.shape[1]}), got {b.shape}")
    check_finite(b, "anchor_strengths")
    theta = np.zeros(y.shape[0])
    w = valid.astype(np.float64)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - b[None, :])))
        grad = (w * (y - p)).sum(axis=1) - prior * theta
        hess = -(w * p * (1 - p)).sum(axis=1) - prior
        theta = theta - grad / hess
    return like(theta, outcomes)
