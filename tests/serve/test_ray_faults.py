"""The Ray backend under faults (seeded), on a local Ray (2 CPUs): rows that kill their Ray
worker, never answer, raise or cannot be serialised, and kill -9 of a busy Ray worker process.

Ray's unit of work is a task, that is a chunk of samples (`RayExecutor`): a chunk that runs past
the call's timeout is `error/timeout` for each of its rows; a chunk whose worker died (after Ray's
retries, none here) is scored again one sample per task, so the row that kills its worker is its own
`error/crash` and the rest of its chunk is scored. A row Ray cannot serialise is that row's
`error/invalid_input` and a raising row its own `error/crash`, the rest of their chunk scored.
Every call answers each row exactly once within its deadline, and the next call is right.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections import Counter

import psutil
import pytest

from deadlines import nested, within_deadline
from rewardlab.core import Sample

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
    from rewardlab.runner.ray import RayExecutor

    # The test rewards travel by value: Ray's workers do not have the tests on their path.
    ray_session.cloudpickle.register_pickle_by_value(_rewards)
    rng = random.Random(SEED)
    # No Ray retry: a chunk whose worker died goes to one task per sample at once (a killed
    # worker's chunk is then scored right by that, not by Ray's retry).
    executor = RayExecutor(_rewards.Faulty(), chunk_size=CHUNK, timeout=TIMEOUT, max_retries=0)
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
    bulk = RayExecutor(_rewards.Faulty(), chunk_size=4 * CHUNK, timeout=TIMEOUT, max_retries=0)
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
                got = (result.status.value, result.error.kind.value if result.error else None)
                assert got in expected(kinds, i), (i, kinds[i], kinds[i - i % CHUNK : i - i % CHUNK + CHUNK], result)
                if got[0] == "ok":
                    assert result.score == pytest.approx(len(row.response_text) / 100)
            injected.update(k for k in kinds if k != "plain")
            cheap = ["plain"] * 40 + ["raise", "deep"] * 68
            rng.shuffle(cheap)
            results = within_deadline(bulk.map, make_rows(rng, cheap, burst), deadline=TIMEOUT + 30)
            assert [(r.status.value, r.error.kind.value if r.error else None) for r in results] == [own_fate(k) for k in cheap]
            injected.update(k for k in cheap if k != "plain")
            # The next normal call is right, and prompt.
            again = [Sample(response="n" * k) for k in range(12)]
            assert [r.score for r in within_deadline(executor.map, again, deadline=60)] == pytest.approx([k / 100 for k in range(12)])
        assert killed.is_set(), "no Ray worker was caught busy to be killed"
    finally:
        executor.close()
        bulk.close()
    print(f"injected into the Ray backend: {dict(injected)}, kill -9: 1")
    assert injected["raise"] >= 200 and injected["deep"] >= 200

