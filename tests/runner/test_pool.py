import threading
import time

import pytest

from rewardlab.core import ErrorKind, Sample, Status
from rewardlab.runner import WorkerPool
from rewardlab.runner.pool import ProcessPool

from .rewards_for_tests import misbehave


def test_results_come_back_in_order_with_many_chunks():
    pool = ProcessPool(lambda x: x * 2, lambda x, kind, msg: None, workers=2, chunk_size=7)
    with pool:
        assert pool.map(range(1000)) == [2 * x for x in range(1000)]


def test_hang_in_c_code_times_out_and_the_run_goes_on():
    samples = [Sample(response=r) for r in ["a", "hang-c", "b", "c"]]
    started = time.monotonic()
    with WorkerPool(misbehave, workers=2, timeout=1.0) as pool:
        results = pool.map(samples)
        assert pool.stats.timeouts == 1 and pool.stats.restarts == 1
    assert time.monotonic() - started < 10
    assert [r.status for r in results] == [Status.OK, Status.ERROR, Status.OK, Status.OK]
    assert results[1].error.kind is ErrorKind.TIMEOUT and "timeout" in results[1].error.message


def test_worker_death_is_a_crash_for_that_sample_only():
    samples = [Sample(response=r) for r in ["a", "die", "b", "segv", "c"]]
    with WorkerPool(misbehave, workers=1, timeout=30, chunk_size=5) as pool:
        results = pool.map(samples)
        # the pool keeps working after the crashes
        assert pool.map([Sample(response="ok")])[0].score == 1.0
    kinds = [r.error.kind if r.error else None for r in results]
    assert kinds == [None, ErrorKind.CRASH, None, ErrorKind.CRASH, None]
    assert "exit code 3" in results[1].error.message


def test_sleeping_sample_is_killed_not_waited_for():
    with WorkerPool(misbehave, workers=1, timeout=0.5) as pool:
        started = time.monotonic()
        result = pool.map([Sample(response="sleep")])[0]
    assert result.error.kind is ErrorKind.TIMEOUT and time.monotonic() - started < 5


def test_imap_reads_input_lazily():
    pulled = []

    def items():
        for i in range(10_000):
            pulled.append(i)
            yield i

    with ProcessPool(lambda x: x, lambda x, k, m: None, workers=1, chunk_size=10) as pool:
        stream = pool.imap(items())
        assert next(stream) == 0
        assert len(pulled) < 10_000


def test_map_from_several_threads():
    with WorkerPool(misbehave, workers=2, timeout=10) as pool:
        outputs: dict[int, list[float]] = {}

        def call(k: int) -> None:
            outputs[k] = [r.score for r in pool.map([Sample(response=f"s{k}-{i}") for i in range(50)])]

        threads = [threading.Thread(target=call, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert all(v == [1.0] * 50 for v in outputs.values()) and len(outputs) == 4


def test_inline_mode_without_workers():
    with ProcessPool(lambda x: 1 / x, lambda x, k, m: (k.value, m), workers=0) as pool:
        assert pool.map([1, 0]) == [1.0, ("crash", "ZeroDivisionError: division by zero")]


def test_invalid_arguments():
    with pytest.raises(ValueError):
        ProcessPool(str, str, timeout=0)
    with pytest.raises(ValueError):
        ProcessPool(str, str, workers=-1)


def test_a_worker_killed_while_idle_just_before_a_batch_costs_no_row():
    """kill -9 of an idle worker (the OOM killer) right before a batch: the signal lands
    asynchronously, so the worker may still look alive when its chunk is sent, and it dies
    before starting it. The chunk is sent again; no row is blamed for a death it did not cause
    (before, the chunk's first row got `error/crash` in about a third of the trials)."""
    import os
    import signal

    with WorkerPool(misbehave, workers=2, timeout=30) as pool:
        for _ in range(20):
            pool.map([Sample(response="warm")] * 4)
            os.kill(pool._pool._workers[0].process.pid, signal.SIGKILL)
            results = pool.map([Sample(response=f"r{k}") for k in range(8)])
            assert [(r.status, r.score) for r in results] == [(Status.OK, 1.0)] * 8, [r.error for r in results]


class _KillsOnArrival:
    """Unpickling it ends the worker process: its chunk kills the worker before any item starts."""

    def __reduce__(self):
        import os

        return (os._exit, (4,))


def test_a_chunk_that_kills_its_worker_before_starting_is_sent_once_more_then_blamed():
    samples = [Sample(response="a"), Sample(response="b", meta={"x": _KillsOnArrival()}), Sample(response="c")]
    with WorkerPool(misbehave, workers=1, timeout=30, chunk_size=1) as pool:
        results = pool.map(samples)
        assert pool.stats.crashes == 2  # sent twice, died twice
    assert [r.status for r in results] == [Status.OK, Status.ERROR, Status.OK]
    assert results[1].error.kind is ErrorKind.CRASH and "exit code 4" in results[1].error.message
