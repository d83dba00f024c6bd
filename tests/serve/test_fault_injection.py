"""Fault injection over the worker pool and the socket server: faults mixed at random (seeded)
into thousands of samples, in bursts. Each burst checks that every row is answered exactly once,
in order, with the right value or the typed error its fault calls for, and that nothing waits past
its deadline; after each burst, that health matches reality (the pool takes work again, `/readyz`
and `/healthz` say 200, and 503 while a batch is stuck past its request timeout) and that the
counts (the pool's own, the server's metrics) match the faults injected.

Faults, and how many each run injects (fixed per burst, placed at random): kill -9 of random busy
workers mid-batch (>= 200), samples whose worker never answers (killed at the per-sample timeout;
>= 200, over four pools at once with a short timeout), workers that die (`os._exit`; >= 200),
rewards that raise (>= 200), values too deep to pickle (>= 200). The socket server gets >= 200 of
each of these in-row faults too (its never-answering rows mostly to a reward of their own, with
8 workers and a short timeout, so that they wait in parallel), with kill -9 of its busy workers
meanwhile, and at the HTTP level malformed, too deeply nested, oversize and over-long bodies and
clients that disconnect halfway (>= 200 each), and another process holding the cache's SQLite
file locked (>= 200 spells).
"""

from __future__ import annotations

import contextlib
import random
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
from prometheus_client.parser import text_string_to_metric_families

from deadlines import nested, within_deadline
from rewardlab.core import Sample
from rewardlab.runner import WorkerPool
from rewardlab.serve.settings import RewardLimits, ServeSettings
from rewardlab.store import ResultStore

from ._live import LiveServer
from ._rewards import Faulty

pytestmark = [pytest.mark.slow, pytest.mark.network, pytest.mark.isolated, pytest.mark.timeout(300)]

SEED = 20260
# Per sample, where rows may die on their own: far above what any other row takes, even on a
# loaded machine (a worker's own exit can take a few hundred milliseconds there, and a dying
# row must be a `crash`, not a `timeout`).
TIMEOUT = 1.0
# Per sample, where the only slow rows are the never-answering ones: each costs this much.
SHORT_TIMEOUT = 0.4
# What each fault's row must be: (error kind, a phrase of the message).
EXPECTED = {
    "sleep": ("timeout", "per-sample timeout"),
    "crash": ("crash", "exit code 3"),
    "raise": ("crash", "verifier bug"),
    "deep": ("invalid_input", "nested too deep"),
}
#: At least this many faults of every kind are injected.
AT_LEAST = 200


def make_rows(rng: random.Random, plain: int, faults: dict[str, int], tag: str = "") -> list[tuple[str, dict[str, Any]]]:
    """`plain` plain rows and `faults[kind]` rows of each fault kind, shuffled; every row is
    distinct (a plain row's unique response gives its known score; a fault row carries its
    position in `meta`), so no two are computed once and shared."""
    kinds = ["plain"] * plain + [kind for kind, n in faults.items() for _ in range(n)]
    rng.shuffle(kinds)
    rows = []
    for i, kind in enumerate(kinds):
        if kind == "plain":
            rows.append((kind, {"response": "x" * rng.randrange(0, 50) + f"#{tag}{i}"}))
        elif kind == "deep":
            rows.append((kind, {"response": f"deep#{tag}{i}", "meta": {"m": nested(600)}}))
        else:
            rows.append((kind, {"response": kind, "meta": {"row": f"{tag}{i}"}}))
    return rows


def as_samples(rows: list[tuple[str, dict[str, Any]]]) -> list[Sample]:
    # `Sample.from_dict` refuses a value nested too deep to check; the pool is given one anyway.
    return [Sample.from_dict(row) if kind != "deep" else Sample(response=row["response"], meta=row["meta"]) for kind, row in rows]


def plain_score(row: dict[str, Any]) -> float:
    return len(row["response"]) / 100


