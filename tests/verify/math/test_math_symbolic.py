"""The plain-algebra fast parser agrees with latex2sympy2_extended on the subset it accepts."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from latex2sympy2_extended import latex2sympy
from sympy.core.relational import Relational

from rewardlab.verify.math import symbolic
from rewardlab.verify.math.symbolic import _NORM, _fast_parse

SUBSET = [
    "x^2+8x+15", "(x+3)(x+5)", "2x^2y", "\\sqrt{8}", "2\\sqrt{2}", "\\frac{\\sqrt{3}}{2}",
    "\\frac12", "\\pi r^2", "4a-2", "x^{-1}", "3\\sqrt2", "\\frac{x+1}{x-1}", "0.5x", "ab+c",
    "7\\pi", "x^{2}-1", "(x-1)(x+1)", "x^2y^3", "2(x+1)", "x y", "\\sqrt{x^2+1}", "x2", "x\\sqrt{2}",
    "\\frac{1}{2^{99}}", "2^{-99}", "\\frac{\\frac{1}{2}}{3}", "10^{3}", "x/y", "(x+1)2",
    "x \\cdot y", "3 \\times 4",
    # Euler's number, the symbol i, `\\sqrt 2`, and one relation between two such sides
    "e^2", "1 - \\frac{1}{e}", "i+1", "(1+4i)^2", "\\frac{1}{i}", "\\sqrt 2+\\sqrt 5", "\\sqrt 25",
    "x=3", "y=-\\frac{1}{2}x+\\frac{3}{4}", "x^2/4 + y^2/3 = 1", "2x+4y-3=0", "x \\le 1", "-x > -1",
    "x \\geq -2", "x < 1",
]
REFUSED = [
    "2\\frac{1}{2}", "\\frac{1}{2}22", "\\frac12 3", "x+2\\frac{1}{2}", "x^23", "x^22^2", "x(2)", "n(n+1)/2",
    "1/2x", "\\sin x", "1, 2", "\\{1\\}", "\\sqrt[3]{2}", "\\ln 2",
    "1e5", "2e", "ie", "1 < x < 2", "a = b = c", "x = ", "\\left<1\\right>",
]


def _same(latex: str) -> bool:
    fast = _fast_parse(latex)
    full = latex2sympy(latex, normalization_config=_NORM)
    if isinstance(full, Relational):  # the same relation between the same sides
        if type(fast) is not type(full):
            return False
        fast, full = fast.lhs - fast.rhs, full.lhs - full.rhs
    diff = sympy.nsimplify(fast) - sympy.nsimplify(full)
    return sympy.expand(diff) == 0 or sympy.simplify(diff) == 0


@pytest.mark.parametrize("latex", SUBSET)
def test_fast_parser_agrees_with_latex2sympy(latex: str) -> None:
    assert _fast_parse(latex) is not None
    assert _same(latex)


@pytest.mark.parametrize("latex", REFUSED)
def test_fast_parser_leaves_the_rest_to_latex2sympy(latex: str) -> None:
    assert _fast_parse(latex) is None


_atoms = st.sampled_from(["x", "y", "2", "3", "7", "\\pi", "\\sqrt{2}", "(x+1)", "\\frac{1}{2}"])
_ops = st.sampled_from(["+", "-", "", "\\cdot "])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_atoms, _ops, st.sampled_from(["", "^2", "^{3}"])), min_size=1, max_size=5))
def test_random_polynomials_parse_the_same(parts: list[tuple[str, str, str]]) -> None:
    latex = "".join(f"{atom}{power}{op}" for atom, op, power in parts).rstrip("+-").rstrip("\\cdot ").strip()
    if not latex or _fast_parse(latex) is None:
        return
    assert _same(latex), latex


@pytest.mark.parametrize(
    ("reference", "candidate", "outcome"),
    [
        ("2x+4y-3=0", "y=-\\frac{1}{2}x+\\frac{3}{4}", "equivalent"),
        ("x^2/4 + y^2/3 = 1", "x^2/16 + y^2/12 = 1/4", "equivalent"),
        ("34x+45y-20z+100=0", "-68x-90y+40z-200=0", "equivalent"),
        ("2x+4y-3=0", "y=-\\frac{1}{2}x+\\frac{5}{4}", "not_equivalent"),
        ("x^2=4", "x=2", "not_equivalent"),
        ("x^2+y^2=1", "x+y=1", "not_equivalent"),
    ],
)
def test_equations_are_compared_by_values_without_simplify(
    reference: str, candidate: str, outcome: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two equations are the same when `lhs - rhs` of one is a constant multiple of the other's:
    the ratio at random points decides it (simplify took ~100-300 ms a pair on cold caches)."""

    def no_simplify(*args: object, **kwargs: object) -> None:
        raise AssertionError("simplify was called")

    monkeypatch.setattr(symbolic.sympy, "simplify", no_simplify)
    assert symbolic.compare(reference, candidate, 1e-9, True, False)[0] == outcome


def test_an_unknown_function_is_left_undecided_without_simplify(monkeypatch: pytest.MonkeyPatch) -> None:
    """`(A) 0.10 m (B) 0.20 m` parses as a product of unknown functions `m(b)`: no point
    evaluates it, and simplify spent ~0.7 s on it before saying nothing."""

    def no_simplify(*args: object, **kwargs: object) -> None:
        raise AssertionError("simplify was called")

    monkeypatch.setattr(symbolic.sympy, "simplify", no_simplify)
    outcome, reason, _, _ = symbolic.compare("1.2", "(A) 0.10 m (B) 0.20 m (C) 0.30 m", 1e-9, True, False)
    assert outcome == "undecided"
    assert "unknown function" in reason
    assert symbolic.compare("f(x)+g(x)", "g(x)+f(x)", 1e-9, True, False)[0] == "equivalent"
