"""Shared fixtures. `shared_data` finds ../shared/data relative to the project root."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# CI explores the same examples on every run (a property test that fails there fails for
# everyone, reproducibly); local runs keep exploring new ones.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture(scope="session")
def ray_session() -> Iterator[Any]:
    """One local Ray (2 CPUs) for every test that uses the Ray backend: starting Ray costs
    5-25 s on the 2-core CI machine, so it is started once, not once per module."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on the shared Ray run last (in their usual order), so the cluster does not sit idle
    through the rest of the suite, taking CPU from it."""
    items.sort(key=lambda item: "ray_session" in getattr(item, "fixturenames", ()))
