"""The value codec: builtin values round-trip, a builtin subclass leaves as the plain value it
holds, anything else is refused."""

from __future__ import annotations

import collections
import enum
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardlab.sandbox import EncodeError
from rewardlab.sandbox._wire import ProtocolError, decode_value, encode_value

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


class FakesItsClass:
    """`isinstance(x, int)` is True for it, `type(x)` tells the truth."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return int


class LyingList(list[int]):
    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter([1, 2, 3])

    def __len__(self) -> int:
        return 3


@pytest.mark.parametrize("value", [object(), lambda: 1, iter([1]), range(3), FakesItsClass(), [FakesItsClass()]])
def test_non_builtin_values_are_refused(value: object) -> None:
    with pytest.raises(EncodeError, match="cannot leave the sandbox"):
        encode_value(value)


Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        (AlwaysEqual(3), 3),
        ([AlwaysEqual(3)], [3]),
        (collections.Counter("aab"), {"a": 2, "b": 1}),
        (collections.OrderedDict([("b", 1), ("a", 2)]), {"b": 1, "a": 2}),
        (collections.defaultdict(int, {1: [AlwaysEqual(0)]}), {1: [0]}),
        (Point(1, 2), (1, 2)),
        (enum.IntEnum("Colour", "RED")(1), 1),
        (LyingList([7]), [7]),  # read with list's own iteration: what it holds, not what __iter__ says
    ],
)  # fmt: skip
def test_a_builtin_subclass_leaves_as_the_plain_value_it_holds(value: object, plain: object) -> None:
    got = decode_value(encode_value(value))
    assert got == plain and type(got) is type(plain)
    assert got != 4  # an AlwaysEqual's __eq__ stayed behind
    if isinstance(got, dict):
        assert list(got) == list(plain)  # type: ignore[call-overload]  # insertion order kept


def test_a_subclass_whose_elements_cannot_be_hashed_again_is_an_encode_error() -> None:
    class Flaky:
        calls = 0

        def __hash__(self) -> int:
            Flaky.calls += 1
            if Flaky.calls > 1:
                raise RuntimeError("changed my mind")
            return 1

    class MySet(set[object]):
        pass

    with pytest.raises(EncodeError, match="could not be read as set"):
        encode_value(MySet([Flaky()]))


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


def test_deeply_nested_frame_is_a_protocol_error_not_a_recursion_error() -> None:
    from rewardlab.sandbox._wire import decode_payload

    with pytest.raises(ProtocolError, match="nested"):
        decode_payload(b"[" * 1_000_000)


def test_oversized_frame_is_refused_from_its_header() -> None:
    import os
    import struct

    from rewardlab.sandbox._wire import FrameReader

    r, w = os.pipe()
    os.write(w, struct.pack(">I", 60 << 20) + b"x" * 100)
    with pytest.raises(ProtocolError, match="exceeds"):
        FrameReader(r, max_frame=16 << 20).read_raw_blocking()
    os.close(r)
    os.close(w)


def test_frames_are_written_whole_to_a_non_blocking_descriptor() -> None:
    import os
    import threading

    from rewardlab.sandbox._wire import FrameReader, write_raw

    r, w = os.pipe()
    os.set_blocking(w, False)  # as a hostile program could leave a shared descriptor
    payload = b"y" * (1 << 20)  # 16 pipe buffers
    got: list[bytes | None] = []
    reader = threading.Thread(target=lambda: got.append(FrameReader(r).read_raw_blocking()))
    reader.start()
    write_raw(w, payload[:10], memoryview(payload)[10:])
    reader.join()
    os.close(r)
    os.close(w)
    assert got == [payload]
