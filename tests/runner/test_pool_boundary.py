"""The worker pool's process boundary: a value that cannot cross it is that row's error, and
the pool is never left waiting for an answer that will not come."""

import os
import threading
import time

from deadlines import DEADLINE, nested, within_deadline
from rewardlab.core import ErrorKind, Sample, Status
from rewardlab.runner import WorkerPool
from rewardlab.runner.pool import ProcessPool
from rewardlab.verify.text import ExactMatch


def test_a_value_nested_too_deep_to_pickle_is_that_rows_invalid_input_and_the_pool_goes_on():
    deep = Sample(response="a", reference=nested(500))
    batch = [Sample(response="a", reference="a"), deep, Sample(response="b", reference="a")]
    with WorkerPool(ExactMatch(), workers=2, timeout=30) as pool:
        results = within_deadline(pool.map, batch)
        assert [r.status for r in results] == [Status.OK, Status.ERROR, Status.OK]
        assert [r.score for r in results] == [1.0, None, 0.0]
        error = results[1].error
        assert error.kind is ErrorKind.INVALID_INPUT and "nested too deep" in error.message
        # the next call is served (it hung forever when the refused chunk kept a worker busy)
        again = within_deadline(pool.map, [Sample(response=str(i), reference="3") for i in range(20)])
        assert [r.score for r in again] == [1.0 if i == 3 else 0.0 for i in range(20)]
        assert pool.stats.per_kind == {"invalid_input": 1}


def test_every_unpicklable_row_of_a_chunk_is_refused_alone():
    lock = threading.Lock()  # cannot be pickled
    items = [1, lock, 2, nested(5000), 3, lambda: 0, 4]
    with ProcessPool(lambda x: x * 10, lambda x, kind, msg: (kind.value, msg), workers=2, chunk_size=7) as pool:
        out = within_deadline(pool.map, items)
        assert out[0::2] == [10, 20, 30, 40]
        kinds = [o[0] for o in out[1::2]]
        assert kinds == ["invalid_input"] * 3
        assert "cannot be pickled" in out[1][1] and "lock" in out[1][1]
        assert "nested too deep" in out[3][1]
        assert within_deadline(pool.map, range(100)) == [10 * x for x in range(100)]


def test_a_whole_chunk_that_cannot_be_pickled_leaves_no_worker_waiting():
    lock = threading.Lock()
    with ProcessPool(lambda x: x, lambda x, kind, msg: kind.value, workers=2, chunk_size=3) as pool:
        assert within_deadline(pool.map, [lock] * 7) == ["invalid_input"] * 7
        assert within_deadline(pool.map, range(10)) == list(range(10))


def unpicklable_result(x: int) -> object:
    return threading.Lock() if x == 2 else x


def test_a_result_that_cannot_be_pickled_is_that_rows_crash_and_the_worker_lives_on():
    with ProcessPool(unpicklable_result, lambda x, kind, msg: (kind.value, msg), workers=1, chunk_size=5) as pool:
        out = within_deadline(pool.map, range(5))
        assert out[:2] == [0, 1] and out[3:] == [3, 4]
        assert out[2][0] == "crash" and "cannot be sent back" in out[2][1]
        assert pool.stats.crashes == 0 and pool.stats.restarts == 0


def slow_identity(x: int) -> int:
    import time

    time.sleep(0.01)
    return x


def test_a_pass_abandoned_midway_does_not_answer_into_the_next():
    with ProcessPool(slow_identity, lambda x, k, m: None, workers=2, chunk_size=4) as pool:
        stream = pool.imap(range(1000, 2000))
        assert next(stream) == 1000
        stream.close()  # the workers were still on chunks of this pass
        assert within_deadline(pool.map, range(40)) == list(range(40))


