"""The selectors' compiled inner loops (`_kernel.c`, built as `lib_kernel.so.1`), loaded with ctypes.

`LIBRARY` is None when the kernel is not there (built without a C compiler) or was built from
other source than the `_kernel.c` beside it (a stale in-place build: `python hatch_build.py`
rebuilds it); `selectors` then runs its numpy version of the same selectors, which gives the same
results. ctypes releases the GIL for the call, so other threads run meanwhile.

Every array is checked here (dtype, C order, shape) before its pointer is passed on: the C code
trusts what it is given.
"""

from __future__ import annotations

import ctypes
import hashlib
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
Bool = NDArray[np.bool_]

_PATH = Path(__file__).with_name("lib_kernel.so.1")
_SOURCE = Path(__file__).with_name("_kernel.c")
_INT = ctypes.c_int64
_PTR = ctypes.c_void_p


def _load(path: Path, source: Path) -> ctypes.CDLL | None:
    if not path.exists():
        return None
    try:
        library = ctypes.CDLL(str(path))
    except OSError as exc:
        warnings.warn(f"{path} does not load ({exc}); the numpy selectors are used", RuntimeWarning, stacklevel=2)
        return None
    library.kernel_source.restype = ctypes.c_char_p
    library.kernel_source.argtypes = []
    built_from = library.kernel_source().decode()
    if source.exists() and hashlib.sha256(source.read_bytes()).hexdigest() != built_from:
        warnings.warn(
            f"{path} was built from other source than {source.name} (rebuild it: python hatch_build.py); "
            "the numpy selectors are used",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    library.best_of_n.argtypes = [_PTR, _PTR, _INT, _INT, _PTR, _PTR, _PTR, _PTR]
    library.best_of_n.restype = None
    library.tie_credit.argtypes = [_PTR, _PTR, _PTR, _PTR, _INT, _INT, _PTR]
    library.tie_credit.restype = None
    library.vote.argtypes = [_PTR, _PTR, _PTR, _INT, _INT, _PTR, _PTR]
    library.vote.restype = ctypes.c_int
    return library


LIBRARY = _load(_PATH, _SOURCE)


def _pointer(array: NDArray[Any] | None, dtype: Any, shape: tuple[int, ...]) -> int | None:
    """The address of `array`'s data, after checking it is what the C code will read."""
    if array is None:
        return None
    if array.dtype != dtype or array.shape != shape or not array.flags.c_contiguous:
        raise ValueError(f"kernel argument: want C-ordered {np.dtype(dtype)} {shape}, got {array.dtype} {array.shape}")
    address: int = array.ctypes.data
    return address


def _library() -> ctypes.CDLL:
    if LIBRARY is None:
        raise RuntimeError("the selection kernel is not built")
    return LIBRARY


def best_of_n(scores: F64, usable: Bool | None) -> tuple[F64, F64, I64, Bool]:
    """Per row of `scores`: the maximum over usable candidates (mask set, not NaN), how many are
    tied at it, the first of them (-1: none) and which."""
    rows, n = shape = scores.shape
    row_max, count = np.empty(rows), np.empty(rows)
    first, tied = np.empty(rows, dtype=np.int64), np.empty(shape, dtype=np.bool_)
    _library().best_of_n(
        _pointer(scores, np.float64, shape), _pointer(usable, np.bool_, shape), rows, n,
        _pointer(row_max, np.float64, (rows,)), _pointer(count, np.float64, (rows,)),
        _pointer(first, np.int64, (rows,)), _pointer(tied, np.bool_, shape),
    )  # fmt: skip
    return row_max, count, first, tied


def tie_credit(labels: F64, tied: Bool, count: F64, first: I64) -> F64:
    """The mean label of each row's tied candidates (0 where none is); `first`: the first of them."""
    rows, n = shape = labels.shape
    out = np.empty(rows)
    _library().tie_credit(
        _pointer(labels, np.float64, shape), _pointer(tied, np.bool_, shape),
        _pointer(count, np.float64, (rows,)), _pointer(first, np.int64, (rows,)), rows, n,
        _pointer(out, np.float64, (rows,)),
    )  # fmt: skip
    return out


def vote(classes: I64, valid: Bool | None, weights: F64 | None) -> tuple[F64, I64]:
    """Each candidate's probability of being returned by the (weighted) vote, and the first
    candidate of a winning class per row (-1: none)."""
    rows, n = shape = classes.shape
    weight, chosen = np.empty(shape), np.empty(rows, dtype=np.int64)
    status = _library().vote(
        _pointer(classes, np.int64, shape), _pointer(valid, np.bool_, shape),
        _pointer(weights, np.float64, shape), rows, n,
        _pointer(weight, np.float64, shape), _pointer(chosen, np.int64, (rows,)),
    )  # fmt: skip
    if status == -1:
        raise MemoryError("the vote kernel could not allocate its scratch arrays")
    if status == -2:
        raise ValueError(f"a voter's class id is outside [0, {n})")
    return weight, chosen
