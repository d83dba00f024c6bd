"""A warm sandbox pool shared by the tests of a module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardlab.sandbox import SandboxPool
from rewardlab.sandbox.config import find_bwrap


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    if find_bwrap() is None:
        pytest.skip("bubblewrap (bwrap) is not installed; CI installs it")
    with SandboxPool(size=1) as p:
        p.start()
        yield p
