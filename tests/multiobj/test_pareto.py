"""Pareto tools on groups: selection keeps no dominated sample, fronts equal pymoo's, crowding
equals pymoo's NSGA-II crowding, hypervolume equals a direct computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from pymoo.operators.survival.rank_and_crowding.metrics import calc_crowding_distance
from pymoo.util.nds.fast_non_dominated_sort import fast_non_dominated_sort
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

from rewardlab.errors import ArrayError, ConfigError
from rewardlab.multiobj import (
    crowding_distance,
    hypervolume,
    pareto_advantages,
    pareto_ranks,
    pareto_select,
)
from rewardlab.multiobj.pareto import group_hypervolumes, pareto_front
from without_extras import run_python


def _dominates(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(a >= b) and np.any(a > b))


# Small integer grids make ties and duplicates common, the cases a sort gets wrong.
_groups = st.integers(1, 3).flatmap(
    lambda g: st.integers(1, 9).flatmap(
        lambda s: st.integers(1, 4).flatmap(
            lambda k: st.tuples(
                arrays(np.float64, (g, s, k), elements=st.integers(-3, 3).map(float)),
                arrays(np.bool_, (g, s)),
            )
        )
    )
)


@settings(max_examples=150, deadline=None)
@given(_groups)
def test_selection_never_keeps_a_dominated_sample_and_keeps_every_undominated_one(case: tuple[np.ndarray, np.ndarray]) -> None:
    vectors, mask = case
    selected = pareto_select(vectors, mask)
    assert not (selected & ~mask).any()
    for g in range(vectors.shape[0]):
        valid = np.flatnonzero(mask[g])
        for i in valid:
            dominated = any(_dominates(vectors[g, j], vectors[g, i]) for j in valid)
            assert selected[g, i] == (not dominated)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(1, 4)), elements=st.integers(-4, 4).map(float)))
def test_fronts_equal_pymoo_on_random_data(points: np.ndarray) -> None:
    ours = pareto_ranks(points)
    # pymoo minimises: negate. Deb's fast non-dominated sort (pymoo's own Python, not moocore)
    # and pymoo's default sorter must both give the same partition into fronts.
    for fronts in (fast_non_dominated_sort(-points), NonDominatedSorting().do(-points)):
        theirs = np.full(len(points), -1)
        for r, front in enumerate(fronts):
            theirs[np.asarray(front, dtype=int)] = r
        assert (ours == theirs).all()


def test_fronts_equal_pymoo_on_continuous_random_data() -> None:
    rng = np.random.default_rng(7)
    for k in (2, 3, 5):
        points = rng.normal(size=(200, k))
        theirs = np.full(200, -1)
        for r, front in enumerate(fast_non_dominated_sort(-points)):
            theirs[np.asarray(front, dtype=int)] = r
        assert (pareto_ranks(points) == theirs).all()


def test_crowding_equals_pymoo_on_each_front() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(1, 60, 3))
    ours = crowding_distance(vectors)[0]
    ranks = pareto_ranks(vectors[0])
    for r in np.unique(ranks):
        members = np.flatnonzero(ranks == r)
        # pymoo divides Deb's sum over objectives by their number
        theirs = calc_crowding_distance(-vectors[0, members]) * vectors.shape[2]
        np.testing.assert_allclose(ours[members], theirs)


def test_hypervolume_of_a_two_objective_staircase() -> None:
    points = np.array([[3.0, 1.0], [1.0, 3.0], [2.0, 2.0], [1.0, 1.0], [0.5, -1.0]])
    # the union of the boxes below (3,1), (1,3), (2,2): [0,3]x[0,1] is 3, [0,1]x[1,3] adds 2,
    # [1,2]x[1,2] adds 1; (1,1) and (0.5,-1) add nothing
    assert hypervolume(points, [0.0, 0.0]) == pytest.approx(6.0)


def test_hypervolume_ignores_masked_points_and_points_below_the_reference() -> None:
    points = np.array([[1.0, 1.0], [5.0, 5.0], [-1.0, 9.0]])
    assert hypervolume(points, [0.0, 0.0], mask=[True, False, True]) == 1.0
    assert hypervolume(points[[2]], [0.0, 0.0]) == 0.0


def test_group_hypervolumes_equal_the_hypervolume_of_each_group() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(6, 9, 3))
    mask = rng.random((6, 9)) > 0.3
    mask[4] = False  # a group with no valid sample bounds no volume
    ref = np.array([-4.0, -4.0, -4.0])  # below every draw: each valid group bounds a volume
    expected = [hypervolume(vectors[g], ref, mask=mask[g]) for g in range(6)]
    np.testing.assert_allclose(group_hypervolumes(vectors, ref, mask), expected)
    assert expected[4] == 0.0 and min(expected[:4]) > 0
    with pytest.raises(ArrayError, match="ref"):
        group_hypervolumes(vectors, [0.0, 0.0])


def test_pareto_front_is_distinct_and_sorted() -> None:
    points = np.array([[1.0, 2.0], [2.0, 1.0], [1.0, 2.0], [0.0, 0.0]])
    np.testing.assert_array_equal(pareto_front(points), [[1.0, 2.0], [2.0, 1.0]])


def test_duplicates_of_a_front_point_are_all_selected() -> None:
    vectors = np.array([[[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]])
    assert pareto_select(vectors).tolist() == [[True, True, False]]


def test_parrot_advantages_are_zero_off_the_front_and_ordered_on_it() -> None:
    vectors = np.array([[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.9, 0.9]]])
    out = pareto_advantages(vectors)
    assert out.selected.tolist() == [[True, True, False, True]]
    assert out.advantages[0, 2] == 0.0
    assert out.advantages[0, 3] > out.advantages[0, 0] == pytest.approx(out.advantages[0, 1])


def test_nsga_advantages_order_fronts_first() -> None:
    vectors = np.array([[[3.0, 0.0], [0.0, 3.0], [1.0, 1.0], [0.5, 0.5], [0.0, 0.0]]])
    adv = pareto_advantages(vectors, method="nsga").advantages[0]
    assert min(adv[:3]) > adv[3] > adv[4]


def test_masked_entries_get_no_advantage_and_are_never_selected() -> None:
    vectors = np.array([[[9.0, 9.0], [1.0, 0.0], [0.0, 1.0]]])
    out = pareto_advantages(vectors, [[False, True, True]])
    assert out.selected.tolist() == [[False, True, True]] and out.advantages[0, 0] == 0.0


def test_nan_in_a_valid_entry_is_refused_but_allowed_where_masked() -> None:
    vectors = np.array([[[np.nan, 1.0], [1.0, 0.0]]])
    with pytest.raises(ArrayError, match="vectors"):
        pareto_select(vectors)
    assert pareto_select(vectors, [[False, True]]).tolist() == [[False, True]]


def test_bad_options_are_named() -> None:
    vectors = np.zeros((1, 2, 2))
    with pytest.raises(ArrayError, match="weights"):
        pareto_advantages(vectors, weights=[1.0])
    with pytest.raises(ConfigError, match="nsga"):
        pareto_advantages(vectors, method="nsga", weights=[1.0, 1.0])
    with pytest.raises(ArrayError, match="ref"):
        hypervolume(vectors[0], [0.0])


def test_torch_vectors_come_back_as_tensors() -> None:
    torch = pytest.importorskip("torch")
    vectors = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]])
    out = pareto_advantages(vectors)
    assert isinstance(out.advantages, torch.Tensor) and out.advantages.shape == (1, 3)


def test_without_the_multiobj_extra_sorting_names_it(tmp_path: Path) -> None:
    code = (
        "from rewardlab.multiobj import pareto_select\n"
        "from rewardlab.errors import DependencyError\n"
        "try:\n    pareto_select([[[1.0, 0.0]]])\n"
        "except DependencyError as exc:\n    print(exc)\n"
    )
    done = run_python(code, tmp_path, blocked=["moocore"])
    assert "pip install 'rewardlab[multiobj]'" in done.stdout, done.stderr


def test_hypervolume_of_points_without_objectives_is_an_array_error() -> None:
    with pytest.raises(ArrayError, match="at least one objective"):  # moocore would raise a bare ValueError
        hypervolume(np.zeros((3, 0)), np.zeros(0))
