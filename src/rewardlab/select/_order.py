"""Order statistics of many short rows at once: the keep threshold of the confidence-filtered vote.

`np.sort` or `np.partition` along a short axis (a problem's 10 candidates) pays a per-row
overhead; a selection network over the columns runs as a few long 1-D `minimum`/`maximum`
passes instead.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

F64 = NDArray[np.float64]
Bool = NDArray[np.bool_]


def keep_threshold(s: F64, scored: Bool | None, keep: float) -> F64:
    """Per row, the m-th largest scored confidence, m = ceil(keep x scored candidates) but at
    least 1 (-inf for a row with none scored); `scored` None: every candidate is."""
    problems, n = s.shape
    if scored is None:  # one m for every row
        m = max(math.ceil(keep * n), 1)
        if n <= NETWORK_MAX_WIDTH:
            return order_statistic(s, n - m)
        return np.sort(s, axis=1)[:, n - m]
    counts = scored.astype(np.float64) @ np.ones(n)  # a matrix product: no per-row overhead
    m = np.maximum(np.ceil(keep * counts).astype(np.int64), 1)
    ascending = np.sort(np.where(scored, s, -np.inf), axis=1)  # unscored first
    threshold: F64 = ascending.reshape(-1)[np.arange(0, problems * n, n) + n - m]
    return threshold


# Rows up to this wide take an order statistic from a selection network over their columns:
# a few long 1-D min/max passes, where a sort of each short row pays a per-row overhead (3-30x
# slower for 7 down to 2 columns; about even at 8).
NETWORK_MAX_WIDTH = 8


@lru_cache(maxsize=64)
def selection_network(n: int, rank: int) -> tuple[tuple[int, int, bool, bool], ...]:
    """The compare-exchanges `(a, b, min_needed, max_needed)`, a < b, that the `rank`-th smallest
    of n wires depends on, in order: Batcher's odd-even merge sort of n wires (K. E. Batcher,
    "Sorting networks and their applications", AFIPS 1968; the form for any n), pruned backwards
    from wire `rank`. A compare-exchange leaves min on wire a and max on wire b; only the outputs
    read later are computed."""
    pairs = []
    p = 1
    while p < n:
        k = p
        while k >= 1:
            for j in range(k % p, n - k, 2 * k):
                for i in range(min(k, n - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):  # both in one merged block
                        pairs.append((i + j, i + j + k))
            k //= 2
        p *= 2
    needed, kept = {rank}, []
    for a, b in reversed(pairs):
        if a in needed or b in needed:
            kept.append((a, b, a in needed, b in needed))
            needed |= {a, b}
    return tuple(reversed(kept))


def order_statistic(s: F64, rank: int) -> F64:
    """The `rank`-th smallest (0-based) of each row of `s`, which holds no NaN (min and max would
    spread it), by the selection network run on its column views."""
    wires = [s[:, j] for j in range(s.shape[1])]
    for a, b, min_needed, max_needed in selection_network(s.shape[1], rank):
        low = np.minimum(wires[a], wires[b]) if min_needed else wires[a]
        if max_needed:
            wires[b] = np.maximum(wires[a], wires[b])
        wires[a] = low
    return wires[rank]
