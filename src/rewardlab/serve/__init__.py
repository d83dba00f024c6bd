"""Serving rewards: HTTP server, Python client, result cache and run store, Ray backend.

    from rewardlab.serve import Client, ResultStore, ServeSettings, create_app

Server (``rewardlab serve spec.toml --port 8000``): `create_app` builds a FastAPI app around
built rewards, a `ResultStore` and `ServeSettings`. Client: `Client` / `AsyncClient` (httpx,
with retries), `RemoteReward` (a served reward as a `Reward`). Ray: `RayExecutor`.
Needs the ``serve`` extra (and ``ray`` for Ray); names are imported on first use so
``import rewardlab.serve`` itself is cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "AsyncClient",
    "Client",
    "RayExecutor",
    "RemoteReward",
    "ResultStore",
    "RewardService",
    "Scores",
    "ServeSettings",
    "ServerError",
    "create_app",
    "default_cache_path",
    "score_file_resumable",
]

_WHERE = {
    "AsyncClient": "client",
    "Client": "client",
    "RemoteReward": "client",
    "ServerError": "client",
    "Scores": "client",
    "RayExecutor": "ray_backend",
    "ResultStore": "cache",
    "default_cache_path": "cache",
    "RewardService": "service",
    "ServeSettings": "settings",
    "create_app": "app",
    "score_file_resumable": "runs",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'rewardlab.serve' has no attribute {name!r}")
    return getattr(importlib.import_module(f"rewardlab.serve.{module}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
