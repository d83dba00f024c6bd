"""Late scalarisation: linear and Chebyshev, one weight vector or one per sample; sweep grids."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.errors import ArrayError, ConfigError
from rewardlab.multiobj import scalarize, simplex_weights

CONCAVE = np.array([[0.0, 3.0], [1.4, 1.4], [3.0, 0.0]])  # (1.4, 1.4) is under the convex hull


def test_linear_never_picks_a_point_under_the_hull_and_chebyshev_does() -> None:
    weights = simplex_weights(2, 100)
    linear = {int(np.argmax(scalarize(CONCAVE, w))) for w in weights}
    chebyshev = {int(np.argmax(scalarize(CONCAVE, w, method="chebyshev", ideal=[3.0, 3.0]))) for w in weights}
    assert 1 not in linear and chebyshev == {0, 1, 2}


def test_one_weight_vector_per_sample() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert scalarize(vectors, [[1.0, 0.0], [0.0, 2.0]]).tolist() == [1.0, 2.0]
    with pytest.raises(ArrayError, match="weights"):
        scalarize(vectors, [[1.0, 0.0]])


def test_simplex_grid() -> None:
    grid = simplex_weights(3, 2)
    assert grid.shape == (6, 3) and np.allclose(grid.sum(axis=1), 1.0)
    with pytest.raises(ConfigError):
        simplex_weights(0, 2)
    with pytest.raises(ConfigError, match="method"):
        scalarize(CONCAVE, [0.5, 0.5], method="max")  # type: ignore[arg-type]
