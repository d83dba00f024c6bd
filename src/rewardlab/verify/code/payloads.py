"""Bounded decoding of test payloads that arrive with data: base64, zlib, pickle, JSON.

A data set row or a request is untrusted, and each layer of its encoding can multiply its size:
zlib by ~1000 (a 679 KiB row of zeros is a GiB), JSON by ~20 (`[],` is 3 bytes and a 56-byte
list), pickle by as much again (`]` builds a list in one byte) and can run code (its GLOBAL and
REDUCE opcodes call any importable function). So, in the host process:

* zlib output is counted while it is produced, in chunks that are dropped, and a payload larger
  than `MAX_DECOMPRESSED_BYTES` is refused before any of it is kept;
* a pickle is never unpickled: LiveCodeBench pickles one JSON string, so its opcodes are read
  (`pickletools.genops`) and anything but one string is refused;
* JSON is measured before it is parsed: the containers outside string literals (`[` and `{`)
  are counted, so neither a flood of tiny objects nor deep nesting reaches the parser (which
  would raise RecursionError past ~1000 levels: that is refused too);
* a problem holds at most `MAX_CASES` tests.

Every refusal is a ScoringError("invalid_input") naming the field.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickletools
import re
import zlib
from typing import Any

from rewardlab.errors import ScoringError

#: the most a compressed field may expand to (LiveCodeBench's largest rows stay far below it)
MAX_DECOMPRESSED_BYTES = 256 << 20
#: tests one problem may hold (real data sets hold hundreds at most)
MAX_CASES = 20_000
#: JSON objects and arrays one field may hold (each costs ~60 bytes parsed; 4 M: ~250 MiB)
MAX_CONTAINERS = 4_000_000
_CHUNK = 1 << 20
# A JSON string literal (unrolled: no backtracking), or a container opening outside one.
_STRING_OR_OPEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]')
# What a pickle of one str may consist of: framing, the string itself, memo bookkeeping, STOP.
_ONE_STRING_OPCODES = frozenset({"PROTO", "FRAME", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE",
                                 "MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT", "STOP"})  # fmt: skip


def invalid(where: str, what: str) -> ScoringError:
    return ScoringError("invalid_input", f"{where} {what}")


def inflate(data: bytes, where: str, limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """zlib-decompress `data`, refusing output past `limit` bytes. The output is first only
    counted (in chunks that are dropped), so a bomb costs a chunk of memory, not `limit`."""
    total = 0
    counter = zlib.decompressobj()
    try:
        chunk = counter.decompress(data, _CHUNK)
        while chunk:
            total += len(chunk)
            if total > limit:
                raise invalid(where, f"expands to more than {limit} bytes when decompressed")
            chunk = counter.decompress(counter.unconsumed_tail, _CHUNK)
        if not counter.eof:
            raise invalid(where, "is a truncated zlib stream")
        return zlib.decompress(data)  # within the limit: decompress again, keeping the output
    except zlib.error as exc:
        raise invalid(where, f"is not a zlib stream: {exc}") from None


def pickled_string(data: bytes, where: str) -> str:
    """The one str a pickle holds, read from its opcodes without unpickling (module doc)."""
    found: list[str] = []
    try:
        for opcode, arg, _ in pickletools.genops(io.BytesIO(data)):
            if opcode.name not in _ONE_STRING_OPCODES:
                raise invalid(where, f"is a pickle of something other than one string (opcode {opcode.name})")
            if isinstance(arg, str) and opcode.name.endswith("UNICODE"):
                found.append(arg)
    except ValueError as exc:
        raise invalid(where, f"is not a readable pickle: {exc}") from None
    if len(found) != 1:
        raise invalid(where, f"is a pickle of {len(found)} strings, not one")
    return found[0]


def lcb_compressed(text: str, where: str) -> str:
    """LiveCodeBench's base64(zlib(pickle(json string))) encoding, back to the JSON string."""
    try:
        raw = base64.b64decode(text)
    except (binascii.Error, ValueError) as exc:
        raise invalid(where, f"is neither JSON nor base64(zlib(pickle)): {exc}") from None
    return pickled_string(inflate(raw, where), where)


def containers(text: str) -> int:
    """How many JSON arrays and objects `text` opens outside its string literals."""
    return sum(1 for match in _STRING_OR_OPEN.finditer(text) if match.group() in ("[", "{"))


def bounded_json(text: str, where: str, max_containers: int = MAX_CONTAINERS) -> Any:
    """`json.loads(text)` once its container count is known to be at most `max_containers`;
    NaN and infinities are refused (not JSON)."""
    if containers(text) > max_containers:
        raise invalid(where, f"holds more than {max_containers} JSON arrays and objects")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise invalid(where, "is nested too deeply to read") from None
    except ValueError as exc:
        raise invalid(where, f"is not valid JSON: {exc}") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def check_case_count(count: int, where: str) -> None:
    if count > MAX_CASES:
        raise invalid(where, f"holds {count} tests, more than the {MAX_CASES} a problem may hold")