@dataclass
class Killer:
    """kill -9 of a random busy worker of `pool`, every few tens of milliseconds, while active."""

    pool: Any  # the ProcessPool under a WorkerPool / PoolExecutor
    rng: random.Random
    every: tuple[float, float] = (0.005, 0.04)  # seconds between kills, drawn uniformly
    # kills left until the caller gives more (None: no limit): a fixed number per burst, since a
    # killer that kills whenever a worker is busy keeps the pool busy redoing killed chunks
    allowance: int | None = None
    kills: int = 0
    last: psutil.Process | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    active: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self) -> None:
        while not self.stop.wait(self.rng.uniform(*self.every)):
            with self.lock:
                if not self.active.is_set() or self.allowance == 0:
                    continue
                busy = [w for w in list(self.pool._workers) if w.task is not None and not _sleeping(w)]
                if busy:
                    with contextlib.suppress(psutil.NoSuchProcess):  # it finished and was recycled meanwhile
                        self.last = psutil.Process(self.rng.choice(busy).process.pid)
                        self.last.kill()
                        self.kills += 1
                        if self.allowance is not None:
                            self.allowance -= 1

    @contextlib.contextmanager
    def paused(self) -> Any:
        """No kill while the caller checks health and counts. The last kill has landed first: a
        signal is delivered asynchronously, and a worker that finished its chunk just as it was
        killed would otherwise look alive when the next chunk is sent, and that chunk's first
        row would be blamed for its death."""
        with self.lock:
            self.active.clear()
            if self.last is not None:
                assert _wait_for(lambda: _dead(self.last), 10), "a killed worker did not die"
        try:
            yield
        finally:
            self.active.set()

    def __enter__(self) -> Killer:
        self.active.set()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)


