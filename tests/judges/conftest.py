"""A real loopback OpenAI-compatible server per test module."""

from __future__ import annotations

import pytest
from judge_server import JudgeServer


@pytest.fixture
def server():
    with JudgeServer() as running:
        yield running
