"""Everything before the sympy worker runs in linear time, on adversarial and random input.

The worker has a kill timeout; the steps before it (extraction, hedging, normalisation, the fast
paths) run in the caller's process, where nothing can stop them. The worst inputs live in
bench/bench_math_worst.py (one list for the benchmark and these tests).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.verify.math import CheckOptions, check, extract_answer

_BENCH = Path(__file__).resolve().parents[3] / "bench" / "bench_math_worst.py"
_spec = importlib.util.spec_from_file_location("bench_math_worst", _BENCH)
assert _spec is not None and _spec.loader is not None
worst = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(worst)

CALL = worst.rewardlab_call()
FAST = CheckOptions(allow_symbolic=False)


def _best_of(n: int, call: Callable[[str, str], object], response: str, reference: str) -> float:
    return min(worst.timed(call, response, reference) for _ in range(n))


@pytest.mark.parametrize("name", sorted(worst.WORST))
def test_worst_input_scales_linearly(name: str) -> None:
    make = worst.WORST[name]
    small, big = 50_000, 200_000  # 4x the characters
    t_small = _best_of(3, CALL, *make(small))
    t_big = _best_of(3, CALL, *make(big))
    assert t_big < 0.5, f"{name}: {t_big:.3f} s at {big} characters"
    if t_small > 0.005:  # below this, timer noise and fixed costs dominate the ratio
        assert t_big / t_small < 10, f"{name}: {t_small:.4f} s -> {t_big:.4f} s for 4x the input (quadratic is 16x)"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(worst.WORST))
def test_worst_input_of_a_megabyte_takes_under_a_second(name: str) -> None:
    response, reference = worst.WORST[name](1_000_000)
    assert _best_of(3, CALL, response, reference) < 1.0


_PIECES = [*"abcdefxyz 0123456789.,:;$\\{}()[]^_=+-*/<>!?#\n", "\\boxed{", "\\text{", "answer", "</answer>", "<answer>", " is "]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=120).map("".join)


@settings(max_examples=150, deadline=None)
@given(_TEXT, _TEXT, st.integers(0, 10_000))
def test_random_prose_around_an_answer_keeps_the_answer_and_is_fast(before: str, after: str, n: int) -> None:
    answer = str(n)
    response = f"{before}\n\nso the final answer is $\\boxed{{{answer}}}$."
    started = time.perf_counter()
    got = extract_answer(response)
    CALL(response + after * 50, answer)  # the same prose repeated after it: still fast
    assert time.perf_counter() - started < 1.0
    if "{" not in before and "}" not in before and "boxed" not in before:
        assert got.answer == answer


@settings(max_examples=100, deadline=None)
@given(_TEXT, _TEXT)
def test_random_text_as_both_answers_never_hangs(reference: str, candidate: str) -> None:
    started = time.perf_counter()
    check(reference * 20 or "1", candidate * 20, FAST)
    assert time.perf_counter() - started < 1.0
