"""Fixtures of the author tests: one warm sandbox pool and the small tasks, per module."""

from __future__ import annotations

import pytest

from rewardlab.author import office_task_env, task_by_name
from rewardlab.sandbox import SandboxPool
from rewardlab.sandbox.config import find_bwrap


@pytest.fixture(scope="module")
def pool():
    if find_bwrap() is None:
        pytest.skip("bubblewrap (bwrap) is not installed; CI installs it")
    with SandboxPool(size=1) as running:
        yield running


@pytest.fixture(scope="session")
def maze():
    return task_by_name("grid/maze")


@pytest.fixture(scope="session")
def office():
    return office_task_env("coffee_mail")
