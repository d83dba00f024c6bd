"""The one reader of JSON text (request bodies, data-file rows, cached and served results), and
what a string read from it may need before it goes where only valid Unicode goes.

orjson reads almost everything; what it refuses goes to the stdlib:
integers beyond 64 bits, the escape of a lone UTF-16 surrogate (``"\\ud800"``: a text cut
inside a surrogate pair, as JavaScript and Python write it, and as rewardlab writes such a
string back), and ``NaN``/``Infinity``, which Python's `json` writes by default. Bytes that are
not UTF-8 are refused, never read with replacement characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from rewardlab.errors import InputError, NestingError

__all__ = ["LONE_SURROGATE", "escape_lone_surrogates", "loads", "read_utf8", "replace_lone_surrogates", "utf8_text", "without_lone_surrogates"]

#: orjson's nesting limit (the stdlib parser, the fallback, overflows its stack before it).
_JSON_MAX_DEPTH = 1024
#: A lone UTF-16 surrogate: what JSON's ``"\\ud800"`` escape reads into, and what a file read
#: with ``errors="surrogateescape"`` holds for a byte that is not UTF-8. UTF-8 has no code for
#: one, so a string holding one cannot be written as UTF-8 or given to a tokenizer as it is.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# CPython's advice in its integer-size error (sys.set_int_max_str_digits) is for programmers.
_INT_LIMIT = re.compile(r";? *use sys\.set_int_max_str_digits\(\).*$")


def loads(raw: str | bytes) -> Any:
    """One JSON document. Raises `ValueError` with a message fit for a user:
    `json.JSONDecodeError` for bad JSON, `NestingError` for arrays and objects nested deeper than
    the parsers allow (orjson: 1,024 levels; the stdlib's recursion limit is lower), a plain
    `ValueError` for bytes that are not UTF-8 or an integer of over 4,300 digits (which CPython
    will not read)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        text = utf8_text(raw) if isinstance(raw, bytes) else raw
        try:
            return json.loads(text.rstrip("\r\n"))
        except json.JSONDecodeError:
            raise
        except RecursionError:  # orjson stops at 1,024 levels; the stdlib at the recursion limit
            raise NestingError(
                f"the JSON is nested too deeply (at most {_JSON_MAX_DEPTH} levels of arrays and objects); "
                "flatten the value, or send a deep structure as a string"
            ) from None
        except ValueError as exc:
            raise ValueError(f"{_INT_LIMIT.sub('', str(exc))}; write such a number as a string") from None


def utf8_text(raw: bytes) -> str:
    """`raw` read as UTF-8 (JSON text is UTF-8: RFC 8259, 8.1). Bytes that are not UTF-8 are
    refused with a `ValueError` naming the first bad byte, never replaced."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at position {exc.start})") from None


def read_utf8(path: str | Path) -> str:
    """A user's text file (code, a response) as UTF-8 text. Raises `InputError` naming the
    file and the first byte that is not UTF-8 (and `OSError` when it cannot be read)."""
    try:
        return utf8_text(Path(path).read_bytes())
    except ValueError as exc:
        raise InputError(str(exc), source=str(path)) from None


def escape_lone_surrogates(json_text: str) -> str:
    """JSON text (written with ``ensure_ascii=False``) that UTF-8 can encode: each lone surrogate,
    which JSON text holds only inside a string, as its ``\\ud800`` escape (`loads` reads it back
    as the same string); every other character as it was."""
    return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def replace_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD, the replacement character, for what needs valid
    Unicode to read or show text (a tokenizer, an HTML page): what a UTF-8 decoder makes of bytes
    cut inside a character, and what a tokenizer's own decoder gives for a partial one."""
    return LONE_SURROGATE.sub("\ufffd", text)


def without_lone_surrogates(value: Any) -> Any:
    """A JSON value (a request body, a row) with `replace_lone_surrogates` applied to every
    string in it, at any depth (a copy of its objects and arrays)."""
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    if isinstance(value, Mapping):
        return {key: without_lone_surrogates(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_lone_surrogates(item) for item in value]
    return value
