"""The server process keeps at most two malloc arenas (`serve.launch._limit_malloc_arenas`):
glibc would give each of its threads an arena of its own, where freed memory serves only that
thread and resident memory creeps up under sustained load."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt arenas are glibc's")

# Six threads, alive at once, each allocate through malloc (bytes past pymalloc's 512-byte
# limit); glibc's malloc_stats() then prints one "Arena N:" block per arena to stderr.
THREADS = """
import ctypes, sys, threading
if sys.argv[1] == "limited":
    from rewardlab.serve.launch import _limit_malloc_arenas
    _limit_malloc_arenas()
held = []
together = threading.Barrier(6)
def allocate():
    held.append([bytes(100_000) for _ in range(20)])
    together.wait()  # no thread ends (handing its arena on) before all have one
threads = [threading.Thread(target=allocate) for _ in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
ctypes.CDLL(None).malloc_stats()
"""


def arenas(mode: str, **env: str) -> int:
    environ = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env
    done = subprocess.run([sys.executable, "-c", THREADS, mode], capture_output=True, text=True, env=environ, check=True)
    return sum(line.startswith("Arena ") for line in done.stderr.splitlines())


def test_the_server_process_uses_at_most_two_arenas_where_threads_would_take_one_each():
    assert arenas("plain") == 7  # glibc: a new thread's first malloc makes it an arena, up to 8 per core
    assert arenas("limited") <= 2


def test_an_explicit_malloc_arena_max_is_left_to_rule():
    assert arenas("limited", MALLOC_ARENA_MAX="4") == 4
