"""Fixtures of the serve tests."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from rewardlab.serve.app import create_app


@pytest.fixture
def make_app() -> Iterator[Any]:
    """`make_app(rewards, cache, settings)`; every app's executors are closed after the test."""
    apps: list[Any] = []

    def factory(*args: Any, **kwargs: Any) -> Any:
        app = create_app(*args, **kwargs)
        apps.append(app)
        return app

    yield factory
    for app in apps:
        asyncio.run(app.state.service.aclose())
