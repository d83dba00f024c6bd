"""The value codec: exact builtin types round-trip; anything else is refused."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardlab.sandbox import EncodeError, decode_value, encode_value
from rewardlab.sandbox._wire import ProtocolError

atoms = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary() | st.complex_numbers(allow_nan=False)
hashable = st.none() | st.booleans() | st.integers() | st.text() | st.binary()
values = st.recursive(
    atoms,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(hashable, inner, max_size=4)
    | st.sets(hashable, max_size=4) | st.frozensets(hashable, max_size=4),
    max_leaves=20,
)


def same(a: object, b: object) -> bool:
    """Equal AND of the same type, all the way down (True == 1 is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)  # type: ignore[attr-defined, index]
    return a == b


@given(values)
def test_values_round_trip_with_their_exact_types(value: object) -> None:
    assert same(decode_value(encode_value(value)), value)


def test_bool_int_float_stay_distinct() -> None:
    assert [type(decode_value(encode_value(v))) for v in (True, 1, 1.0)] == [bool, int, float]


def test_nan_inf_and_huge_ints_round_trip() -> None:
    assert math.isnan(decode_value(encode_value(float("nan"))))
    assert decode_value(encode_value(float("-inf"))) == float("-inf")
    big = 7**20000  # more than the 4300-digit int->str limit
    assert decode_value(encode_value(big)) == big


class AlwaysEqual(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


@pytest.mark.parametrize("value", [AlwaysEqual(3), [AlwaysEqual(3)], object(), lambda: 1, iter([1]), range(3)])
def test_non_builtin_values_are_refused(value: object) -> None:
    with pytest.raises(EncodeError, match="cannot leave the sandbox"):
        encode_value(value)


def test_deep_and_large_values_are_refused() -> None:
    deep: list[object] = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(EncodeError, match="deeper"):
        encode_value(deep)
    with pytest.raises(EncodeError, match="more than"):
        encode_value(list(range(100)), max_nodes=10)


@pytest.mark.parametrize("node", [["x", 1], "s", ["i", "zz"], ["d", [[["l", []], ["n"]]]], ["l", "notalist"], []])
def test_malformed_values_are_protocol_errors(node: object) -> None:
    with pytest.raises(ProtocolError):
        decode_value(node)
