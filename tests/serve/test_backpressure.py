"""Backpressure over a real socket: oversize requests get 413 (and the client splits them),
full queues get 429 (and clients back off with jitter, at least Retry-After), nobody starves."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from rewardlab.core import Sample
from rewardlab.serve.client import AsyncClient, Client, _Retry
from rewardlab.serve.settings import ServeSettings

from ._live import LiveServer, asgi_client, run
from ._rewards import Length, Slow

pytestmark = pytest.mark.network


def _samples(n: int, tag: str) -> list[Sample]:
    return [Sample(prompt="q", response=f"{tag}-{'y' * (i % 7)}{i}") for i in range(n)]


def test_request_larger_than_the_queue_is_413_not_429(make_app):
    app = make_app({"len": Length()}, None, ServeSettings(workers=0, max_queue=8))

    async def go():
        async with asgi_client(app) as c:
            return await c.post("/v1/rewards/len:score", json={"samples": [{"response": str(i)} for i in range(9)]})

    reply = run(go())
    assert reply.status_code == 413  # a 429 would be retried forever: it can never fit
    error = reply.json()["error"]
    assert error["code"] == "exceeds_queue" and "at most 8" in error["message"]


def test_client_splits_a_batch_the_server_finds_too_large(make_app):
    app = make_app({"len": Length()}, None, ServeSettings(workers=0, max_queue=8))
    samples = _samples(30, "s")
    with LiveServer(app) as server, Client(server.url, batch_size=30, retries=0) as client:
        results = client.score("len", samples)
        columns = client.scores("len", samples)
    assert [r.score for r in results] == [Length().compute(s) for s in samples]  # in order
    assert columns.values == [Length().compute(s) for s in samples]


def test_use_cache_must_be_a_real_boolean(make_app):
    app = make_app({"len": Length()}, None, ServeSettings(workers=0))

    async def go(value):
        async with asgi_client(app) as c:
            return await c.post("/v1/rewards/len:score", json={"samples": [{"response": "a"}], "use_cache": value})

    for value in ("yes", "true", 1, "false"):
        reply = run(go(value))
        assert reply.status_code == 422, value
        assert reply.json()["error"]["details"][0]["loc"][-1] == "use_cache"
    assert run(go(False)).status_code == 200


def test_retry_waits_at_least_retry_after_and_spreads_clients():
    retry = _Retry(retries=4, backoff=0.5)
    told = httpx.Response(429, headers={"Retry-After": "2"})
    waits = [retry.delay(0, told) for _ in range(200)]
    assert min(waits) >= 2.0  # honoured
    assert max(waits) - min(waits) > 1.0  # and jittered: clients told "2" do not return together
    assert len({round(w, 3) for w in waits}) > 150
    plain = [retry.delay(3, None) for _ in range(200)]
    assert min(plain) >= 2.0 and max(plain) <= 4.0  # 0.5 * 2**3 with equal jitter


@pytest.mark.slow
def test_sixteen_clients_with_oversize_batches_all_finish(make_app):
    """16 clients on a queue of 64: half send 100-sample batches (413, split), all fill the
    queue (429, back off). Every client finishes with every result, in order; 90 s cap."""
    settings = ServeSettings(workers=0, max_queue=64, max_batch=16, concurrency=1)
    app = make_app({"slow": Slow(delay=0.0005)}, None, settings)
    clients = 16

    async def one_client(url: str, k: int) -> bool:
        samples = _samples(200, f"c{k}")
        async with AsyncClient(url, batch_size=100 if k % 2 == 0 else 32, max_concurrency=2) as client:
            results = await client.score("slow", samples)
        return [r.score for r in results] == [Length().compute(s) for s in samples]

    async def go(url: str) -> list[bool]:
        return await asyncio.wait_for(asyncio.gather(*(one_client(url, k) for k in range(clients))), timeout=90)

    with LiveServer(app) as server:
        started = time.perf_counter()
        outcome = asyncio.run(go(server.url))
        seconds = time.perf_counter() - started
        metrics = httpx.get(f"{server.url}/metrics").text
    assert outcome == [True] * clients
    assert 'code="413"' in metrics  # the oversize batches were refused and split
    assert 'rewardlab_rejected_total{reason="queue_full",reward="slow"}' in metrics  # and the queue did fill
    assert seconds < 90


def test_429_is_retried_past_the_failure_count_until_the_overload_timeout():
    retry = _Retry(retries=1, backoff=0.1, overload_timeout=10.0)
    schedule = retry.schedule()
    overloaded = httpx.Response(429, headers={"Retry-After": "1"})
    waits = []
    while (wait := schedule.wait(overloaded)) is not None:
        waits.append(wait)
    assert len(waits) > retry.retries + 1  # a full queue is not a failure: keep coming back
    assert sum(waits) <= 10.0 and all(w >= 1.0 for w in waits)
    failing = retry.schedule()
    assert failing.wait(httpx.Response(503)) is not None and failing.wait(httpx.Response(503)) is None
    assert retry.schedule().wait(httpx.Response(400)) is None  # not retryable at all
