"""Starting sympy workers in the background (`SympyPool.warm_up(wait=False)`): the launch returns
at once, the first call uses the worker already starting, and a pool closed or broken while a
worker starts keeps its books right."""

from __future__ import annotations

import pytest

from rewardlab.errors import WorkerCrashed
from rewardlab.verify.math import SympyPool

COMPARE = ("compare", ("42", "x + 1", 1e-9, True, False))


def test_background_warm_up_launches_one_worker_that_the_first_call_uses() -> None:
    pool = SympyPool(max_workers=2)
    try:
        pool.warm_up(wait=False)
        assert pool.launched == 1
        (starting,) = pool._starting
        outcome, *_ = pool.call(*COMPARE, timeout=30)
        assert outcome == "not_equivalent"
        assert pool.launched == 1  # no second process: the call waited for the one starting
        assert [w.proc.pid for w in pool._idle] == [starting.proc.pid]
    finally:
        pool.close()


def test_background_warm_up_twice_launches_one_worker() -> None:
    pool = SympyPool(max_workers=2)
    try:
        pool.warm_up(wait=False)
        pool.warm_up(wait=False)
        assert pool.launched == 1 and len(pool._starting) == 1
    finally:
        pool.close()


def test_background_warm_up_with_a_worker_up_launches_none() -> None:
    pool = SympyPool(max_workers=2)
    try:
        pool.warm_up()
        pool.warm_up(wait=False)
        assert pool.launched == 1 and not pool._starting
    finally:
        pool.close()


def test_has_ready_worker_only_once_a_worker_has_started() -> None:
    pool = SympyPool(max_workers=1)
    try:
        assert not pool.has_ready_worker()  # none launched
        pool.warm_up(wait=False)
        pool._starting[0].wait_ready()
        assert pool.has_ready_worker()  # launched in the background and ready
        pool.call(*COMPARE, timeout=30)
        assert pool.has_ready_worker() and pool.launched == 1  # idle now
    finally:
        pool.close()


def test_close_kills_a_worker_that_is_still_starting() -> None:
    pool = SympyPool(max_workers=1)
    pool.warm_up(wait=False)
    (starting,) = pool._starting
    pool.close()
    assert starting.proc.poll() is not None  # killed and reaped, not left importing sympy
    assert pool._alive == 0


def test_worker_that_dies_while_starting_fails_one_call_then_is_replaced() -> None:
    pool = SympyPool(max_workers=1)
    try:
        pool.warm_up(wait=False)
        pool._starting[0].proc.kill()
        with pytest.raises(WorkerCrashed, match="did not start"):
            pool.call(*COMPARE, timeout=30)
        outcome, *_ = pool.call(*COMPARE, timeout=30)  # its slot was given back: a fresh worker starts
        assert outcome == "not_equivalent" and pool.launched == 2
    finally:
        pool.close()


def test_worker_program_loads_symbolic_without_the_library_behind_the_package_inits() -> None:
    import subprocess
    import sys

    from rewardlab.verify.math import symbolic, worker

    probe = "import rewardlab.verify.math.symbolic as s\nprint(s.__file__)\nprint(' '.join(sorted(m for m in sys.modules if m.startswith('rewardlab'))))\n"
    out = subprocess.run([sys.executable, "-c", worker._BARE_PACKAGES + probe], capture_output=True, text=True, check=True, timeout=120).stdout
    path, modules = out.splitlines()
    assert path == symbolic.__file__  # the same source file as the parent's
    assert modules.split() == ["rewardlab", "rewardlab.errors", "rewardlab.verify", "rewardlab.verify.math", "rewardlab.verify.math.symbolic"]
