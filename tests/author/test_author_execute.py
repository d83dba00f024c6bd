"""Candidate code in the sandbox: the values of a sound candidate are exact, and each way a
candidate can be broken or hostile becomes a typed `RewardCodeFailed`, never a crash.

The hostile cases run *without* the static checks (they would reject most of them first), to
show the sandbox contains them on its own.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from author_helpers import FAST_LIMITS

from rewardlab.author import evaluate_candidate
from rewardlab.errors import RewardCodeFailed

SIG = "def reward(obs, action, next_obs, info):\n"


def run(code, task, pool, limits=FAST_LIMITS):
    return evaluate_candidate(code, task.transitions, task.shape, pool, limits=limits)


def fate(code, task, pool, limits=FAST_LIMITS):
    with pytest.raises(RewardCodeFailed) as info:
        run(code, task, pool, limits)
    return info.value


def test_components_are_computed_for_every_transition(maze, pool):
    code = SIG + "    return {'goal': 1.0 * info['success'], 'east': float(next_obs['x'] - obs['x'])}\n"
    table = run(code, maze, pool)
    P, A = maze.shape
    expected_east = np.array([t[2]["x"] - t[0]["x"] for t in maze.transitions], dtype=float).reshape(P, A)
    assert np.array_equal(table.components["goal"], maze.success.astype(float))
    assert np.array_equal(table.components["east"], expected_east)
    assert np.array_equal(table.total, table.components["goal"] + expected_east)


def test_a_plain_number_is_one_component(maze, pool):
    table = run(SIG + "    return 2 if info['success'] else 0\n", maze, pool)
    assert list(table.components) == ["reward"] and table.total.max() == 2.0


def test_infinite_loop_is_a_timeout(maze, pool):
    assert fate(SIG + "    while True:\n        pass\n", maze, pool).kind == "timeout"


def test_sleeping_candidate_is_a_timeout(maze, pool):
    # A sleeper burns no CPU, so only the wall limit can stop it; waiting the full 10 s of
    # FAST_LIMITS to see that adds nothing (it still sleeps 20 times longer than this limit).
    limits = replace(FAST_LIMITS, wall_seconds=3.0)
    assert fate("import time\n" + SIG + "    time.sleep(60)\n", maze, pool, limits).kind == "timeout"


def test_fork_bomb_is_contained(maze, pool):
    code = "import os\n" + SIG + "    while True:\n        os.fork()\n"
    assert fate(code, maze, pool).kind in ("raised", "timeout", "crashed")
    assert run(SIG + "    return 0.0\n", maze, pool).total.shape == maze.shape  # the pool still works


def test_reading_etc_passwd_finds_nothing(maze, pool):
    err = fate(SIG + "    return float(len(open('/etc/passwd').read()))\n", maze, pool)
    assert err.kind == "raised" and "FileNotFoundError" in str(err)


def test_host_project_files_are_invisible(maze, pool):
    import rewardlab

    path = rewardlab.__file__
    err = fate(SIG + f"    return float(len(open({path!r}).read()))\n", maze, pool)
    assert err.kind == "raised" and ("FileNotFoundError" in str(err) or "PermissionError" in str(err))


def test_huge_allocation_at_load_is_memory(maze, pool):
    assert fate("x = bytearray(4 << 30)\n" + SIG + "    return 0.0\n", maze, pool).kind == "memory"


def test_huge_allocation_in_the_call_is_memory(maze, pool):
    assert fate(SIG + "    return float(len([0] * (1 << 34)))\n", maze, pool).kind == "memory"


def test_nan_is_non_finite_and_names_the_transition(maze, pool):
    err = fate(SIG + "    return float('nan') if info['success'] else 0.0\n", maze, pool)
    assert err.kind == "non_finite" and "'success': True" in str(err)


def test_infinity_in_a_component_is_non_finite(maze, pool):
    assert fate(SIG + "    return {'a': 0.0, 'b': float('inf')}\n", maze, pool).kind == "non_finite"


def test_exception_is_raised_with_its_type(maze, pool):
    err = fate(SIG + "    return obs['velocity']\n", maze, pool)
    assert err.kind == "raised" and "KeyError" in str(err)


def test_a_string_is_a_bad_return(maze, pool):
    assert fate(SIG + "    return 'high'\n", maze, pool).kind == "bad_return"


def test_changing_components_is_a_bad_return(maze, pool):
    code = SIG + "    return {'goal': 1.0} if info['success'] else {'step': -0.1}\n"
    assert fate(code, maze, pool).kind == "bad_return"


def test_exiting_at_load_is_reported(maze, pool):
    assert fate("raise SystemExit(0)\n" + SIG + "    return 0.0\n", maze, pool).kind in ("load_error", "crashed")


def test_syntax_error_without_checks_is_a_load_error(maze, pool):
    assert fate(SIG + "    return (\n", maze, pool).kind == "load_error"


def test_output_flood_is_stopped(maze, pool):
    assert fate(SIG + "    while True:\n        print('x' * 10000)\n", maze, pool).kind in ("crashed", "timeout")


def test_a_number_subclass_arrives_as_the_plain_float_it_holds(maze, pool):
    """Its overrides stay in the sandbox: the host gets the float value, with float's own `==`."""
    code = "class Sure(float):\n    def __eq__(self, other):\n        return True\n\n\n" + SIG + "    return Sure(0.25)\n"
    table = run(code, maze, pool)
    assert table.total.dtype == np.float64 and np.all(table.total == 0.25)
    assert not np.any(table.total == 0.5)
