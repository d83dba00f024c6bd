"""Fixtures for the maths verifier tests: one sympy pool shared by the whole module run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardlab.verify.math import SympyPool


@pytest.fixture(scope="session")
def pool() -> Iterator[SympyPool]:
    workers = SympyPool(max_workers=2)
    workers.warm_up()
    yield workers
    workers.close()
