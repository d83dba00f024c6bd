"""The verdict cache of `check`: recent verdicts, bounded in entries and in characters.

RL groups repeat the same answer many times, so `check` keeps recent verdicts (a hit costs a
dictionary look-up). A bound on entries alone bounds nothing in bytes: 65,536 entries whose
answers are 200,000 characters each would keep ~13 GB of text alive. Each entry is therefore
charged the characters it keeps alive (its answers and the texts of its verdict), and the least
recently used entries are dropped while either bound is exceeded; an entry larger than the
whole character budget is not kept at all. A character is 1, 2 or 4 bytes in CPython (PEP 393),
so `max_chars` characters are at most 4 * `max_chars` bytes of text, plus ~0.5 kB per entry.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

from rewardlab.errors import ConfigError

__all__ = ["BoundedCache", "kept_chars"]

V = TypeVar("V")


def kept_chars(*texts: str) -> int:
    """Characters kept alive by `texts`, each distinct string object counted once (a verdict
    often holds the very strings of its key)."""
    return sum(len(text) for text in {id(text): text for text in texts}.values())


class BoundedCache(Generic[V]):
    """Least recently used values, at most `max_entries` of them and `max_chars` characters.

    Safe to share between threads (one lock around each look-up or insertion; values are
    computed outside it, so two threads missing the same key may both compute it).

    Args:
        max_entries: most entries kept.
        max_chars: most characters kept, as charged by `put`.
    """

    def __init__(self, max_entries: int, max_chars: int):
        if max_entries < 1 or max_chars < 1:
            raise ConfigError(f"max_entries and max_chars must be >= 1, got {max_entries} and {max_chars}")
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """The value stored under `key` (now the most recently used), or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: V, chars: int) -> None:
        """Store `value`, charged `chars` characters; older entries make room. A value
        charged more than `max_chars` is not stored."""
        if chars > self.max_chars:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._chars -= old[1]
            self._entries[key] = (value, chars)
            self._chars += chars
            while len(self._entries) > self.max_entries or self._chars > self.max_chars:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._chars -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._chars = 0

    @property
    def chars(self) -> int:
        """Characters charged to the entries kept now."""
        return self._chars

    def __len__(self) -> int:
        return len(self._entries)
