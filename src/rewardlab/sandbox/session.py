"""Call sessions: a module loaded in a fresh sandboxed child, its functions called from here.

Use through `SandboxPool.session`. Calls travel on a pipe pair straight between this process
and the child; the server only reports how the child ended. Values cross as plain builtins.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import time
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from rewardlab.errors import CandidateError as CandidateError
from rewardlab.errors import ConfigTypeError
from rewardlab.sandbox import _wire
from rewardlab.sandbox.config import HOST_GRACE_SECONDS, Limits
from rewardlab.sandbox.result import ExecResult, Outcome, SandboxError, classify

if TYPE_CHECKING:
    from rewardlab.sandbox.pool import _Worker

_GRACE = HOST_GRACE_SECONDS


class SessionEnded(BaseException):  # BaseException: a test's `except Exception` must not swallow it
    """The sandboxed child is gone (exited, timed out, broke the protocol). `result` says how."""

    def __init__(self, result: ExecResult, stage: str):
        super().__init__(f"the program ended {stage}: {result.reason()}")
        self.result = result
        self.stage = stage


_REMOTE_CLASSES: dict[str, type[CandidateError]] = {}


def remote_exception(type_name: str, message: str) -> CandidateError:
    """A CandidateError that is also the builtin exception it names (`except ValueError` works)."""
    cls = _REMOTE_CLASSES.get(type_name)
    if cls is None:
        base = getattr(builtins, type_name, None)
        cls = CandidateError
        if isinstance(base, type) and issubclass(base, Exception) and base is not Exception:
            with contextlib.suppress(TypeError):
                cls = type(f"Remote{type_name}", (CandidateError, base), {"remote_type": type_name})
        _REMOTE_CLASSES[type_name] = cls
    exc = cls(f"{type_name}: {message}")
    exc.remote_type = type_name
    return exc


class Session:
    """Calls into one loaded module inside the sandbox. Use through `SandboxPool.session`.

    Every frame from the job is hostile until checked: it must carry this job's nonce and the
    next answer number (exactly one answer per call), fit in `Limits.frame_bytes` and decode;
    anything else ends the session as a PROTOCOL failure."""

    def __init__(self, worker: _Worker, limits: Limits, isolation: str):
        self._worker = worker
        self.limits = limits
        self.isolation = isolation
        self.result: ExecResult | None = None  # set once the child has ended
        self.healthy = True
        self.calls = 0
        self._deadline = 0.0
        self._nonce = b""
        self._seq = 0  # number of the next answer
        self._prefetched: dict[str, deque[dict[str, Any]]] = {}

    def open(self, source: str, module_name: str, prefetch: Sequence[tuple[str, tuple[Any, ...]]] = ()) -> None:
        """Start the child; `prefetch` calls run right after loading, in this order, and their
        answers are kept for the first matching `call`s (one round trip instead of many)."""
        self._deadline = time.monotonic() + self.limits.wall_seconds + _GRACE
        pre: list[dict[str, Any]] = []
        for name, args in prefetch:
            try:
                pre.append({"name": name, "args": [_wire.encode_value(a) for a in args]})
            except _wire.EncodeError:
                continue
        order = {"source": source, "module_name": module_name, "stdin": "", "prefetch": pre}
        self._nonce = self._worker.start_job("session", self.limits, order, self._deadline).encode("ascii")
        reply = self._next_child_frame("while loading")
        if reply.get("op") == "load_error":
            raise remote_exception("LoadError", str(reply.get("error", ""))[-1500:])
        if reply.get("op") != "loaded":
            self._violation("while loading", f"unexpected {reply.get('op')!r}")
        try:
            for msg in pre:
                reply = self._next_child_frame("during prefetched calls")
                if reply.get("op") not in ("return", "raise"):
                    self._violation("during prefetched calls", f"unexpected {reply.get('op')!r}")
                self._prefetched.setdefault(self._key(msg["name"], msg["args"], {}), deque()).append(reply)
            reply = self._next_child_frame("after prefetched calls")
            if reply.get("op") != "ready":
                self._violation("after prefetched calls", f"unexpected {reply.get('op')!r}")
        except SessionEnded:
            pass  # answers before the end stand; the next call that needs the child raises

    @staticmethod
    def _key(name: str, args: list[Any], kwargs: dict[str, Any]) -> str:
        return json.dumps([name, args, kwargs], separators=(",", ":"), sort_keys=True)

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call `name(*args, **kwargs)` in the sandbox; its return value as plain builtins.

        Raises:
            CandidateError: the function raised (also an instance of the builtin it raised).
            SessionEnded: the child exited or was killed (early exit is a failure, not a pass).
            TypeError: an argument is not a plain builtin value.
        """
        try:
            frame: dict[str, Any] = {"op": "call", "name": name, "args": [_wire.encode_value(a) for a in args],
                     "kwargs": {k: _wire.encode_value(v) for k, v in kwargs.items()}}  # fmt: skip
        except _wire.EncodeError as exc:
            raise ConfigTypeError(f"cannot pass this argument into the sandbox: {exc}") from None
        self.calls += 1
        pending = self._prefetched.get(self._key(name, frame["args"], frame["kwargs"]))
        if pending:
            return self._value(pending.popleft())
        if self.result is not None:
            raise SessionEnded(self.result, f"before call {self.calls} ({name})")
        self._worker.send_call(frame, self._deadline)
        reply = self._next_child_frame(f"during call {self.calls} ({name})")
        if reply.get("op") not in ("return", "raise"):
            self._violation(f"during call {self.calls}", f"unexpected {reply.get('op')!r}")
        return self._value(reply)

    def _value(self, reply: dict[str, Any]) -> Any:
        if reply.get("op") == "raise":
            raise remote_exception(str(reply.get("type", "Exception"))[:80], str(reply.get("message", ""))[:500])
        try:
            return _wire.decode_value(reply.get("value"))
        except _wire.ProtocolError as exc:
            self._violation(f"in the answer to call {self.calls}", str(exc))

    def take_prefetched(self, max_bytes: int) -> list[tuple[str, str]]:
        """Hand over answers to prefetched calls not yet used, in order, as (key, the answer's
        JSON text), up to `max_bytes` in all; they are gone from this session, so each answer
        is used once. Text, not values: relayed inside another value, an answer as deep as the
        wire allows would be one level too deep."""
        out: list[tuple[str, str]] = []
        size = 0
        for key, pending in list(self._prefetched.items()):
            while pending:
                text = json.dumps(pending[0], separators=(",", ":"))
                size += len(key) + len(text)
                if size > max_bytes:
                    return out
                out.append((key, text))
                pending.popleft()
            del self._prefetched[key]
        return out

    def close(self) -> ExecResult:
        """End the child (if still running) and return how it ended."""
        if self.result is None:
            self._worker.send_call(None, self._deadline)
            with contextlib.suppress(SessionEnded):
                while True:
                    self._next_child_frame("at the end")
        assert self.result is not None
        return self.result

    # -- internals -------------------------------------------------------------------------------
    def _next_child_frame(self, stage: str) -> dict[str, Any]:
        """The child's next answer, checked; on the server's `result` frame, raise SessionEnded."""
        try:
            channel, frame = self._worker.read_any(self._deadline)
        except _wire.ProtocolError as exc:
            self._violation(stage, str(exc))
        except SandboxError:
            self.healthy = False
            self._worker.kill()
            self.result = ExecResult(Outcome.WALL_TIMEOUT, None, None, "", "", False, None,
                                     self.limits.wall_seconds + _GRACE, None, self.isolation)  # fmt: skip
            raise SessionEnded(self.result, stage) from None
        if channel == "call":
            return self._checked(frame, stage)
        if frame.get("op") == "result":
            self._worker.drain_calls()
            self.result = classify(frame, self.limits, self.isolation)
            raise SessionEnded(self.result, stage)
        self.healthy = False
        raise SandboxError(f"sandbox worker sent {frame.get('op')!r} during a session")

    def _checked(self, payload: bytes, stage: str) -> dict[str, Any]:
        """nonce + answer number + JSON object, or a violation."""
        head = _wire.NONCE_BYTES + _wire.SEQ.size
        if payload[: _wire.NONCE_BYTES] != self._nonce:
            self._violation(stage, "a frame without this job's nonce")
        seq = payload[_wire.NONCE_BYTES : head]
        try:
            body = _wire.decode_payload(payload[head:])
        except _wire.ProtocolError as exc:
            self._violation(stage, str(exc))
        if seq == _wire.VIOLATION_SEQ:
            self._violation(stage, str(body.get("error", "protocol violation"))[:300])
        if seq != _wire.SEQ.pack(self._seq):
            self._violation(stage, f"answer {int.from_bytes(seq, 'big')} where {self._seq} was due")
        self._seq += 1
        return body

    def _violation(self, stage: str, what: str) -> NoReturn:
        """The child broke the protocol: have the server kill it, report PROTOCOL."""
        self._worker.calls.clear()
        if self.result is None:
            self._worker.send({"op": "kill"})
        while self.result is None:
            try:
                channel, frame = self._worker.read_any(self._deadline)
            except _wire.ProtocolError:  # more garbage from the dying child: drop it
                self._worker.calls.clear()
                continue
            except SandboxError:
                self.healthy = False
                self._worker.kill()
                self.result = ExecResult(Outcome.PROTOCOL, None, None, "", "", False, None, 0.0, None, self.isolation)
                break
            if channel == "main" and frame.get("op") == "result":
                self._worker.drain_calls()
                self.result = classify(frame, self.limits, self.isolation)
        self.result = ExecResult(Outcome.PROTOCOL, None, None, self.result.stdout, f"{what}\n{self.result.stderr}",
                                 False, self.result.cpu_seconds, self.result.wall_seconds, None, self.isolation)  # fmt: skip
        raise SessionEnded(self.result, stage)
