"""Over a real TCP socket: uvicorn on 127.0.0.1, the sync and async clients, a bounded load test."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

from rewardlab.core import Sample
from rewardlab.errors import ServerError
from rewardlab.serve.client import AsyncClient, Client, RemoteReward
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore

from ._live import LiveServer, ObservedTransport, free_port
from ._rewards import Length

pytestmark = pytest.mark.network


def _samples(n: int, tag: str = "") -> list[Sample]:
    return [Sample(prompt="q", response=f"{tag}{'y' * (i % 11)}-{i}") for i in range(n)]


def test_sync_client_scores_over_a_socket_with_auth(make_app, tmp_path):
    app = make_app({"len": Length()}, ResultStore(tmp_path / "c.sqlite"), ServeSettings(workers=0, token="t0k"))
    samples = _samples(600)
    with LiveServer(app) as server, Client(server.url, token="t0k", batch_size=256) as client:
        assert client.health()["status"] == "ok"
        assert [r["name"] for r in client.rewards()] == ["len"]
        results = client.score("len", samples)
        assert [r.score for r in results] == [Length().compute(s) for s in samples]
        with Client(server.url, token="wrong", retries=0) as bad, pytest.raises(ServerError) as err:
            bad.score("len", samples[:1])
        assert (err.value.status, err.value.code) == (401, "unauthorized")


def test_async_client_sends_batches_concurrently(make_app):
    app = make_app({"len": Length()}, None, ServeSettings(workers=0))
    samples = _samples(1000)

    async def go(url: str):
        async with AsyncClient(url, batch_size=100, max_concurrency=4) as client:
            return await client.score("len", samples)

    with LiveServer(app) as server:
        results = asyncio.run(go(server.url))
    assert [r.score for r in results] == [Length().compute(s) for s in samples]


def test_remote_reward_is_a_reward(make_app):
    app = make_app({"len": Length()}, None, ServeSettings(workers=0))
    samples = _samples(5)
    with LiveServer(app) as server:
        remote = RemoteReward(server.url, "len")
        assert [r.score for r in remote.score_batch(samples)] == [Length().compute(s) for s in samples]
        assert remote.describe()["spec_hash"] == app.state.service.hosted["len"].spec_hash
        remote.close()
    unreachable = RemoteReward(server.url, "len", retries=0)
    result = unreachable.score(samples[0])
    assert result.status.value == "error" and result.error.kind.value == "remote"


def test_client_retries_until_the_server_comes_up(make_app):
    app = make_app({"len": Length()}, None, ServeSettings(workers=0))
    port = free_port()
    out: dict = {}

    transport = ObservedTransport()

    def call():
        with Client(f"http://127.0.0.1:{port}", retries=8, backoff=0.1, transport=transport) as client:
            out["results"] = client.score("len", _samples(3))

    caller = threading.Thread(target=call)
    caller.start()
    assert transport.failed.wait(30)  # an attempt found no server
    with LiveServer(app, port=port):
        caller.join(30)
    assert [r.score for r in out["results"]] == [Length().compute(s) for s in _samples(3)]


@pytest.mark.slow
def test_load_many_concurrent_clients_nothing_lost_duplicated_or_reordered(make_app):
    """Bounded: 16 clients x 20 requests x 32 samples, loopback only, 60 s cap."""
    app = make_app({"len": Length()}, None, ServeSettings(workers=0, max_wait_ms=5))
    clients, requests, size = 16, 20, 32

    async def one_client(url: str, k: int) -> list[bool]:
        ok = []
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            for j in range(requests):
                rows = [{"response": f"c{k}-r{j}-{'z' * (i % 5)}{i}"} for i in range(size)]
                reply = await http.post("/v1/rewards/len:score", json={"samples": rows})
                scores = [r["score"] for r in reply.json()["results"]]
                ok.append(reply.status_code == 200 and scores == [len(r["response"]) / 100 for r in rows])
        return ok

    async def go(url: str):
        return await asyncio.wait_for(asyncio.gather(*(one_client(url, k) for k in range(clients))), timeout=60)

    with LiveServer(app) as server:
        started = time.perf_counter()
        outcome = asyncio.run(go(server.url))
        seconds = time.perf_counter() - started
        metrics = httpx.get(f"{server.url}/metrics").text
    answered = [x for per_client in outcome for x in per_client]
    assert len(answered) == clients * requests and all(answered)
    assert f'rewardlab_samples_total{{reward="len",status="ok"}} {float(clients * requests * size)}' in metrics
    assert seconds < 60


def test_client_backs_off_on_429_and_then_succeeds(make_app):
    """Event-driven: the first request holds the queue (its reward waits on a gate) until the
    second client has been refused with 429; only then does the work go on."""
    from ._rewards import Gated

    gated = Gated()
    app = make_app({"slow": gated}, None, ServeSettings(workers=0, max_queue=8, max_batch=4, concurrency=1))
    first, second = _samples(8, "a"), _samples(8, "b")
    out: dict = {}
    refused = ObservedTransport()
    with LiveServer(app) as server:

        def call(key: str, samples: list[Sample], transport: httpx.BaseTransport | None = None) -> None:
            with Client(server.url, retries=5, backoff=0.1, max_concurrency=1, transport=transport) as client:
                out[key] = client.score("slow", samples)

        threads = [threading.Thread(target=call, args=("a", first))]
        threads[0].start()
        assert gated.entered.wait(30)  # the first request is queued and its first batch computing
        threads.append(threading.Thread(target=call, args=("b", second, refused)))
        threads[1].start()
        assert refused.refused.wait(30)  # the second client got 429 and backs off
        gated.release.set()
        for t in threads:
            t.join(30)
        metrics = httpx.get(f"{server.url}/metrics").text
    assert [r.score for r in out["a"]] == [Length().compute(s) for s in first]
    assert [r.score for r in out["b"]] == [Length().compute(s) for s in second]
    assert refused.statuses[0] == 429 and refused.statuses[-1] == 200
    assert 'rewardlab_rejected_total{reason="queue_full",reward="slow"}' in metrics


def test_clients_fetch_score_columns_across_batches(make_app):
    from rewardlab.core import ErrorKind, Status

    from ._rewards import Faulty

    app = make_app({"f": Faulty()}, None, ServeSettings(workers=0))
    samples = _samples(70)
    samples[3] = samples[65] = Sample(prompt="q", response="raise")  # errors in the first and last batch
    expected = [Length().compute(s) for s in samples]

    async def go(url: str):
        async with AsyncClient(url, batch_size=32, max_concurrency=3) as client:
            return await client.scores("f", samples)

    with LiveServer(app) as server, Client(server.url, batch_size=32) as client:
        got = [client.scores("f", samples), asyncio.run(go(server.url))]
    for scores in got:
        assert len(scores) == 70
        assert [v for i, v in enumerate(scores.values) if i not in (3, 65)] == [
            e for i, e in enumerate(expected) if i not in (3, 65)
        ]
        assert scores.values[3] is None and scores.values[65] is None
        assert scores.statuses.count(Status.ERROR) == 2 and scores.statuses[65] is Status.ERROR
        assert sorted(scores.errors) == [3, 65] and scores.errors[65].kind is ErrorKind.CRASH
