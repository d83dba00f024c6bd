"""Fault injection over the worker pool and the socket server: faults mixed at random (seeded)
into thousands of samples, each run checking that every row is answered exactly once, in order,
with the right value or the typed error its fault calls for, that nothing waits past its
deadline, that health matches reality afterwards, and that the metrics count what was sent.

Faults: kill -9 of random busy workers mid-batch, a sample whose worker never answers (killed at
the per-sample timeout), a worker that dies (`os._exit`), a reward that raises, values too deep to
pickle, and at the HTTP level malformed, too deeply nested, oversize and over-long bodies,
clients that disconnect halfway through a request, and another process holding the cache's SQLite
file locked.
"""

from __future__ import annotations

import contextlib
import random
import re
import socket
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
import psutil
import pytest

from deadlines import nested, within_deadline
from rewardlab.core import Sample
from rewardlab.runner import WorkerPool
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore

from ._live import LiveServer
from ._rewards import Faulty

pytestmark = [pytest.mark.slow, pytest.mark.network, pytest.mark.timeout(300)]

SEED = 20260
# Per sample: what a never-answering worker costs; far above what any other row takes, even on a
# loaded machine (a worker's own exit can take a few hundred milliseconds there).
TIMEOUT = 1.0
# Row kinds and their share of the rows (the rest are plain rows with a known score).
FAULTS = {"sleep": 0.003, "crash": 0.055, "raise": 0.055, "deep": 0.055}
# What each fault's row must be: (status, error kind, a phrase of the message).
EXPECTED = {
    "sleep": ("timeout", "per-sample timeout"),
    "crash": ("crash", "exit code 3"),
    "raise": ("crash", "verifier bug"),
    "deep": ("invalid_input", "nested too deep"),
}


def make_rows(rng: random.Random, n: int) -> list[tuple[str, dict[str, Any]]]:
    """`n` (kind, sample row) pairs; a plain row's response is unique, so its score is known."""
    rows = []
    for i in range(n):
        draw, kind = rng.random(), "plain"
        for name, share in FAULTS.items():
            if draw < share:
                kind = name
                break
            draw -= share
        if kind == "plain":
            rows.append((kind, {"response": "x" * rng.randrange(0, 50) + f"#{i}"}))
        elif kind == "deep":
            rows.append((kind, {"response": f"deep#{i}", "meta": {"m": nested(600)}}))
        else:
            rows.append((kind, {"response": kind}))
    return rows


def plain_score(row: dict[str, Any]) -> float:
    return len(row["response"]) / 100


@dataclass
class Killer:
    """kill -9 of a random busy worker of `pool`, every few tens of milliseconds, until stopped."""

    pool: Any  # the ProcessPool under a WorkerPool / PoolExecutor
    rng: random.Random
    kills: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.wait(self.rng.uniform(0.005, 0.04)):
            busy = [w for w in list(self.pool._workers) if w.task is not None and not _sleeping(w)]
            if busy:
                with contextlib.suppress(psutil.NoSuchProcess):  # it finished and was recycled meanwhile
                    psutil.Process(self.rng.choice(busy).process.pid).kill()
                    self.kills += 1

    def __enter__(self) -> Killer:
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)


def _sleeping(worker: Any) -> bool:
    """Whether `worker` is on a never-answering sample: those are left to the timeout, so that
    the timeout is exercised (a kill would beat it)."""
    task = worker.task
    try:
        item = task.entries[int(worker.progress[0])][1]
    except (AttributeError, IndexError):
        return False
    return isinstance(item, Sample) and item.response_text == "sleep"


@dataclass
class CacheLocker:
    """Another process's exclusive transaction on the cache file, held for random spells."""

    path: str
    rng: random.Random
    spells: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        other = sqlite3.connect(self.path, isolation_level=None, timeout=5)
        try:
            while not self.stop.wait(self.rng.uniform(0.05, 0.3)):
                other.execute("BEGIN EXCLUSIVE")
                self.spells += 1
                self.stop.wait(self.rng.uniform(0.05, 0.3))
                other.execute("ROLLBACK")
        finally:
            other.close()

    def __enter__(self) -> CacheLocker:
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)


def check_row(kind: str, row: dict[str, Any], status: str, score: float | None, error: dict[str, Any] | None, killed: list[str]) -> None:
    """The row's answer is its right value or the typed error its fault calls for; a row whose
    worker the killer took is an `error/crash` (listed, and bounded by the kills after the run)."""
    if error is not None and error["kind"] == "crash" and "died" in error["message"] and "exit code 3" not in error["message"]:
        killed.append(row["response"])  # the killer's kill -9 (a `crash` row's own exit is code 3)
        return
    if kind == "plain":
        assert status == "ok" and score == pytest.approx(plain_score(row)), (row, status, score, error)
        return
    want_kind, phrase = EXPECTED[kind]
    assert status == "error" and error is not None and error["kind"] == want_kind and phrase in error["message"], (kind, error)


