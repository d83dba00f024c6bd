"""The pool's fork server: every worker, first or replacement, is forked from the process as it
was when the pool started, not from the pool's process as it is when the worker is replaced."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time

import psutil
import pytest

from deadlines import within_deadline
from rewardlab.runner._pool_forker import supported
from rewardlab.runner.pool import ProcessPool

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and supported()), reason="needs pidfds (Linux)")

_STATE = ["as the pool started"]


def state_and_pid(_: int) -> tuple[str, int]:
    return _STATE[0], os.getpid()


def _on_error(item: int, kind: object, message: str) -> tuple[str, int]:
    return message, -1


def test_a_replacement_worker_is_forked_from_the_process_as_it_was_when_the_pool_started() -> None:
    """What the pool's process changed after the start (here a global; in a server, the pages
    its requests dirtied) is not in a replacement worker: it shares nothing the old process
    has written since, so generations of replacements do not pin copies of it."""
    _STATE[0] = "as the pool started"
    try:
        with ProcessPool(state_and_pid, _on_error, workers=1, timeout=30) as pool:
            first = within_deadline(pool.map, [0])[0]
            _STATE[0] = "changed later"
            os.kill(first[1], signal.SIGKILL)
            pool._workers[0].process.join(10)
            replacement = within_deadline(pool.map, [1, 2])
            assert [state for state, _ in replacement] == ["as the pool started"] * 2
            assert replacement[0][1] != first[1] and pool.stats.restarts == 1
            assert psutil.Process(replacement[0][1]).ppid() != os.getpid()  # forked by the fork server
    finally:
        _STATE[0] = "as the pool started"


def sockets_held(_: int) -> set[int]:
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except FileNotFoundError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[len("socket:[") : -1]))
    return inodes


def test_a_socket_opened_after_the_pool_started_is_not_held_by_its_workers() -> None:
    with ProcessPool(sockets_held, lambda *_: set(), workers=1, timeout=30) as pool:
        pool.start_fork_server()
        with socket.create_server(("127.0.0.1", 0)) as listener:
            inode = os.stat(listener.fileno()).st_ino
            assert inode not in within_deadline(pool.map, [0])[0]
            pool._workers[0].process.kill()
            pool._workers[0].process.join(10)
            assert inode not in within_deadline(pool.map, [1])[0]  # nor by a replacement


def test_a_fork_server_killed_by_hand_is_replaced_and_no_row_is_lost() -> None:
    """kill -9 of the fork server (the OOM killer, an operator) takes its workers with it; the
    next pass starts a new fork server and scores every row."""
    with ProcessPool(abs, _on_error, workers=2, timeout=30) as pool:
        assert within_deadline(pool.map, range(-20, 0)) == list(range(20, 0, -1))
        forker = pool._forker
        assert forker is not None
        os.kill(forker.pid, signal.SIGKILL)
        for w in pool._workers:  # they die with it (PR_SET_PDEATHSIG)
            w.process.join(10)
            assert not w.process.is_alive()
        assert within_deadline(pool.map, range(-50, 0)) == list(range(50, 0, -1))
        assert pool._forker is not None and pool._forker.pid != forker.pid


def test_a_worker_closed_by_one_thread_still_has_its_exit_code_for_another() -> None:
    """Two threads join a worker that dies as the pool closes (the batch's thread replaces it,
    the closing thread stops it): the one that asks second, after the first has closed the
    worker, gets the exit code at once instead of waiting for a report that was already read."""
    with ProcessPool(state_and_pid, _on_error, workers=1, timeout=30) as pool:
        within_deadline(pool.map, [0])
        worker = pool._workers[0].process
        server, pid = worker.server, worker.pid
        worker.kill()
        assert server.exit_code(pid, 10.0) == -signal.SIGKILL  # the first thread reads the report
        worker.close()
        started = time.monotonic()
        assert server.exit_code(pid, 10.0) == -signal.SIGKILL  # the second, after the close
        assert time.monotonic() - started < 1.0
