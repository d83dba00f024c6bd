"""Reward vectors as arrays: errors masked, never 0; per-objective normalisation reuses shape's."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab import RewardResult
from rewardlab.errors import ArrayError, ConfigError
from rewardlab.multiobj import RunningNormalizer, normalize_objectives, objective_arrays
from rewardlab.multiobj.vectors import vectors_of
from rewardlab.shape import minmax, rank, zscore


def _ok(a: float | None, b: float | None) -> RewardResult:
    return RewardResult.ok(0.0, objectives={"a": a, "b": b})


def test_results_become_grouped_arrays_with_errors_and_missing_objectives_masked() -> None:
    results = [_ok(1, 2), RewardResult.failure("crash", "x"), _ok(None, 1), _ok(3, 4)]
    arrays = objective_arrays(results, group_size=2)
    assert arrays.names == ("a", "b") and arrays.values.shape == (2, 2, 2)
    assert arrays.mask.tolist() == [[True, False], [False, True]] and arrays.unscored == 2
    assert np.isnan(arrays.values[0, 1]).all()  # never a silent 0


def test_results_without_vectors_are_refused() -> None:
    with pytest.raises(ArrayError, match="objectives"):
        vectors_of([RewardResult.ok(1.0)])
    with pytest.raises(ArrayError, match="row 0 has no objective c"):
        vectors_of([_ok(1, 2)], names=["a", "c"])
    with pytest.raises(ArrayError, match="multiple"):
        objective_arrays([_ok(1, 2)] * 3, group_size=2)


@pytest.mark.parametrize(("method", "transform"), [("z", zscore), ("rank", rank), ("minmax", minmax)])
def test_each_objective_is_normalised_by_shapes_transform(method: str, transform: object) -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(3, 5, 2)) * [1.0, 100.0]
    mask = rng.random((3, 5)) > 0.2
    out = normalize_objectives(vectors, mask, method=method)  # type: ignore[arg-type]
    for k in range(2):
        np.testing.assert_allclose(out[:, :, k], transform(vectors[:, :, k], mask))  # type: ignore[operator]


def test_unknown_method_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="method"):
        normalize_objectives(np.zeros((1, 2, 2)), method="l2")  # type: ignore[arg-type]


def test_running_normaliser_equals_the_statistics_of_everything_seen() -> None:
    rng = np.random.default_rng(1)
    batches = [rng.normal(loc=[0.0, 50.0], scale=[1.0, 10.0], size=(n, 2)) for n in (3, 17, 1, 40)]
    norm = RunningNormalizer(2, eps=0.0)
    for b in batches:
        norm.update(b)
    seen = np.concatenate(batches)
    np.testing.assert_allclose(norm.mean, seen.mean(axis=0))
    np.testing.assert_allclose(norm.std, seen.std(axis=0))
    np.testing.assert_allclose(norm.normalize(seen), (seen - seen.mean(0)) / seen.std(0))


def test_running_normaliser_leaves_masked_rows_out() -> None:
    norm = RunningNormalizer(1)
    out = norm(np.array([[[1.0], [np.nan], [3.0]]]), [[True, False, True]])
    assert norm.count == 2 and norm.mean[0] == 2.0 and out[0, 1, 0] == 0.0
    with pytest.raises(ArrayError, match="objectives"):
        norm.update(np.zeros((2, 3)))


def test_results_grouped_by_id_are_padded_and_masked() -> None:
    results = [_ok(1, 1), _ok(2, 2), _ok(3, 3), RewardResult.failure("crash", "x")]
    arrays = objective_arrays(results, groups=["p", "q", "p", "q"])
    assert arrays.values.shape == (2, 2, 2)
    assert arrays.values[0, :, 0].tolist() == [1.0, 3.0] and arrays.mask.tolist() == [[True, True], [True, False]]
    uneven = objective_arrays(results[:3], groups=["p", "q", "p"])
    assert uneven.mask.tolist() == [[True, True], [True, False]]  # q has one row: padded, masked
    with pytest.raises(ConfigError, match="exactly one"):
        objective_arrays(results)
    with pytest.raises(ArrayError, match="3 ids for 4"):
        objective_arrays(results, groups=["p", "q", "p"])
