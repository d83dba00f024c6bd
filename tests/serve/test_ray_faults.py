"""The Ray backend under faults (seeded), on a local Ray (2 CPUs): rows that kill their Ray
worker, never answer, raise or cannot be serialised, and kill -9 of a busy Ray worker process.

Ray's unit of work is a task, that is a chunk of samples (`RayExecutor`): a chunk that runs past
the call's timeout is `error/timeout` for each of its rows; a chunk whose worker died (after Ray's
retries, none here) is scored again one sample per task, so the row that kills its worker is its own
`error/crash` and the rest of its chunk is scored. A row Ray cannot serialise is that row's
`error/invalid_input` and a raising row its own `error/crash`, the rest of their chunk scored.
Every call answers each row exactly once within its deadline, and the next call is right.

The faults that cost Ray worker starts (a dying row, a never-answering row, a kill -9) are few in
the mixed calls and `--ray-faults N` each in calls of their own (3 by default; `pytest
tests/serve/test_ray_faults.py --ray-faults 200` injects 200 of each over 5,000+ samples).
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psutil
import pytest

from deadlines import nested, within_deadline
from rewardlab.core import Reward, RewardResult, Sample

from . import _rewards

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SEED = 3939
CHUNK = 4
# Per call: a chunk whose worker died is scored again one sample per task within it (a new Ray
# worker takes a second or so to start on a loaded machine), a sleeping one is cancelled at it.
TIMEOUT = 8.0


def _score_chunk_workers() -> list[psutil.Process]:
    """The Ray worker processes running a scoring task now."""
    out = []
    for proc in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if any("_score_chunk" in part for part in proc.info["cmdline"] or ()):
                out.append(proc)
    return out


def own_fate(kind: str) -> tuple[str, str | None]:
    """(status, error kind) of a row scored alone."""
    if kind == "deep":
        return "error", "invalid_input"
    if kind == "sleep":
        return "error", "timeout"
    if kind in ("crash", "raise"):
        return "error", "crash"
    return "ok", None


def expected(kinds: list[str], i: int) -> set[tuple[str, str | None]]:
    """The (status, error kind) row `i` may get, from the faults of its chunk (module doc).

    A chunk holding a sleeping row times out as a whole, unless the killer hit that chunk's
    worker first: then its rows were scored one per task and each gets its own fate.
    """
    kind = kinds[i]
    if kind == "deep":
        return {own_fate(kind)}
    chunk = kinds[i - i % CHUNK : i - i % CHUNK + CHUNK]
    if "sleep" in chunk:
        return {("error", "timeout"), own_fate(kind)}
    return {own_fate(kind)}


def fate(result: RewardResult) -> tuple[str, str | None]:
    """(status, error kind) of a result."""
    return result.status.value, result.error.kind.value if result.error else None


def ray_executor(reward: Reward, *, timeout: float, chunk_size: int = CHUNK) -> Any:
    """A Ray executor with no Ray retry: a chunk whose worker died goes to one task per sample
    at once (a killed worker's chunk is then scored right by that, not by Ray's retry)."""
    from rewardlab.runner.ray import RayExecutor

    return RayExecutor(reward, chunk_size=chunk_size, timeout=timeout, max_retries=0)


def assert_next_call_is_right(executor: Any) -> None:
    """A normal call after faults is right, and prompt."""
    again = [Sample(response="n" * k) for k in range(12)]
    assert [r.score for r in within_deadline(executor.map, again, deadline=60)] == pytest.approx([k / 100 for k in range(12)])


def make_rows(rng: random.Random, kinds: list[str], burst: int) -> list[Sample]:
    rows: list[Sample] = []
    for i, kind in enumerate(kinds):
        if kind == "plain":
            rows.append(Sample(response="v" * rng.randrange(0, 20) + f"#{burst}.{i}"))
        elif kind == "deep":
            rows.append(Sample(response="ok-deep", meta={"m": nested(600)}))
        else:
            rows.append(Sample(response=kind, meta={"row": i}))
    return rows


def test_the_ray_backend_under_faults_answers_every_row_once_within_its_deadline(ray_session):
    # The test rewards travel by value: Ray's workers do not have the tests on their path.
    ray_session.cloudpickle.register_pickle_by_value(_rewards)
    rng = random.Random(SEED)
    executor = ray_executor(_rewards.Faulty(), timeout=TIMEOUT)
    killed = threading.Event()

    def kill_a_busy_worker() -> None:
        deadline = time.monotonic() + TIMEOUT / 2
        while time.monotonic() < deadline and not killed.is_set():
            busy = _score_chunk_workers()
            if busy:
                with contextlib.suppress(psutil.NoSuchProcess):
                    rng.choice(busy).kill()
                    killed.set()
            time.sleep(0.05)

    # Raising and too-deep rows cost no Ray worker: many of them go in a call of their own, in
    # bigger chunks (a dying row costs two worker starts, its chunk's and its own task's, and a
    # sleeping one holds one of the 2 CPUs until the timeout: one of each per call above).
    bulk = ray_executor(_rewards.Faulty(), timeout=TIMEOUT, chunk_size=4 * CHUNK)
    injected: Counter[str] = Counter()
    try:
        for burst in range(3):
            kinds = ["plain"] * 32 + ["crash", "sleep", "raise", "raise", "deep", "deep"]
            rng.shuffle(kinds)
            rows = make_rows(rng, kinds, burst)
            killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
            killer.start()
            started = time.monotonic()
            results = within_deadline(executor.map, rows, deadline=TIMEOUT + 30)
            assert time.monotonic() - started < TIMEOUT + 15  # cancelled at the timeout, not waited for
            killer.join(TIMEOUT)
            assert len(results) == len(rows)
            for i, (row, result) in enumerate(zip(rows, results, strict=True)):
                got = fate(result)
                assert got in expected(kinds, i), (i, kinds[i], kinds[i - i % CHUNK : i - i % CHUNK + CHUNK], result)
                if got[0] == "ok":
                    assert result.score == pytest.approx(len(row.response_text) / 100)
            injected.update(k for k in kinds if k != "plain")
            cheap = ["plain"] * 40 + ["raise", "deep"] * 68
            rng.shuffle(cheap)
            results = within_deadline(bulk.map, make_rows(rng, cheap, burst), deadline=TIMEOUT + 30)
            assert [fate(r) for r in results] == [own_fate(k) for k in cheap]
            injected.update(k for k in cheap if k != "plain")
            assert_next_call_is_right(executor)
        assert killed.is_set(), "no Ray worker was caught busy to be killed"
    finally:
        executor.close()
        bulk.close()
    print(f"injected into the Ray backend: {dict(injected)}, kill -9: 1")
    assert injected["raise"] >= 200 and injected["deep"] >= 200


def kill_busy_workers(rng: random.Random, stop: threading.Event, limit: int) -> list[int]:
    """Kill -9 up to `limit` Ray workers caught running a scoring task, until `stop`; the pids."""
    killed: list[int] = []
    while not stop.is_set() and len(killed) < limit:
        busy = [proc for proc in _score_chunk_workers() if proc.pid not in killed]
        if busy:
            victim = rng.choice(busy)
            with contextlib.suppress(psutil.NoSuchProcess):
                victim.kill()
                killed.append(victim.pid)
        time.sleep(0.02)
    return killed


@pytest.mark.timeout(1200)  # --ray-faults 200: about 4.5 minutes here
def test_the_ray_backend_answers_right_under_each_slow_fault_in_bulk(ray_session, request):
    """`--ray-faults N` of each fault that costs Ray worker starts, in calls of their own (a few
    in CI; `pytest tests/serve/test_ray_faults.py --ray-faults 200` for the full count):

    - rows that kill their worker, mixed with plain rows: each its own `error/crash`, the plain
      rows of its chunk scored;
    - rows that never answer: each `error/timeout` at the call's timeout, not later;
    - kill -9 of busy workers under slow rows: every row scored right, except a row whose own
      one-sample task was the one killed (`error/crash`; at most one per kill).

    After each call the next normal call is right.
    """
    ray_session.cloudpickle.register_pickle_by_value(_rewards)
    wanted = request.config.getoption("--ray-faults")
    rng = random.Random(SEED + 1)
    # Generous timeouts: each dying row and each kill costs a Ray worker start (1-2 s here).
    crashing = ray_executor(_rewards.Faulty(), timeout=120.0)
    sleeping = ray_executor(_rewards.Faulty(), timeout=TIMEOUT)
    slow = ray_executor(_rewards.Slow(delay=0.05), timeout=120.0)
    injected: Counter[str] = Counter()
    samples = 0
    try:
        while injected["crash"] < wanted:
            kinds = ["plain"] * 64 + ["crash"] * min(16, wanted - injected["crash"])
            rng.shuffle(kinds)
            results = within_deadline(crashing.map, make_rows(rng, kinds, 0), deadline=180)
            assert [fate(r) for r in results] == [own_fate(k) for k in kinds]
            injected["crash"] += kinds.count("crash")
            samples += len(kinds)
            assert_next_call_is_right(crashing)
        while injected["sleep"] < wanted:
            kinds = ["sleep"] * min(64, wanted - injected["sleep"])
            started = time.monotonic()
            results = within_deadline(sleeping.map, make_rows(rng, kinds, 0), deadline=TIMEOUT + 30)
            assert time.monotonic() - started < TIMEOUT + 15
            assert [fate(r) for r in results] == [("error", "timeout")] * len(kinds)
            injected["sleep"] += len(kinds)
            samples += len(kinds)
            assert_next_call_is_right(sleeping)
        while injected["kill"] < wanted:
            rows = [Sample(response="s" * rng.randrange(0, 30)) for _ in range(160)]
            stop = threading.Event()
            with ThreadPoolExecutor(1) as pool:
                killer = pool.submit(kill_busy_workers, rng, stop, min(8, wanted - injected["kill"]))
                try:
                    results = within_deadline(slow.map, rows, deadline=180)
                finally:
                    stop.set()
                kills = killer.result()
            assert kills, "no busy Ray worker was caught to be killed"
            crashed = [r for r in results if fate(r) == ("error", "crash")]
            assert len(crashed) <= len(kills), (len(crashed), len(kills))
            for row, result in zip(rows, results, strict=True):
                if fate(result) != ("error", "crash"):
                    assert fate(result) == ("ok", None), result
                    assert result.score == pytest.approx(len(row.response_text) / 100)
            injected["kill"] += len(kills)
            samples += len(rows)
            assert_next_call_is_right(slow)
    finally:
        for executor in (crashing, sleeping, slow):
            executor.close()
    print(f"injected into the Ray backend in bulk: {dict(injected)} over {samples} samples")
    assert min(injected[k] for k in ("crash", "sleep", "kill")) >= wanted
