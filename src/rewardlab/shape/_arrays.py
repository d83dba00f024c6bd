"""The numeric edge shared by `rewardlab.shape` and `rewardlab.credit`.

Everything inside works on float64 numpy arrays. At the edge:

* torch tensors are accepted by duck typing (no `import torch` unless a tensor arrives) and the
  result is handed back as a tensor on the same device, in the caller's floating dtype;
* shapes are checked and a wrong one raises `ArrayError` naming the argument;
* NaN/inf where a number is needed raises `NonFiniteError`; entries that could not be scored
  must be marked with `mask=False` (they may hold NaN), never written as a silent 0.

Masked group statistics (`group_stats`) are the one place the per-group mean/std is computed,
so every estimator treats groups of size 1, all-equal groups and masked entries the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import ArrayError, NonFiniteError

F64 = NDArray[np.float64]
Bool = NDArray[np.bool_]

#: Default epsilon added to a standard deviation before dividing by it. verl uses 1e-6 and TRL
#: 1e-4 (in float32); in float64 1e-6 keeps a near-constant group from exploding while
#: changing an ordinary advantage by less than one part in a million.
EPS = 1e-6


def is_torch(x: object) -> bool:
    """True for a torch tensor, decided without importing torch."""
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach")


def to_numpy(x: Any, name: str, *, ndim: int | tuple[int, ...] | None = None) -> F64:
    """`x` (list, numpy array, torch tensor) as a float64 array; checks the number of axes."""
    if x is None:
        raise ArrayError(name, "is required (got None)")
    if is_torch(x):
        x = x.detach().to("cpu").double().numpy()  # bfloat16 has no numpy dtype: go via float64
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ArrayError(name, f"cannot be read as numbers ({exc}); pass a numeric array") from exc
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise ArrayError(name, f"must have {want} axes, got shape {arr.shape}")
    return arr


def to_mask(mask: Any, name: str, shape: tuple[int, ...]) -> Bool:
    """A boolean mask of exactly `shape`; `None` means everything is valid."""
    if mask is None:
        return np.ones(shape, dtype=bool)
    if is_torch(mask):
        mask = mask.detach().to("cpu").numpy()
    arr = np.asarray(mask)
    if arr.shape != shape:
        raise ArrayError(name, f"must have shape {shape} like the values it masks, got {arr.shape}")
    if arr.dtype != np.bool_:
        if not np.all((arr == 0) | (arr == 1)):
            raise ArrayError(name, "must be boolean (or 0/1); got other values")
        arr = arr.astype(bool)
    return arr


def token_mask_of(mask: Any, name: str = "token_mask") -> Bool:
    """A 2-D boolean mask from a bool/0-1 array or tensor (no float copy of a large mask)."""
    if is_torch(mask):
        mask = mask.detach().to("cpu").numpy()
    arr = np.asarray(mask)
    if arr.ndim != 2:
        raise ArrayError(name, f"must have 2 axes (batch, tokens), got shape {arr.shape}")
    return to_mask(arr, name, arr.shape)


def check_finite(values: F64, name: str, mask: Bool | None = None) -> None:
    """Raise `NonFiniteError` if a valid (mask=True) entry is NaN or inf."""
    bad = ~np.isfinite(values)
    if mask is not None:
        bad &= mask
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise NonFiniteError(
            name,
            f"{int(bad.sum())} non-finite value(s), first {values[first]} at index {first}; "
            "fix the reward that produced it, or mark the entry invalid with mask=False",
        )


def like(out: np.ndarray, *inputs: Any) -> Any:
    """Return `out` as the caller gave its inputs: a torch tensor if any input was one."""
    template = next((x for x in inputs if is_torch(x)), None)
    if template is None:
        return out
    import torch  # lazy: credit must work without torch installed

    tensor = torch.from_numpy(np.ascontiguousarray(out))
    if out.dtype == np.bool_:
        return tensor.to(template.device)
    floating = next((x for x in inputs if is_torch(x) and x.is_floating_point()), None)
    dtype = floating.dtype if floating is not None else torch.get_default_dtype()
    return tensor.to(device=template.device, dtype=dtype)


@dataclass(frozen=True)
class GroupStats:
    """Per-group statistics over valid entries, each of shape `(groups, 1)` to broadcast.

    Attributes:
        mean: mean of valid entries (0 for a group with none).
        std: standard deviation with `ddof` (0 where fewer than `ddof + 1` valid entries).
        count: number of valid entries.
        constant: True when the group carries no signal: fewer than 2 valid entries, or all
            valid entries exactly equal (checked with max == min, not with std, because the
            float mean of n copies of 0.1 is not exactly 0.1).
        low, high: smallest and largest valid entry (inf and -inf for a group with none).
    """

    mean: F64
    std: F64
    count: NDArray[np.int64]
    constant: Bool
    low: F64
    high: F64


def group_stats(values: F64, mask: Bool, *, ddof: int = 1) -> GroupStats:
    """Masked mean, std and constancy per row of a `(groups, samples)` array."""
    count = mask.sum(axis=1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowed row is done again below
        mean, std = _mean_std(values, mask, count, ddof)
    overflowed = ~(np.isfinite(mean) & np.isfinite(std)).ravel()
    if overflowed.any():  # finite rewards whose sum or squares pass the float limit (~1e154 and up)
        scale = np.abs(np.where(mask[overflowed], values[overflowed], 0.0)).max(axis=1, keepdims=True)
        scaled_mean, scaled_std = _mean_std(values[overflowed] / scale, mask[overflowed], count[overflowed], ddof)
        mean[overflowed], std[overflowed] = scaled_mean * scale, scaled_std * scale
    # `initial`: a group of no samples (shape (groups, 0)) has no max; it is constant
    hi = np.where(mask, values, -np.inf).max(axis=1, keepdims=True, initial=-np.inf)
    lo = np.where(mask, values, np.inf).min(axis=1, keepdims=True, initial=np.inf)
    constant = (count < 2) | (hi == lo)
    return GroupStats(mean=mean, std=std, count=count, constant=constant, low=lo, high=hi)


def _mean_std(values: F64, mask: Bool, count: NDArray[np.int64], ddof: int) -> tuple[F64, F64]:
    mean = np.where(mask, values, 0.0).sum(axis=1, keepdims=True) / np.maximum(count, 1)
    dev = np.where(mask, values - mean, 0.0)
    var = (dev * dev).sum(axis=1, keepdims=True) / np.maximum(count - ddof, 1)
    return mean, np.where(count > ddof, np.sqrt(var), 0.0)


def grouped(rewards: Any, mask: Any, *, name: str = "rewards") -> tuple[F64, Bool]:
    """Validate a `(groups, samples)` reward array and its mask; NaN allowed only where masked."""
    values = to_numpy(rewards, name, ndim=2)
    valid = to_mask(mask, "mask", values.shape)
    check_finite(values, name, valid)
    return values, valid


def prefix_mask(mask: Bool, name: str) -> None:
    """Raise unless every row of `mask` is True on a prefix and False after it (ragged steps)."""
    later_valid = mask[..., 1:] & ~mask[..., :-1]
    if later_valid.any():
        where = tuple(int(i) for i in np.argwhere(later_valid)[0])
        raise ArrayError(name, f"must be a prefix per row (valid steps first); a gap ends at {where}")
