"""A server's pool workers hold none of its sockets: not the listening one, not a client's.

A worker holding the listening socket keeps the port bound after the server dies; one holding
a client's connection keeps it open after the server closed it (the client never sees the
end). Workers are forked from the pool's fork server, started before the server listens, so
this holds for replacement workers forked while clients are connected too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import psutil
import pytest

from rewardlab.serve.settings import ServeSettings

from ._live import LiveServer
from ._rewards import Faulty

pytestmark = [pytest.mark.network, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]


def _tcp_inodes(port: int) -> set[int]:
    """Inodes of every TCP socket on `port` at either end (the listener, both ends of each
    connection), from /proc/net/tcp and tcp6."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], int(fields[9])
            if port in (int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16)) and inode:
                inodes.add(inode)
    return inodes


def _socket_inodes(pid: int) -> set[int]:
    """Inodes of the sockets process `pid` holds open."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[len("socket:[") : -1]))
    return inodes


def test_a_pool_worker_holds_no_socket_of_the_server_first_or_replacement(make_app: object) -> None:
    app = make_app({"faulty": Faulty()}, None, ServeSettings(workers=1, sample_timeout=30))  # type: ignore[operator]
    rows = [{"response": "x" * k} for k in range(8)]
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        pool = app.state.service.hosted["faulty"].batcher.executor.pool._pool
        for _ in range(2):  # the worker forked first, then its replacement after a kill -9
            results = client.post("/v1/rewards/faulty:score", json={"samples": rows}).json()["results"]
            assert [r["score"] for r in results] == [k / 100 for k in range(8)]
            worker = pool._workers[0].process
            server_sockets = _tcp_inodes(server.port)
            assert len(server_sockets) >= 3  # listening, and this client's connection at both ends
            assert _socket_inodes(worker.pid) & server_sockets == set()
            psutil.Process(worker.pid).kill()
            worker.join(10)
            assert not worker.is_alive()
