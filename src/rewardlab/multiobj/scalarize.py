"""Scalarising a reward vector with weights chosen late: per sample, per request, per sweep.

`linear` is `Σ_k w_k · v_k` (what `combine = "objectives"` computes, see
`rewardlab.compose.objectives`); it reaches only the convex hull of a front. `chebyshev` is
`-max_k w_k · |z*_k - v_k|` around an ideal point `z*` (the weighted Tchebycheff metric;
Miettinen 1999, "Nonlinear Multiobjective Optimization"), which reaches every
Pareto-optimal point, concave parts included, for some weights; it is negated so larger is
better, like every reward here.
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

import numpy as np

from rewardlab.errors import ArrayError, ConfigError
from rewardlab.shape._arrays import F64, check_finite, like, to_numpy

__all__ = ["scalarize", "simplex_weights"]


def scalarize(
    vectors: Any,
    weights: Any,
    *,
    method: Literal["linear", "chebyshev"] = "linear",
    ideal: Any = None,
) -> Any:
    """One number per vector.

    Args:
        vectors: `(..., objectives)` reward vectors.
        weights: `(objectives,)` for all, or the shape of `vectors` for one weight vector each
            (a weight-conditioned batch).
        method: `linear` or `chebyshev`.
        ideal: `(objectives,)` utopia point for `chebyshev` (default: the largest value of
            each objective in `vectors`).

    Returns:
        `vectors.shape[:-1]`.
    """
    values = to_numpy(vectors, "vectors")
    if values.ndim < 1:
        raise ArrayError("vectors", "needs at least one axis (objectives last)")
    check_finite(values, "vectors")
    w = to_numpy(weights, "weights")
    if w.shape not in ((values.shape[-1],), values.shape):
        raise ArrayError("weights", f"must have shape {(values.shape[-1],)} or {values.shape}, got {w.shape}")
    check_finite(w, "weights")
    if method == "linear":
        out: F64 = (values * w).sum(axis=-1)
    elif method == "chebyshev":
        if values.size == 0 and ideal is None:
            raise ArrayError("vectors", "is empty; pass ideal= for chebyshev")
        z = values.reshape(-1, values.shape[-1]).max(axis=0) if ideal is None else to_numpy(ideal, "ideal", ndim=1)
        if z.shape != (values.shape[-1],):
            raise ArrayError("ideal", f"needs one coordinate per objective ({values.shape[-1]}), got {z.shape[0]}")
        check_finite(z, "ideal")
        out = -(w * np.abs(z - values)).max(axis=-1)
    else:
        raise ConfigError(f"method must be 'linear' or 'chebyshev', got {method!r}")
    return like(out, vectors)


def simplex_weights(objectives: int, steps: int) -> F64:
    """Every weight vector on the simplex with coordinates in multiples of `1/steps`,
    `(n, objectives)` in lexicographic order: the grid of a weight sweep."""
    if objectives < 1 or steps < 1:
        raise ConfigError(f"objectives and steps must be >= 1, got {objectives} and {steps}")
    rows = [c for c in itertools.product(range(steps + 1), repeat=objectives) if sum(c) == steps]
    return np.asarray(rows, dtype=np.float64) / steps
