"""Peak growth of host memory while a block runs, sampled by psutil in a background thread.

Two measures, because an attack can grow either: `rss` is this (host) process's resident memory
(a decompression bomb inflates it); `kernel` is the host's slab plus shared memory (tmpfs pages
and the inodes and dentries of files in a sandbox's /tmp live there, in no process's RSS).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psutil

MIB = 1 << 20


@dataclass
class Growth:
    rss: int = 0  # bytes, peak minus start
    kernel: int = 0


def _kernel() -> int:
    vm = psutil.virtual_memory()
    return int(vm.slab + vm.shared)


@contextmanager
def peak_growth(interval: float = 0.002) -> Iterator[Growth]:
    """Yields a `Growth` filled in when the block ends (sampled every `interval` seconds)."""
    me = psutil.Process()
    rss0, kernel0 = me.memory_info().rss, _kernel()
    peak = [rss0, kernel0]
    done = threading.Event()

    def sample() -> None:
        while True:
            peak[0] = max(peak[0], me.memory_info().rss)
            peak[1] = max(peak[1], _kernel())
            if done.wait(interval):
                return

    growth = Growth()
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield growth
    finally:
        done.set()
        thread.join()
        peak[0] = max(peak[0], me.memory_info().rss)
        growth.rss, growth.kernel = peak[0] - rss0, peak[1] - kernel0
