"""One pause of Python's cyclic garbage collector, shared by every thread of the process.

The reward server's client and its batches build many short-lived objects that form no
reference cycles (reference counting frees them all); collections triggered by those
allocations walk every tracked object of the process, and cost more than the work itself in a
large heap. `gc_paused()` turns the collector off for a block and back on (if it was on) when
the last thread inside leaves, so nested and concurrent pauses compose.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


class GcPause:
    """Pause Python's cyclic garbage collector for a block (thread-safe, nestable).

    Where it is used and what it saved (bench/bench_serve.py):

    - the client, decoding replies: about ten containers per result (orjson's dicts and lists,
      the `RewardResult`s); 34 us per result with the collector on in a large heap, 10 us
      paused. A call sending several batches holds the pause from its first request to its last
      reply: paused per batch only, the collections put off during one decode ran right after it
      (36 young and 3-4 older collections per 10,000 results, 14-70 ms, each stalling the other
      sending thread and so the server). The price: cyclic garbage made by other threads during
      the call is collected after it.
    - the server, computing an inline batch on the event loop (under 20 ms by construction):
      about 5% of a cheap reward's time.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._was_enabled = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._was_enabled:
                    gc.enable()


gc_paused = GcPause()