def test_workers_outlive_the_thread_that_started_the_pool():
    """A trainer may call from a thread that then ends (a rollout thread, `asyncio.to_thread`):
    the workers must not die with it (they are killed when the thread that forked them ends)."""
    pool = WorkerPool(ExactMatch(), workers=2, timeout=30)
    try:
        first = within_deadline(pool.map, [Sample(response="a", reference="a")] * 4)  # starts the pool on that thread
        again = within_deadline(pool.map, [Sample(response="a", reference="a")] * 8)
        assert [r.score for r in first + again] == [1.0] * 12
        assert pool.stats.crashes == 0 and pool.stats.restarts == 0
    finally:
        pool.close()


def test_closing_the_pool_under_a_running_call_ends_that_call_with_a_runner_error():
    """What a server's shutdown does to a batch still running: the call ends (the workers are
    killed), with an error saying why, and no worker is forked for a closed pool."""
    import pytest

    from rewardlab.errors import RunnerError

    from .rewards_for_tests import misbehave

    pool = WorkerPool(misbehave, workers=1)  # no timeout: the sleeping sample would run a minute
    pool.__enter__()
    outcome: list[BaseException | None] = []

    def call() -> None:
        try:
            pool.map([Sample(response="sleep"), Sample(response="a")])
            outcome.append(None)
        except BaseException as exc:  # handed to the test below
            outcome.append(exc)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    deadline = time.monotonic() + DEADLINE
    while pool.stats.items == 0 and not any(w.task for w in pool._pool._workers) and time.monotonic() < deadline:
        time.sleep(0.01)  # until the sleeping sample is on its worker
    pool.close()
    thread.join(DEADLINE)
    assert not thread.is_alive()
    assert isinstance(outcome[0], RunnerError) and "closed" in str(outcome[0])
    assert pool._pool._workers == []
    with pytest.raises(RunnerError, match="closed"):
        pool.map([Sample(response="a")])


def test_one_unpicklable_item_in_a_big_chunk_costs_a_few_pickles_not_one_per_item(monkeypatch):
    """The bad item of a chunk is found by halving: a chunk of 1,024 with one too-deep item is
    pickled O(log n) times (it was once per item, 25x the chunk's own cost, on the thread that
    feeds every worker), and exactly that item is refused."""
    from multiprocessing.reduction import ForkingPickler

    from rewardlab.runner.pool import _Dispatch

    calls = [0]
    real = ForkingPickler.dumps

    def counted(obj: object, protocol: int | None = None) -> memoryview:
        calls[0] += 1
        return real(obj, protocol)

    monkeypatch.setattr(ForkingPickler, "dumps", counted)
    pool = ProcessPool(lambda x: x, lambda x, kind, msg: kind.value, workers=1)
    chunk: list[tuple[int, object]] = [(i, i) for i in range(1024)]
    chunk[341] = (341, nested(5000))
    dispatch = _Dispatch(pool, iter([]))
    encoded = dispatch._encode(7, chunk)
    assert encoded is not None
    payload, sent = encoded
    assert [pos for pos, _ in sent] == [i for i in range(1024) if i != 341]
    assert dispatch.done == {341: "invalid_input"}
    assert real((7, [x for _, x in sent])) == payload  # the whole rest travels in one message
    assert calls[0] <= 2 * 10 + 2, calls[0]  # 2 per halving level of 1,024, plus the two whole-chunk pickles


def exit_3_or_sleep(x: int) -> int:
    import os
    import time

    if x == 3:
        os._exit(3)
    time.sleep(60)
    return x


def test_a_worker_found_past_its_timeout_that_had_exited_on_its_own_died_a_crash():
    """An exit takes time (a forked process is torn down page by page): on a loaded machine a
    row that kills its worker can still look busy when its timeout passes. The pool then kills
    the worker and reads its exit code: its own exit is that row's `crash`; only a worker the
    pool itself had to kill is a `timeout`."""
    from multiprocessing.reduction import ForkingPickler

    from rewardlab.runner.pool import _Dispatch, _Task

    with ProcessPool(exit_3_or_sleep, lambda x, kind, msg: kind.value, workers=2, timeout=0.2) as pool:
        pool.start()
        dispatch = _Dispatch(pool, iter([]))
        dying, sleeping = pool._workers
        for task_id, (w, item) in enumerate([(dying, 3), (sleeping, 4)]):
            w.conn.send_bytes(ForkingPickler.dumps((task_id, [item])))  # what `_send_next` sends
            w.task = _Task(task_id, [(task_id, item)])
        dying.process.join(DEADLINE)  # it has exited; the pool has not looked yet
        assert dispatch._timed_out(dying, 1.0) == (ErrorKind.CRASH, "worker process died (exit code 3)")
        kind, message = dispatch._timed_out(sleeping, 1.0)
        assert kind is ErrorKind.TIMEOUT and "per-sample timeout of 0.2s" in message
        assert not sleeping.process.is_alive()


