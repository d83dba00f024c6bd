"""Which sample digests may be in the result cache: a Bloom filter, so misses skip SQLite.

In RL training nearly every sample is new, so a reward server's lookups are nearly all misses,
and an SQLite probe costs ~1-2 us per key even when the answer is "no" (binding the keys,
building the IN list, walking the index): a tenth of a cheap reward. A Bloom filter answers
"certainly absent" for most misses from memory (Bloom 1970, "Space/time trade-offs in hash
coding with allowable errors"); only the keys it cannot rule out go to SQLite.

The keys are blake2b digests, uniformly random, so the four 32-bit words of a 16-byte digest
serve as four independent hash positions: nothing is hashed again. At 16 bits per key of
`capacity` the false-positive rate is ~0.2% (4 hashes); past `capacity` it grows (a false
positive only costs the SQLite probe that would have happened anyway).

A false *negative* would make the cache skip a row it holds (a recomputation, never a wrong
result); every change goes through one lock, so concurrent writers cannot lose each other's bits.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

__all__ = ["KeyFilter"]

_KEY_BYTES = 16


class KeyFilter:
    """A Bloom filter over 16-byte digests (thread-safe).

    Args:
        capacity: keys it is sized for (16 bits each, at least 2**20 bits).

    Example:
        >>> keys = [bytes([i]) * 16 for i in range(3)]
        >>> f = KeyFilter(100)
        >>> f.add(keys[:2])
        >>> f.may_contain(keys)
        [True, True, False]
    """

    def __init__(self, capacity: int):
        bits = 1 << max(20, (max(1, capacity) * 16 - 1).bit_length())
        self._mask = np.uint32(bits - 1)
        self._bits = np.zeros(bits // 8, dtype=np.uint8)
        self._lock = threading.Lock()

    @staticmethod
    def usable(keys: Sequence[bytes]) -> bool:
        """Whether every key is a 16-byte digest (anything else is not filtered)."""
        return all(len(k) == _KEY_BYTES for k in keys)

    def _positions(self, keys: Sequence[bytes]) -> np.ndarray:
        words = np.frombuffer(b"".join(keys), dtype="<u4").reshape(len(keys), _KEY_BYTES // 4)
        return words & self._mask

    def add(self, keys: Sequence[bytes]) -> None:
        """Remember `keys` (16-byte digests)."""
        if not keys:
            return
        positions = self._positions(keys).ravel()
        masks = np.left_shift(1, positions & 7).astype(np.uint8)
        with self._lock:
            np.bitwise_or.at(self._bits, positions >> 3, masks)

    def may_contain(self, keys: Sequence[bytes]) -> list[bool]:
        """Per key: ``False`` if it was certainly never added, else ``True``."""
        if not keys:
            return []
        positions = self._positions(keys)
        with self._lock:
            bytes_ = self._bits[positions >> 3]
        present = (bytes_ >> (positions & 7).astype(np.uint8)) & 1
        return present.all(axis=1).tolist()  # type: ignore[no-any-return]
