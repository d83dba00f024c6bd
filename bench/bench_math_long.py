"""Long plain literals: rewardlab's exact comparison against Math-Verify, same inputs, same run.

Run: PYTHONPATH=src python bench/bench_math_long.py [--size 1000000]

Prints per case: rewardlab's verdict and time, Math-Verify's verdict and time and the ratio
(Math-Verify only on the 3,000-digit cases: it is not meant for megabyte answers).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from rewardlab.verify.math import CheckOptions, check

T = TypeVar("T")


def _cases(size: int) -> list[tuple[str, str, str, bool]]:
    sevens = "7" * 3000
    big = "9" * size
    return [
        ("3000 digits vs 42", "42", sevens, True),
        ("3000 digits equal", sevens, sevens, True),
        ("3000 digits, last differs", sevens, sevens[:-1] + "8", True),
        ("leading zeros", sevens, "000" + sevens, True),
        ("grouped 1,000,...", "1" + "0" * 3000, "1" + ",000" * 1000, True),
        ("100 vs 100.000...", "100", "100." + "0" * 3000, True),
        ("10^3000 vs 1e3000", "1" + "0" * 3000, "1e3000", True),
        (f"{size} digits, last differs", big, big[:-1] + "8", False),
        (f"{size} digits vs 42", "42", big, False),
    ]


def _timed(call: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    out = call()
    return out, time.perf_counter() - started


def _peer(verify: Callable[..., bool], parse: Callable[[str], object], reference: str, candidate: str) -> bool:
    return verify(parse("$" + reference + "$"), parse("$" + candidate + "$"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1_000_000, help="digits of the largest literal")
    args = parser.parse_args()
    from math_verify import parse, verify

    opts = CheckOptions(allow_symbolic=False)  # every verdict here must need no sympy
    print(f"{'case':32} {'rewardlab':>16} {'s':>8} {'math_verify':>12} {'s':>8} {'ratio':>7}")
    for name, reference, candidate, with_peer in _cases(args.size):
        verdict, ours = _timed(partial(check, reference, candidate, opts))
        ours_text = verdict.outcome.value
        if with_peer:
            theirs_v, theirs = _timed(partial(_peer, verify, parse, reference, candidate))
            print(f"{name:32} {ours_text:>16} {ours:8.4f} {theirs_v!s:>12} {theirs:8.4f} {theirs / ours:6.0f}×")
        else:
            print(f"{name:32} {ours_text:>16} {ours:8.4f} {'-':>12} {'-':>8} {'-':>7}")


if __name__ == "__main__":
    main()
