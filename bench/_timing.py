"""Timing shared by the benchmark scripts (imported as `_timing`: a script's own folder is on
`sys.path` when it is run as `python bench/bench_x.py`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best_of(fn: Callable[[], T], repeats: int) -> tuple[float, T]:
    """Best wall time of `repeats` calls after one warm-up call (page faults, lazy imports),
    and the last call's result (for the agreement check that precedes every reported time)."""
    out = fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out
