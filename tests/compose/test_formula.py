import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardlab.compose.formula import Formula, FormulaError

NAMES = {"a", "b", "c"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a + b * c", 1 + 2 * 3),
        ("a ^ 2 + 1", 2.0),  # ^ is power and binds tighter than +
        ("2 ^ 3 ^ 2", 512.0),  # right associative
        ("-a ** 2", -1.0),
        ("max(a, b, c) - min(a, b)", 2.0),
        ("clip(c, 0, 2.5)", 2.5),
        ("abs(a - c)", 2.0),
        ("sqrt(4) + exp(0) + log(e)", 4.0),
        ("(b > a) + (b >= 2) + (a == 1) + (a != 1) + (c < b)", 3.0),
        ("1 < b < 3", 1.0),
        ("where(a > 0, b, 1 / 0)", 2.0),  # lazy branches: the division never runs
        ("a > 0 and c > 5 or b == 2", 1.0),
        ("not a", 0.0),
        ("pi > 3", 1.0),
    ],
)
def test_formula_values(text, expected):
    assert Formula(text, names=NAMES)({"a": 1.0, "b": 2.0, "c": 3.0}) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("__import__('os').system('echo pwned')", "unsupported call"),
        ("a.__class__", "unsupported syntax"),
        ("[a, b]", "unsupported syntax"),
        ("'abc'", "unsupported syntax"),
        ("lambda: 1", "unsupported syntax"),
        ("d + 1", "unknown name 'd'"),
        ("min()", "takes one or more arguments"),
        ("clip(a, 1)", "takes 3 arguments"),
        ("a +", "cannot parse"),
        ("max(a, key=b)", "unsupported call"),
    ],
)
def test_formula_rejects_anything_outside_the_language(text, message):
    with pytest.raises(FormulaError, match=message):
        Formula(text, names=NAMES)


def test_formula_too_long_or_too_deep_is_rejected():
    with pytest.raises(FormulaError, match="limit"):
        Formula("a+" * 2000 + "a", names=NAMES)
    with pytest.raises(FormulaError, match="deep"):
        Formula("abs(" * 100 + "a" + ")" * 100, names=NAMES)


@pytest.mark.parametrize(("text", "message"), [("a / (b - 2)", "division by zero"), ("log(b - 2)", "math domain"), ("10 ^ 400", "range")])
def test_runtime_failures_are_formula_errors(text, message):
    with pytest.raises(FormulaError, match=message):
        Formula(text, names=NAMES)({"a": 1.0, "b": 2.0, "c": 3.0})


def test_big_power_does_not_hang():
    with pytest.raises(FormulaError):
        Formula("9 ^ 9 ^ 9 ^ 9", names=NAMES)({})


@given(
    x=st.floats(-1e6, 1e6, allow_nan=False),
    y=st.floats(-1e6, 1e6, allow_nan=False),
    z=st.floats(0.5, 1e3),
)
def test_linear_formulas_match_python_arithmetic(x, y, z):
    value = Formula("0.5 * a - b / c + max(a, b)", names=NAMES)({"a": x, "b": y, "c": z})
    assert math.isclose(value, 0.5 * x - y / z + max(x, y), rel_tol=1e-12, abs_tol=1e-9)
