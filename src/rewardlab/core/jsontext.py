"""The one reader of JSON text: request bodies, data-file rows, cached and served results.

orjson reads almost everything; what it refuses goes to the stdlib:
integers beyond 64 bits, the escape of a lone UTF-16 surrogate (``"\\ud800"``: a text cut
inside a surrogate pair, as JavaScript and Python write it, and as rewardlab writes such a
string back), and ``NaN``/``Infinity``, which Python's `json` writes by default. Bytes that are
not UTF-8 are refused, never read with replacement characters.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from rewardlab.errors import NestingError

__all__ = ["loads"]

#: orjson's nesting limit (the stdlib parser, the fallback, overflows its stack before it).
_JSON_MAX_DEPTH = 1024
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
        text = _utf8(raw) if isinstance(raw, bytes) else raw
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


def _utf8(raw: bytes) -> str:
    """JSON text is UTF-8 (RFC 8259, 8.1): other bytes are refused, never replaced."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at position {exc.start})") from None
