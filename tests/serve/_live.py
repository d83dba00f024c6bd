"""Helpers of the serve tests: in-process clients and a real uvicorn server on loopback."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import httpx
import uvicorn


class ObservedTransport(httpx.HTTPTransport):
    """The real HTTP transport, recording what each attempt got, so a test waits for an event
    ("a request was refused") instead of sleeping and hoping it happened."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = threading.Event()  # an attempt found no server
        self.refused = threading.Event()  # an attempt got 429
        self.statuses: list[int] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = super().handle_request(request)
        except httpx.TransportError:
            self.failed.set()
            raise
        self.statuses.append(response.status_code)
        if response.status_code == 429:
            self.refused.set()
        return response


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """uvicorn serving `app` on 127.0.0.1 in a background thread (a real TCP socket)."""

    def __init__(self, app: Any, port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(20)


def run(coro: Any) -> Any:
    """Run a coroutine on a fresh event loop (no pytest-asyncio needed)."""
    return asyncio.run(coro)


def asgi_client(app: Any, **headers: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", headers=headers)
