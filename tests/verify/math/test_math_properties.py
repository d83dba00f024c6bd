"""Invariants of the fast paths, checked with hypothesis (no sympy involved, so they are quick)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.verify.math import CheckOptions, Outcome, check

FAST = CheckOptions(allow_symbolic=False)  # anything reaching sympy would be `undecided`
ints = st.integers(min_value=-(10**12), max_value=10**12)


@settings(max_examples=200, deadline=None)
@given(ints)
def test_an_integer_equals_itself_in_every_spelling(n: int) -> None:
    assert check(str(n), str(n), FAST).equivalent
    assert check(str(n), f"{n}.0", FAST).equivalent
    assert check(str(n), f"${n}$", FAST).equivalent
    assert not check(str(n), f"{n}.5", FAST).equivalent
    if n >= 1000:
        assert check(f"{n:,}", str(n), FAST).equivalent  # thousands separators


@settings(max_examples=200, deadline=None)
@given(ints, ints)
def test_different_integers_differ(a: int, b: int) -> None:
    verdict = check(str(a), str(b), FAST)
    assert verdict.outcome is (Outcome.EQUIVALENT if a == b else Outcome.NOT_EQUIVALENT)


@settings(max_examples=200, deadline=None)
@given(st.integers(-999, 999), st.integers(1, 999), st.integers(1, 50))
def test_scaled_fractions_are_equal_and_decimal_forms_agree(a: int, b: int, k: int) -> None:
    assert check(f"\\frac{{{a}}}{{{b}}}", f"\\frac{{{a * k}}}{{{b * k}}}", FAST).equivalent
    value = Fraction(a, b)
    if (10**12 * value).denominator == 1:  # a terminating decimal: the exact decimal is equal
        text = f"{float(value):.12f}".rstrip("0").rstrip(".")
        assert check(f"\\frac{{{a}}}{{{b}}}", text, FAST).equivalent


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(-12, -1))
def test_tiny_numbers_are_never_equal_by_rounding(d1: int, d2: int, exponent: int) -> None:
    verdict = check(f"{d1}e{exponent}", f"{d2}e{exponent}", FAST)
    assert verdict.equivalent is (d1 == d2)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-99, 99), min_size=2, max_size=6, unique=True), st.randoms())
def test_sets_ignore_order_tuples_do_not(items: list[int], rng) -> None:
    shuffled = list(items)
    rng.shuffle(shuffled)
    as_set = lambda xs: "\\{" + ", ".join(map(str, xs)) + "\\}"  # noqa: E731
    as_tuple = lambda xs: "(" + ", ".join(map(str, xs)) + ")"  # noqa: E731
    assert check(as_set(items), as_set(shuffled), FAST).equivalent
    assert check(as_tuple(items), as_tuple(shuffled), FAST).equivalent is (items == shuffled)


_PIECES = [
    *"0123456789+-*/^_(){}[],.=<>!|% xyz",
    "\\frac", "\\sqrt", "\\pi", "\\infty", "\\{", "\\}", "\\cup", "\\text{", "\\boxed{", "\\left(",
    "\\right)", "\\cdot", "\\\\", "\\begin{pmatrix}", "\\end{pmatrix}", "\\overline{", " or ", "\\%", "$",
]
_garbage = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(_garbage, _garbage)
def test_garbage_never_raises_fast_paths(reference: str, candidate: str) -> None:
    verdict = check(reference, candidate, FAST)
    assert verdict.outcome in tuple(Outcome)
    assert (verdict.error_kind is not None) is (verdict.outcome is Outcome.UNDECIDED)


@settings(max_examples=40, deadline=None)
@given(_garbage, _garbage)
def test_garbage_never_raises_with_sympy(pool, reference: str, candidate: str) -> None:
    verdict = check(reference, candidate, CheckOptions(timeout=5.0), pool=pool)
    assert verdict.outcome in tuple(Outcome)
