"""How many candidates of each problem are flagged, and the first of them, from one matrix product.

A row's 0/1 flags f_j become, by one BLAS product with a fixed `(2, n)` basis, the count
sum_j f_j and the word W = sum_j f_j 2**(51 - j). The first flagged column is read off the
exponent of W (`np.frexp`: 2**k <= x < 2**(k+1) gives k+1, so the column is 52 - that). Exact:
W is an integer below 2**52, and float64 holds every integer below 2**53.

Why a product: `sum` and `argmax` over a short axis (a problem's 10 candidates) pay a per-row
overhead that a matrix product does not. Rows wider than a word (52 columns) use `sum` and
`argmax`, whose overhead their length amortises (the product would grow with n squared).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

WORD_BITS = 52


@lru_cache(maxsize=64)
def basis_t(n: int) -> NDArray[np.float64]:
    """`(2, n)`: a row of ones (the count), then each column's bit value."""
    out = np.stack([np.ones(n), 2.0 ** (WORD_BITS - 1 - np.arange(n))])
    out.flags.writeable = False
    return out


def count_and_first(flags: NDArray[np.bool_], scratch: NDArray[np.float64] | None = None) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Per row of a `(B, n)` boolean block: how many flags are set, and the first set column
    (-1 if none). `scratch`: a `(B, n)` float buffer to reuse for the flags as 0/1."""
    n = flags.shape[1]
    if n > WORD_BITS:
        count = flags.sum(axis=1, dtype=np.float64)
        return count, np.where(count > 0, np.argmax(flags, axis=1), -1).astype(np.int64)
    f = flags.astype(np.float64) if scratch is None else scratch
    if scratch is not None:
        np.copyto(f, flags)
    count, word = basis_t(n) @ f.T  # the transposed product: (2, B), each row contiguous
    _, exponent = np.frexp(word)
    first: NDArray[np.int64] = np.subtract(WORD_BITS, exponent, dtype=np.int64)
    if not count.all():
        first[count == 0] = -1
    return count, first
