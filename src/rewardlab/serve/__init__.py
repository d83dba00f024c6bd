"""Serving rewards: the HTTP server and its Python client.

    from rewardlab.serve import Client, ResultStore, ServeSettings, create_app

Server (``rewardlab serve spec.toml --port 8000``): `create_app` builds a FastAPI app around
built rewards, a result cache (`rewardlab.store.ResultStore`, re-exported here) and
`ServeSettings`; batches run on a `rewardlab.runner` executor (inline, worker pool or Ray).
Client: `Client` / `AsyncClient` (httpx, with retries), `RemoteReward` (a served reward as a
`Reward`), `RemoteExecutor` (a server as the executor of a recorded ``rewardlab score`` run).
Needs the ``serve`` extra (and ``ray`` for Ray); names are imported on first use so
``import rewardlab.serve`` itself is cheap.
"""

from __future__ import annotations

from rewardlab._lazy import exports

__all__ = [
    "AsyncClient",
    "Client",
    "RemoteExecutor",
    "RemoteReward",
    "ResultStore",
    "Scores",
    "ServeSettings",
    "create_app",
]

_WHERE = {
    "AsyncClient": "rewardlab.serve.client",
    "Client": "rewardlab.serve.client",
    "RemoteReward": "rewardlab.serve.client",
    "Scores": "rewardlab.serve.client",
    "RemoteExecutor": "rewardlab.serve.remote",
    "ResultStore": "rewardlab.store",  # the server's cache; it lives below the runner
    "ServeSettings": "rewardlab.serve.settings",
    "create_app": "rewardlab.serve.app",
}
__getattr__, __dir__ = exports(__name__, _WHERE)
