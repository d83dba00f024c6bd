"""Tie sets as bit words: which candidates of a problem are flagged, packed by one matrix product.

A row's 0/1 flags f_j become, by one BLAS product with a fixed basis, the count sum_j f_j and
words W_w = sum_{j in word w} f_j 2**(51 - (j - 52 w)), 52 columns to a word. The first flagged
column is read off the exponent of the first nonzero word (`np.frexp`: 2**k <= x < 2**(k+1)
gives k+1). Exact: a word is an integer below 2**52, and float64 holds every integer below
2**53.

Why a product: `sum` and `argmax` over a short axis (a problem's 10 candidates) pay a per-row
overhead that a matrix product does not.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

WORD_BITS = 52


def words_for(n: int) -> int:
    """Words a row of `n` flags takes."""
    return max(1, -(-n // WORD_BITS))


@lru_cache(maxsize=64)
def basis(n: int) -> NDArray[np.float64]:
    """`(n, 1 + words)`: a column of ones (the count), then each word's bit values."""
    out = np.zeros((n, 1 + words_for(n)))
    out[:, 0] = 1.0
    j = np.arange(n)
    out[j, 1 + j // WORD_BITS] = 2.0 ** (WORD_BITS - 1 - j % WORD_BITS)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=64)
def basis_t(n: int) -> NDArray[np.float64]:
    """`(1 + words, n)` contiguous transpose of `basis` (a strided operand takes matmul off its
    BLAS path)."""
    out = np.ascontiguousarray(basis(n).T)
    out.flags.writeable = False
    return out


def first_flagged(words: NDArray[np.float64], count: NDArray[np.float64]) -> NDArray[np.int64]:
    """`(B,)` first flagged column of each row (-1 where none is), from `(words, B)` words."""
    _, exponent = np.frexp(words)  # 0 for an all-zero word
    first: NDArray[np.int64] = np.subtract(WORD_BITS, exponent[0], dtype=np.int64)
    for w in range(1, len(words)):  # rows wider than one word: the first nonzero word decides
        here = (exponent[:w] == 0).all(axis=0) & (exponent[w] > 0)
        first[here] = WORD_BITS * (w + 1) - exponent[w][here]
    if not count.all():
        first[count == 0] = -1
    return first