def test_a_worker_that_never_starts_its_chunk_is_replaced_and_the_chunk_sent_again():
    """A worker alive but not on its chunk (stopped here; hung before its first item, say on a
    lock held when it was forked) never starts the item timeout: the pool kills it once the
    chunk has waited the timeout (at least 3 s) and sends the chunk again, blaming no item. The
    call used to wait for ever."""
    import os
    import signal

    with ProcessPool(lambda x: x * 10, lambda x, kind, msg: (kind.value, msg), workers=1, timeout=0.3, chunk_size=4) as pool:
        pool.start()
        stopped = pool._workers[0].process.pid
        os.kill(stopped, signal.SIGSTOP)
        started = time.monotonic()
        assert within_deadline(pool.map, range(8)) == [10 * x for x in range(8)]
        assert 3.0 <= time.monotonic() - started < DEADLINE
        assert pool._workers[0].process.pid != stopped
        assert pool.stats.crashes == pool.stats.restarts == 1 and pool.stats.timeouts == 0


_TEST_PID = os.getpid()


def dies_leaving_a_child(x: int) -> int:
    """Item 3 starts a process that outlives its worker (it holds copies of the worker's pipe
    end and sentinel: neither says the worker died), then the worker dies."""
    import os
    import tempfile
    import time

    if x == 3:
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        # named after the test's process (which the worker inherits from it), not the worker's
        # parent: the pool's fork server forks the workers
        with open(os.path.join(tempfile.gettempdir(), f"rewardlab-test-orphan-{_TEST_PID}"), "w") as f:
            f.write(str(pid))
        os._exit(3)
    return x * 10


def test_a_worker_whose_death_neither_its_sentinel_nor_its_pipe_reports_is_still_seen_dead():
    import os
    import signal
    import tempfile

    marker = os.path.join(tempfile.gettempdir(), f"rewardlab-test-orphan-{os.getpid()}")
    try:
        with ProcessPool(dies_leaving_a_child, lambda x, kind, msg: (kind.value, msg), workers=1, chunk_size=8) as pool:
            started = time.monotonic()
            out = within_deadline(pool.map, range(8), deadline=20)
            assert time.monotonic() - started < 10  # not when the orphan exits (30 s)
            assert out[:3] == [0, 10, 20] and out[4:] == [40, 50, 60, 70]
            assert out[3] == ("crash", "worker process died (exit code 3)")
    finally:
        if os.path.exists(marker):
            with open(marker) as f:
                os.kill(int(f.read()), signal.SIGKILL)
            os.remove(marker)


def test_a_process_forked_while_a_pool_was_forking_can_run_pools_of_its_own():
    """A program's own fork, from a thread, while a pool's thread holds the lock that makes its
    forks one at a time: the child gets a free lock (it used to wait for ever at its first pool)."""
    import os
    import signal

    from rewardlab.runner import pool as pool_module

    with pool_module._FORK_LOCK:  # what a pool's thread holds while it forks a worker
        pid = os.fork()
        if pid == 0:  # the child: a pool of its own, then out without pytest's cleanup
            code = 1
            try:
                with ProcessPool(abs, lambda x, kind, msg: kind.value, workers=1) as pool:
                    code = 0 if pool.map([-1, -2]) == [1, 2] else 1
            finally:
                os._exit(code)
    deadline = time.monotonic() + DEADLINE / 2
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise AssertionError("the forked process's pool waited for ever on the fork lock")
    assert os.waitstatus_to_exitcode(status) == 0
