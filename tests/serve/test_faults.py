"""Faults: rewards that crash, hang or leak mid-batch on the worker-pool backend, over a socket."""

from __future__ import annotations

import os

import psutil
import pytest

from rewardlab.serve.client import Client
from rewardlab.serve.settings import ServeSettings

from ._live import LiveServer
from ._rewards import Faulty

pytestmark = [pytest.mark.network, pytest.mark.slow]


def test_crash_hang_and_raise_mid_batch_become_typed_errors_and_the_server_keeps_serving(make_app):
    settings = ServeSettings(workers=2, sample_timeout=1.0)
    app = make_app({"faulty": Faulty()}, None, settings)
    rows = ["a", "bb", "crash", "ccc", "hang", "dddd", "raise", "eeeee"]
    with LiveServer(app) as server, Client(server.url) as client:
        results = client.score("faulty", [{"response": r} for r in rows])
        after = client.score("faulty", [{"response": "still here"}])
    by_row = dict(zip(rows, results, strict=True))
    assert [by_row[r].score for r in ("a", "bb", "ccc", "dddd", "eeeee")] == [0.01, 0.02, 0.03, 0.04, 0.05]
    assert by_row["crash"].error.kind.value == "crash" and "died" in by_row["crash"].error.message
    assert by_row["hang"].error.kind.value == "timeout"
    assert by_row["raise"].error.kind.value == "crash" and "verifier bug" in by_row["raise"].error.message
    assert after[0].score == 0.1
    stats = app.state.service.hosted["faulty"].batcher.executor.pool.stats
    assert stats.timeouts == 1 and stats.crashes == 1


def test_a_leaking_reward_does_not_grow_the_server(make_app):
    app = make_app({"faulty": Faulty()}, None, ServeSettings(workers=2, sample_timeout=10))
    me = psutil.Process(os.getpid())
    with LiveServer(app) as server, Client(server.url) as client:
        client.score("faulty", [{"response": "warm-up"}])
        before = me.memory_info().rss
        results = client.score("faulty", [{"response": "leak", "meta": {"i": i}} for i in range(6)] + [{"response": "x"}])
        grown = me.memory_info().rss - before
    assert [r.score for r in results] == [0.5] * 6 + [0.01]
    assert grown < 64 * 1024 * 1024  # 6 x 64 MiB stayed in the worker processes
