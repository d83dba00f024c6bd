"""`core.jsontext`: JSON text and strings that UTF-8 has no code for (lone surrogates)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardlab.core.jsontext import (
    LONE_SURROGATE,
    escape_lone_surrogates,
    loads,
    read_utf8,
    replace_lone_surrogates,
    utf8_text,
    without_lone_surrogates,
)
from rewardlab.errors import InputError

# Any code point, lone surrogates (category Cs) included.
ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=12)
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | ANY_TEXT,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
                           max_leaves=8)  # fmt: skip


@given(JSON_VALUES)
def test_escaped_json_text_is_utf8_and_reads_back_as_the_stdlib_escapes_read_back(value):
    text = escape_lone_surrogates(json.dumps(value, ensure_ascii=False))
    # the same value, except that a high surrogate next to a low one reads back as the pair's
    # character: JSON's escapes are UTF-16, as `json.dumps`'s own ASCII escapes are
    assert loads(text.encode("utf-8")) == json.loads(json.dumps(value))


@given(JSON_VALUES)
def test_without_lone_surrogates_leaves_only_encodable_text_and_valid_values_alone(value):
    cleaned = without_lone_surrogates(value)
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")  # nothing UTF-8 cannot encode is left
    if LONE_SURROGATE.search(json.dumps(value, ensure_ascii=False)) is None:
        assert cleaned == value


@given(ANY_TEXT)
def test_replacing_keeps_the_length_so_offsets_hold(text):
    replaced = replace_lone_surrogates(text)
    assert len(replaced) == len(text)
    assert all(a == b or ("\ud800" <= a <= "\udfff" and b == "\ufffd") for a, b in zip(text, replaced, strict=True))


def test_bytes_that_are_not_utf8_are_refused_naming_the_first_bad_byte(tmp_path):
    with pytest.raises(ValueError, match=r"not valid UTF-8 \(byte 0xff at position 2\)"):
        utf8_text(b"ok\xff\xfe")
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"caf\xe9")
    with pytest.raises(InputError, match=r"latin1\.txt: not valid UTF-8 \(byte 0xe9 at position 3\)"):
        read_utf8(path)
    path.write_bytes("café".encode())
    assert read_utf8(path) == "café"