def _dead(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE  # dead, not reaped yet
    except psutil.NoSuchProcess:
        return True


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
    """Another process's exclusive transaction on the cache file, held for short random spells."""

    path: str
    rng: random.Random
    spells: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        other = sqlite3.connect(self.path, isolation_level=None, timeout=5)
        try:
            while not self.stop.wait(self.rng.uniform(0.01, 0.05)):
                other.execute("BEGIN EXCLUSIVE")
                self.spells += 1
                self.stop.wait(self.rng.uniform(0.005, 0.05))
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


def others_killed(killed: list[tuple[str, str]]) -> int:
    """Killed rows that were not dying rows anyway (those count once, as dying rows)."""
    return len({key for kind, key in killed if kind != "crash"})


def check_row(
    kind: str, row: dict[str, Any], status: str, score: float | None, error: dict[str, Any] | None, killed: list[tuple[str, str]]
) -> None:
    """The row's answer is its right value or the typed error its fault calls for; a row whose
    worker the killer took is an `error/crash` (listed, and bounded by the kills after the run)."""
    if error is not None and error["kind"] == "crash" and "died" in error["message"] and "exit code 3" not in error["message"]:
        # the killer's kill -9 (it may beat a dying row's own exit: that row is still a crash)
        killed.append((kind, row["response"] + repr(row.get("meta", {}).get("row"))))
        return
    if kind == "plain":
        assert status == "ok" and score == pytest.approx(plain_score(row)), (row, status, score, error)
        return
    want_kind, phrase = EXPECTED[kind]
    assert status == "error" and error is not None and error["kind"] == want_kind and phrase in error["message"], (kind, error)


PROBE = [Sample(response="p" * k) for k in range(12)]


def pool_takes_work(pool: WorkerPool) -> None:
    """Health of a pool: a normal batch right after a burst gets its right values, promptly."""
    results = within_deadline(pool.map, PROBE, deadline=20)
    assert [(r.status.value, r.score) for r in results] == [("ok", k / 100) for k in range(12)]


def test_never_answering_samples_cost_one_timeout_each_over_concurrent_pools():
    """>= 200 samples whose worker never answers, over four pools at once (a timeout each costs
    `SHORT_TIMEOUT`; sleeping workers use no CPU, so the pools wait in parallel): each is that
    row's `error/timeout`, its worker is replaced (the pool's count says exactly one restart per
    timeout, no crash), and after every burst the pool takes normal work at once."""
    per_pool, bursts = 4, 13  # 4 pools x 4 bursts x 13 = 208 never-answering samples
    failures: list[BaseException] = []
    injected: Counter[str] = Counter()
    lock = threading.Lock()

    def one_pool(k: int) -> None:
        rng = random.Random(SEED + 100 + k)
        try:
            with WorkerPool(Faulty(), workers=2, timeout=SHORT_TIMEOUT) as pool:
                for burst in range(per_pool):
                    rows = make_rows(rng, rng.randrange(40, 120), {"sleep": bursts}, tag=f"{k}.{burst}.")
                    before = (pool.stats.timeouts, pool.stats.crashes)
                    # Worst case: every timeout one after another on one worker, plus slack.
                    results = within_deadline(pool.map, as_samples(rows), deadline=bursts * SHORT_TIMEOUT + 30)
                    assert len(results) == len(rows)
                    for (kind, row), result in zip(rows, results, strict=True):
                        check_row(kind, row, result.status.value, result.score, result.error.to_dict() if result.error else None, [])
                    assert (pool.stats.timeouts - before[0], pool.stats.crashes - before[1]) == (bursts, 0)
                    pool_takes_work(pool)
                    with lock:
                        injected["sleep"] += bursts
        except BaseException as exc:  # handed to the test below
            failures.append(exc)

    started = time.monotonic()
    threads = [threading.Thread(target=one_pool, args=(k,), daemon=True) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a pool waited past its deadline"
    assert not failures, failures[0]
    print(f"injected over the pools: {dict(injected)}")  # shown with -s: the counts the suite reports
    assert injected["sleep"] >= AT_LEAST
    assert time.monotonic() - started < 60


def test_the_pool_under_random_faults_answers_every_row_once_and_recovers_after_each_burst():
    """Bursts of rows that die, raise or cannot be pickled, with kill -9 of busy workers meanwhile.
    After each burst (kills paused): the pool takes normal work, no row timed out, the pool counts
    one refusal per deep row and a crash per dying row plus at most one per kill."""
    rng = random.Random(SEED)
    per_burst = {"crash": 17, "raise": 17, "deep": 17}
    bursts = 12  # 204 of each; more while the killer is short of its 200 kills (a burst may end
    # before its 18 kills on a fast machine), at most 60
    killed: list[tuple[str, str]] = []
    injected: Counter[str] = Counter()
    started = time.monotonic()
    with WorkerPool(Faulty(), workers=2, timeout=TIMEOUT) as pool, Killer(pool._pool, random.Random(SEED + 1), every=(0.002, 0.008), allowance=0) as killer:
        stats = pool.stats
        burst = 0
        while burst < bursts or (killer.kills < AT_LEAST and burst < 60):
            burst += 1
            killer.allowance += 18  # 216 over the 12 bursts (what a short burst leaves goes to the next)
            rows = make_rows(rng, rng.randrange(300, 600), per_burst, tag=f"{burst}.")
            refused = stats.per_kind.get("invalid_input", 0)
            results = within_deadline(pool.map, as_samples(rows), deadline=60)
            assert len(results) == len(rows)
            for (kind, row), result in zip(rows, results, strict=True):
                check_row(kind, row, result.status.value, result.score, result.error.to_dict() if result.error else None, killed)
            with killer.paused():
                pool_takes_work(pool)
                injected.update(kind for kind, _ in rows if kind != "plain")
                assert stats.timeouts == 0
                assert stats.per_kind.get("invalid_input", 0) - refused == per_burst["deep"]
                # Every dying row is one crash; a kill is at most one (it may hit a worker
                # that is exiting already); a killed row is one kill.
                assert injected["crash"] + others_killed(killed) <= stats.crashes <= injected["crash"] + killer.kills
                assert stats.restarts >= stats.crashes
    injected["kill"] = killer.kills
    print(f"injected into the pool: {dict(injected)}; rows killed: {len(killed)}")
    assert all(injected[k] >= AT_LEAST for k in ("crash", "raise", "deep", "kill")), injected
    assert len(killed) <= killer.kills
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
BAD_KINDS = [*BAD, "disconnect"]


def scrape(client: httpx.Client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The server's metrics: (sample name, sorted labels) -> value."""
    out = {}
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for sample in family.samples:
            out[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return out


def metric(values: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    """Sum of `name` over the series whose labels include `labels`."""
    return sum(v for (n, have), v in values.items() if n == name and set(labels.items()) <= set(have))


def _wait_for(condition: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def check_stuck_batch_is_reported(client: httpx.Client) -> None:
    """A batch stuck past its request timeout: the request gets 504, `/readyz` and `/healthz` say
    503 while it is stuck (its one batch slot is held), and 200 again once the per-sample timeout
    has killed it; the pool counts the timeout."""
    before = metric(scrape(client), "rewardlab_worker_restarts_total", reward="stuck", reason="timeout")
    reply = client.post("/v1/rewards/stuck:score", json={"samples": [{"response": "sleep", "meta": {"t": time.monotonic()}}]})
    assert reply.status_code == 504, reply.text[:300]
    assert _wait_for(lambda: client.get("/readyz").status_code == 503, 1.0)
    assert client.get("/healthz").status_code == 503
    assert client.get("/readyz").json()["error"]["details"][0]["stuck"] == 1
    assert _wait_for(lambda: client.get("/readyz").status_code == 200, 15), "still not ready after the per-sample timeout"
    assert client.get("/healthz").status_code == 200
    assert metric(scrape(client), "rewardlab_worker_restarts_total", reward="stuck", reason="timeout") == before + 1


def test_the_socket_server_under_random_faults_answers_every_row_once_and_health_tells_the_truth(make_app, tmp_path):
    settings = ServeSettings(
        workers=2, sample_timeout=TIMEOUT, request_timeout=60, max_body_bytes=256 * 1024, max_samples=256,
        per_reward={
            "stuck": RewardLimits(workers=1, concurrency=1, sample_timeout=2.5, request_timeout=0.5),
            # never-answering rows in bulk: sleeping workers use no CPU, so many wait at once
            "sleepy": RewardLimits(workers=8, sample_timeout=SHORT_TIMEOUT),
        },
    )  # fmt: skip
    cache = ResultStore(tmp_path / "cache.sqlite")
    app = make_app({"faulty": Faulty(), "stuck": Faulty(), "sleepy": Faulty()}, cache, settings)
    pool = app.state.service.hosted["faulty"].batcher.executor.pool._pool
    rng = random.Random(SEED + 2)
    bursts = 8
    per_burst = {"crash": 26, "raise": 26, "deep": 26, "sleep": 2}  # 208 of each but `sleep` (16)
    sleepy_per_burst = 26  # never-answering rows to "sleepy": 208, and 16 more to "faulty"
    kills_per_burst = 27  # kill -9 of a busy worker of "faulty": 216 (if the burst keeps them busy that long)
    bad_per_burst = {kind: 26 for kind in BAD_KINDS}  # 208 of each
    killed: list[tuple[str, str]] = []
    answered: Counter[str] = Counter()  # error kinds in the replies
    sent_bad: Counter[int] = Counter()
    lock = threading.Lock()
    failures: list[BaseException] = []
    injected: Counter[str] = Counter()

    def sleepy_thread(server: LiveServer, sleepy: list[tuple[str, dict[str, Any]]]) -> None:
        """One request of never-answering and plain rows to "sleepy", beside the other clients."""
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                reply = client.post("/v1/rewards/sleepy:score", json={"samples": [row for _, row in sleepy]})
                assert reply.status_code == 200, reply.text[:300]
                not_killed: list[tuple[str, str]] = []  # nothing kills "sleepy"'s workers
                for (kind, row), result in zip(sleepy, reply.json()["results"], strict=True):
                    check_row(kind, row, result["status"], result.get("score"), result.get("error"), not_killed)
                assert not not_killed and len(reply.json()["results"]) == len(sleepy)
        except BaseException as exc:  # handed to the test below
            failures.append(exc)

    def client_thread(server: LiveServer, mine: list[list[tuple[str, dict[str, Any]]]], my_bad: list[str], seed: int) -> None:
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
                            if result.get("error"):
                                answered[result["error"]["kind"]] += 1
        except BaseException as exc:  # handed to the test below
            failures.append(exc)

    started = time.monotonic()
    locker = CacheLocker(str(tmp_path / "cache.sqlite"), random.Random(SEED + 4))
    plain_seen: list[tuple[str, dict[str, Any]]] = []
    killer = Killer(pool, random.Random(SEED + 3), every=(0.002, 0.02), allowance=0)
    with LiveServer(app) as server, killer, locker, httpx.Client(base_url=server.url, timeout=30) as ops:
        for burst in range(bursts):
            killer.allowance += kills_per_burst  # what a short burst leaves goes to the next
            rows = make_rows(rng, 500, per_burst, tag=f"{burst}.")
            # Repeat plain rows of earlier bursts: answered from the cache, or shared in flight.
            rows += rng.sample(plain_seen, min(len(plain_seen), 150))
            rng.shuffle(rows)
            plain_seen += [r for r in rows if r[0] == "plain"]
            requests = []
            while rows:
                size = rng.randrange(1, 96)
                requests.append(rows[:size])
                rows = rows[size:]
            bad = [kind for kind, n in bad_per_burst.items() for _ in range(n)]
            rng.shuffle(bad)
            before = scrape(ops)
            errors_before, answered_before, sent_before = len(killed), Counter(answered), Counter(sent_bad)
            sleepy = make_rows(rng, 40, {"sleep": sleepy_per_burst}, tag=f"s{burst}.")
            sleepy_before = metric(before, "rewardlab_errors_total", reward="sleepy", kind="timeout")
            threads = [
                threading.Thread(target=client_thread, args=(server, requests[k::4], bad[k::4], SEED + 10 * burst + k), daemon=True)
                for k in range(4)
            ]
            threads.append(threading.Thread(target=sleepy_thread, args=(server, sleepy), daemon=True))
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            assert not any(t.is_alive() for t in threads), "a client waited past its deadline"
            assert not failures, failures[0]
            injected.update(per_burst)
            injected.update(bad_per_burst)
            injected["sleep"] += sleepy_per_burst
            with killer.paused():
                # Health after the burst: the pool takes work at once, and says so.
                assert ops.get("/readyz").status_code == 200 and ops.get("/healthz").status_code == 200
                after = ops.post("/v1/rewards/faulty:score", json={"samples": [{"response": f"after{burst}"}]}).json()["results"]
                assert after[0]["score"] == pytest.approx(len(f"after{burst}") / 100)
                if burst % 3 == 0:
                    check_stuck_batch_is_reported(ops)
                now = scrape(ops)
                burst_killed = Counter(kind for kind, _ in killed[errors_before:])
                check_burst_metrics(before, now, answered - answered_before, sent_bad - sent_before, per_burst, burst_killed)
                # every never-answering row of "sleepy" is one timeout and one worker replaced
                assert metric(now, "rewardlab_errors_total", reward="sleepy", kind="timeout") - sleepy_before == sleepy_per_burst
                assert metric(now, "rewardlab_worker_restarts_total", reward="sleepy", reason="timeout") == sleepy_per_burst * (burst + 1)
                restarts = metric(now, "rewardlab_worker_restarts_total", reward="faulty", reason="crash")
                assert restarts == pool.stats.crashes
                assert injected["crash"] + others_killed(killed) <= restarts <= injected["crash"] + killer.kills
                # A never-answering row is left to its timeout, unless a kill beat it (the killer
                # reads which row a worker is on without a lock): then it is a killed row.
                assert metric(now, "rewardlab_worker_restarts_total", reward="faulty", reason="timeout") == answered["timeout"]
                assert answered["timeout"] + sum(kind == "sleep" for kind, _ in killed) == injected["sleep"] - sleepy_per_burst * (burst + 1)
    assert time.monotonic() - started < 120
    injected["kill"], injected["lock"] = killer.kills, locker.spells
    print(f"injected into the server: {dict(injected)}; rows killed: {len(killed)}")
    assert all(injected[kind] >= AT_LEAST for kind in (*BAD_KINDS, "lock", "crash", "raise", "deep", "sleep", "kill")), injected
    assert killer.kills >= AT_LEAST
    cache.close()


def check_burst_metrics(
    before: dict[Any, float], now: dict[Any, float], answered: Counter[str], sent_bad: Counter[int], per_burst: dict[str, int],
    killed: Counter[str],
) -> None:
    """The metrics moved by what the burst injected: error results by kind (each fault row is
    distinct, so computed once; a killed plain row may be shared by identical rows in flight,
    so the replies can count it more often than the metric), refused requests by status."""

    def delta(name: str, **labels: str) -> float:
        return metric(now, name, **labels) - metric(before, name, **labels)

    assert delta("rewardlab_errors_total", reward="faulty", kind="timeout") == answered["timeout"] == per_burst["sleep"] - killed["sleep"]
    assert delta("rewardlab_errors_total", reward="faulty", kind="invalid_input") == per_burst["deep"] == answered["invalid_input"]
    crashes = delta("rewardlab_errors_total", reward="faulty", kind="crash")
    assert per_burst["crash"] + per_burst["raise"] <= crashes <= answered["crash"]
    # killed dying and raising rows are crashes anyway; killed plain and sleeping rows are extra
    assert answered["crash"] == per_burst["crash"] + per_burst["raise"] + killed["plain"] + killed["sleep"]
    # Every 413 sent is counted; every 400 sent too, plus any that a disconnecting client earned.
    for status in (400, 413):
        counted = sum(v for (n, labels), v in now.items() if n == "rewardlab_requests_total" and ("code", str(status)) in labels)
        counted -= sum(v for (n, labels), v in before.items() if n == "rewardlab_requests_total" and ("code", str(status)) in labels)
        assert counted == sent_bad[status] if status == 413 else counted >= sent_bad[status], (status, sent_bad, counted)
