"""Helpers for the sandbox tests: look at the host's processes, check the pool still works."""

from __future__ import annotations

import os
import time

import pytest

from rewardlab.sandbox import Limits, SandboxPool
from rewardlab.sandbox._server import Server
from rewardlab.sandbox.config import find_bwrap

needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it")

# Tight limits keep attack tests short: each one ends within a few seconds of CPU or wall time.
ATTACK_LIMITS = Limits(cpu_seconds=1.0, wall_seconds=4.0, memory_bytes=256 << 20, processes=16,
                       output_bytes=64 << 10, tmp_bytes=8 << 20, file_size_bytes=4 << 20)  # fmt: skip


def descendants(pid: int) -> set[int]:
    """Every process below `pid` on the host (via /proc/<pid>/task/*/children)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            for kid in kids:
                if kid not in found:
                    found.add(kid)
                    todo.append(kid)
    return found


def sandbox_processes(pool: SandboxPool) -> int:
    """How many processes the pool's sandboxes hold on the host (bwrap, server, spares)."""
    workers = list(pool._idle.queue)
    return sum(1 + len(descendants(w.proc.pid)) for w in workers)


def process_list(pool: SandboxPool) -> list[str]:
    """`pid name state ppid` of every process of the pool (for failure messages)."""
    out = []
    for worker in list(pool._idle.queue):
        for pid in sorted(descendants(worker.proc.pid)):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            name = stat.split("(", 1)[1].rsplit(")", 1)[0]
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            out.append(f"{pid} {name} {state} {ppid}")
    return out


def worker_pids(pool: SandboxPool) -> list[int]:
    return [w.proc.pid for w in pool._idle.queue]


def assert_pool_healthy(pool: SandboxPool) -> None:
    """The pool still runs an ordinary program after an attack."""
    result = pool.run("print(sum(range(10)))")
    assert result.ok, result
    assert result.stdout == "45\n"


# per worker: bwrap, its pid-1 child, the server, and A, B, C of every ready spare
STEADY = 3 + 3 * Server.SPARES


def settled(pool: SandboxPool) -> int:
    """The pool's process count once spares are re-forked and old jobs reaped (<= 10 s)."""
    deadline = time.monotonic() + 10
    while (count := sandbox_processes(pool)) != STEADY * len(pool._idle.queue) and time.monotonic() < deadline:
        time.sleep(0.05)
    return count // max(1, len(pool._idle.queue))
