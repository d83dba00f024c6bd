"""Fixtures for the adapter tests."""

from __future__ import annotations

import pytest
from integration_spec import SPEC


@pytest.fixture
def spec_text() -> str:
    return SPEC


@pytest.fixture
def spec_path(tmp_path):
    path = tmp_path / "reward.toml"
    path.write_text(SPEC)
    return path