def test_the_pool_under_random_faults_answers_every_row_once_and_recovers():
    rng = random.Random(SEED)
    batches = [make_rows(rng, rng.randrange(200, 600)) for _ in range(12)]
    total = sum(map(len, batches))
    assert total >= 2500
    killed: list[str] = []
    started = time.monotonic()
    with WorkerPool(Faulty(), workers=2, timeout=TIMEOUT) as pool, Killer(pool._pool, random.Random(SEED + 1)) as killer:
        for batch in batches:
            samples = [Sample.from_dict(row) if kind != "deep" else Sample(response=row["response"], meta=row["meta"]) for kind, row in batch]
            # No call may hang: the worst case is every sleeping row's timeout, one after another.
            results = within_deadline(pool.map, samples, deadline=60)
            assert len(results) == len(batch)
            for (kind, row), result in zip(batch, results, strict=True):
                error = result.error.to_dict() if result.error else None
                check_row(kind, row, result.status.value, result.score, error, killed)
    kinds = Counter(kind for batch in batches for kind, _ in batch)
    assert all(kinds[k] >= 10 for k in FAULTS), kinds  # every fault was injected, many times
    assert killer.kills >= 50 and len(killed) <= killer.kills
    assert time.monotonic() - started < 90


def _disconnect_midway(port: int, rng: random.Random) -> None:
    """A client that sends part of a request and goes away."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        body = b'{"samples": [{"response": "abc"}]}'
        head = f"POST /v1/rewards/faulty:score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        s.sendall(head.encode() + body[: rng.randrange(0, len(body))])


def _bad_request(client: httpx.Client, port: int, rng: random.Random, kind: str) -> int | None:
    """Send one malformed request of `kind`; the status the server answered (None: no answer expected)."""
    url = "/v1/rewards/faulty:score"
    headers = {"content-type": "application/json"}
    if kind == "malformed":
        return client.post(url, content=b'{"samples": [{"response": ', headers=headers).status_code
    if kind == "too_deep":
        body = '{"samples": [{"response": "a", "meta": {"m": ' + "[" * 3000 + "]" * 3000 + "}}]}"
        return client.post(url, content=body, headers=headers).status_code
    if kind == "oversize":
        return client.post(url, json={"samples": [{"response": "y" * 300_000}]}).status_code
    if kind == "too_many":
        return client.post(url, json={"samples": [{"response": "z"}] * 300}).status_code
    _disconnect_midway(port, rng)
    return None


BAD = {"malformed": (400, "malformed_json"), "too_deep": (400, "invalid_input"), "oversize": (413, "body_too_large"), "too_many": (413, "too_many_samples")}


def test_the_socket_server_under_random_faults_answers_every_row_once_and_stays_healthy(make_app, tmp_path):
    settings = ServeSettings(workers=2, sample_timeout=TIMEOUT, request_timeout=60, max_body_bytes=256 * 1024, max_samples=256)
    cache = ResultStore(tmp_path / "cache.sqlite")
    app = make_app({"faulty": Faulty()}, cache, settings)
    pool = app.state.service.hosted["faulty"].batcher.executor.pool._pool
    rng = random.Random(SEED + 2)
    plain = make_rows(rng, 4000)
    # Repeat a third of the rows in later requests: answered from the cache, or shared in flight.
    rows = plain + rng.sample(plain, len(plain) // 3)
    requests = []
    while rows:
        size = rng.randrange(1, 96)
        requests.append(rows[:size])
        rows = rows[size:]
    bad = [rng.choice([*BAD, "disconnect"]) for _ in range(60)]
    killed: list[str] = []
    sent_bad: Counter[int] = Counter()
    lock = threading.Lock()
    failures: list[BaseException] = []

    def client_thread(mine: list[list[tuple[str, dict[str, Any]]]], my_bad: list[str], seed: int) -> None:
        local = random.Random(seed)
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                for left, request in zip(range(len(mine), 0, -1), mine, strict=True):
                    while my_bad and local.random() < len(my_bad) / left:  # spread over the requests
                        kind = my_bad.pop()
                        status = _bad_request(client, server.port, local, kind)
                        if kind in BAD:
                            assert status == BAD[kind][0], (kind, status)
                            with lock:
                                sent_bad[status] += 1
                    reply = client.post("/v1/rewards/faulty:score", json={"samples": [row for _, row in request]})
                    assert reply.status_code == 200, reply.text[:300]
                    results = reply.json()["results"]
                    assert len(results) == len(request)
                    with lock:
                        for (kind, row), result in zip(request, results, strict=True):
                            check_row(kind, row, result["status"], result.get("score"), result.get("error"), killed)
        except BaseException as exc:  # handed to the test below
            failures.append(exc)

    started = time.monotonic()
    locker = CacheLocker(str(tmp_path / "cache.sqlite"), random.Random(SEED + 4))
    with LiveServer(app) as server, Killer(pool, random.Random(SEED + 3)) as killer, locker:
        threads = [
            threading.Thread(target=client_thread, args=(requests[k::4], bad[k::4], SEED + 10 + k), daemon=True) for k in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads), "a client waited past its deadline"
        killer.stop.set()
        assert not failures, failures[0]
        with httpx.Client(base_url=server.url, timeout=30) as client:
            assert client.get("/readyz").status_code == 200 and client.get("/healthz").status_code == 200
            after = client.post("/v1/rewards/faulty:score", json={"samples": [{"response": "after"}]}).json()["results"]
            assert after[0]["score"] == 0.05
            metrics = client.get("/metrics").text
    assert time.monotonic() - started < 120
    # One kill may answer several rows: identical samples in flight are computed once and shared.
    assert len(set(killed)) <= killer.kills and killer.kills >= 20 and locker.spells >= 5
    # The metrics count the refused requests: every 413 sent; every 400 sent, plus any a client
    # that disconnected midway earned.
    for status, count in sent_bad.items():
        counted = sum(float(n) for n in re.findall(rf'rewardlab_requests_total{{code="{status}",route="[^"]*"}} ([0-9.]+)', metrics))
        assert counted == count if status == 413 else counted >= count, (status, count, counted)
    cache.close()
