"""Grouping helpers (TRL and verl layouts), the toy end-to-end run, and the package surface."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewardlab.credit
import rewardlab.shape
from rewardlab.credit import grpo, pack
from rewardlab.credit.grouping import by_size
from rewardlab.credit.toy import ESTIMATORS, train_toy
from rewardlab.errors import ArrayError


@settings(max_examples=100, deadline=None)
@given(ids=st.lists(st.sampled_from(["p0", "p1", "p2", "p3"]), min_size=1, max_size=40), data=st.data())
def test_pack_unpack_round_trip_for_shuffled_verl_style_index(ids, data):
    flat = np.array(data.draw(st.lists(st.floats(-5, 5), min_size=len(ids), max_size=len(ids))))
    packed = pack(flat, ids)
    np.testing.assert_array_equal(packed.unpack(packed.values), flat)
    for key, row in zip(packed.keys, packed.values, strict=True):
        members = flat[np.array(ids) == key]
        np.testing.assert_array_equal(np.sort(row[~np.isnan(row)]), np.sort(members))


def test_pack_then_grpo_equals_grpo_on_contiguous_groups():
    rng = np.random.default_rng(0)
    r = rng.random((4, 6))
    order = rng.permutation(24)
    ids = np.repeat(np.arange(4), 6)[order]
    packed = pack(r.reshape(-1)[order], ids)
    adv_flat = packed.unpack(grpo(packed.values, packed.mask))
    np.testing.assert_allclose(adv_flat, grpo(r).reshape(-1)[order])


def test_by_size_checks_divisibility():
    assert by_size(np.arange(6.0), 3).shape == (2, 3)
    with pytest.raises(ArrayError, match="multiple"):
        by_size(np.arange(5.0), 2)


@pytest.mark.parametrize("estimator", [e for e in ESTIMATORS if e != "none"])
def test_toy_policy_learns_the_verifiable_target(estimator):
    run = train_toy(estimator, steps=150, seed=0)
    assert run.success[0] < 0.15  # starts near chance (1/15)
    assert run.success[-1] > 0.9, f"{estimator} reached only {run.success[-1]:.3f}"
    assert run.seconds < 5.0


def test_toy_control_without_advantages_does_not_learn():
    run = train_toy("none", steps=50, seed=0)
    assert max(run.success) - min(run.success) < 1e-12
    assert np.mean(run.zero_variance) > 0.3  # many all-wrong groups at chance level


def test_toy_group_normalised_estimators_learn_faster_than_unscaled_ones():
    # with 0/1 rewards, GRPO's std scaling amplifies rare successes; Dr.GRPO trades speed for
    # removing the difficulty bias. A comparison of estimators, measured, not asserted blindly:
    fast = np.mean([train_toy("grpo", steps=40, seed=s).success[-1] for s in range(3)])
    slow = np.mean([train_toy("dr_grpo", steps=40, seed=s).success[-1] for s in range(3)])
    assert fast > slow


def test_all_lists_match_exports():
    for module in (rewardlab.credit, rewardlab.shape):
        for name in module.__all__:
            assert hasattr(module, name), name


def test_importing_credit_and_shape_does_not_import_torch():
    code = "import sys, rewardlab.credit, rewardlab.shape; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_advantages_by_group_reports_unscored_rows_and_flat_groups():
    from rewardlab.credit.grouping import advantages_by_group

    scores = np.array([1.0, np.nan, 0.0, 1.0, 1.0, 0.5])
    ok = ~np.isnan(scores)
    result = advantages_by_group(scores, ["a", "a", "a", "b", "b", "c"], ok, estimator="dr_grpo")
    np.testing.assert_allclose(result.advantages[[0, 2]], [0.5, -0.5])
    assert np.isnan(result.advantages[1])  # no score: no advantage, not a silent 0
    assert (result.groups, result.zero_variance_groups, result.unscored_rows) == (3, 2, 1)
    with pytest.raises(ArrayError, match="estimator"):
        advantages_by_group(scores, ["a"] * 6, ok, estimator="ppo")


def test_steps_from_results_pads_and_masks_without_inventing_zeros():
    from rewardlab.core import ErrorKind, RewardResult
    from rewardlab.credit import steps_from_results
    from rewardlab.shape import aggregate_steps

    results = [
        RewardResult.ok(0.5, steps=(0.9, 0.4)),
        RewardResult.failure(ErrorKind.CRASH, "prm died"),
        RewardResult.ok(1.0, steps=(0.7, 0.8, 0.95)),
        RewardResult.ok(1.0),  # an outcome-only result: no steps
    ]
    steps, mask = steps_from_results(results)
    assert steps.shape == (4, 3)
    np.testing.assert_array_equal(mask.sum(axis=1), [2, 0, 3, 0])
    assert np.isnan(steps[1]).all()
    np.testing.assert_allclose(aggregate_steps(steps, mask, how="min", empty=np.nan)[[0, 2]], [0.4, 0.7])


def test_toy_compare_summarises_each_estimator_on_shared_seeds():
    from rewardlab.credit.toy import compare

    rows = compare(["grpo", "none"], seeds=range(2), steps=60)
    by_name = {r.estimator: r for r in rows}
    assert by_name["grpo"].steps_to_threshold < 60 < by_name["none"].steps_to_threshold
    assert by_name["grpo"].final_success > 0.9 > by_name["none"].final_success
