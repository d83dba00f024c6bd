"""The host side: a warm pool of sandboxed fork servers, one-shot runs, and call sessions.

Every worker is one bubblewrap sandbox running `_server.py`, started once; each job forks a
fresh child in fresh namespaces inside it, so a job costs a few fork()s instead of a sandbox
and interpreter start. A worker that stops answering is killed with its whole sandbox and
replaced; its job is reported, the pool keeps working.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import logging
import os
import queue
import select
import signal
import subprocess
import tempfile
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, NoReturn

from rewardlab.errors import RunnerError
from rewardlab.sandbox import _server, _wire
from rewardlab.sandbox.config import (
    Limits,
    SandboxConfig,
    bwrap_argv,
    clean_env,
    find_bwrap,
    host_user,
    python_argv,
)

log = logging.getLogger(__name__)
# The program run inside the sandbox: the wire format, then the server (see `_server.py`).
_SERVER_SOURCE = "\n".join(
    Path(module.__file__).read_text().replace("from __future__ import annotations", "")  # type: ignore[arg-type]
    for module in (_wire, _server)
)
_GRACE = 3.0  # seconds the host waits past a job's wall limit before it kills the whole worker
FALLBACK_WARNING = (
    "bubblewrap (bwrap) not found: sandboxed code runs with rlimits only, WITHOUT namespaces; "
    "it can read your files and reach the network. Install it: apt-get install bubblewrap"
)


class SandboxError(RunnerError):
    """The sandbox could not start or broke down (not a failing program)."""


class Outcome(StrEnum):
    """How a sandboxed job ended, decided on the host from facts the server reports."""

    OK = "ok"  # exited with status 0
    RUNTIME_ERROR = "runtime_error"  # non-zero exit status (an exception, sys.exit(1), ...)
    MEMORY = "memory"  # MemoryError under the address-space limit
    CPU_TIMEOUT = "cpu_timeout"  # killed at the CPU-time limit
    WALL_TIMEOUT = "wall_timeout"  # killed at the wall-clock limit (sleeping, blocked)
    OUTPUT_LIMIT = "output_limit"  # wrote more than `output_bytes`
    SIGNALLED = "signalled"  # killed by another signal (segfault, abort, ...)
    PROTOCOL = "protocol"  # broke the call protocol (forged or oversized frames)


@dataclass(frozen=True)
class ExecResult:
    """What happened to one job. `stdout` is capped at the output limit."""

    outcome: Outcome
    exit_code: int | None
    signal: int | None
    stdout: str
    stderr: str
    truncated: bool
    cpu_seconds: float | None
    wall_seconds: float
    max_rss_kb: int | None
    isolation: str

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK

    def reason(self) -> str:
        """One line for reports: the outcome and its evidence."""
        if self.outcome is Outcome.RUNTIME_ERROR:
            tail = self.stderr.strip().splitlines()[-1:] or [""]
            return f"exit status {self.exit_code}: {tail[0][:200]}"
        if self.outcome is Outcome.SIGNALLED:
            return f"killed by signal {self.signal}"
        return self.outcome.value

    def to_info(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "cpu_seconds": None if self.cpu_seconds is None else round(self.cpu_seconds, 4),
            "wall_seconds": round(self.wall_seconds, 4),
            "max_rss_kb": self.max_rss_kb,
            "stderr": self.stderr[-500:],
            "truncated": self.truncated,
        }


def classify(report: dict[str, Any], limits: Limits, isolation: str) -> ExecResult:
    """Turn the server's `result` frame into an `ExecResult` (raises SandboxError on a fault)."""
    if report.get("fault"):
        raise SandboxError(f"sandbox set-up failed inside the worker: {report['fault'][-800:]}")
    wait = report.get("wait") or {}
    status = wait.get("status")
    cpu = wait.get("cpu")
    killed_for = report.get("killed_for")
    code = sig = None
    if isinstance(status, int):
        if os.WIFEXITED(status):
            code = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
    stderr = str(report.get("stderr", ""))
    if killed_for in ("wall", "host", "host closed"):
        outcome = Outcome.WALL_TIMEOUT
    elif killed_for == "output":
        outcome = Outcome.OUTPUT_LIMIT
    elif killed_for:
        outcome = Outcome.PROTOCOL
    elif sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu is not None and cpu >= limits.cpu_seconds * 0.9):
        outcome = Outcome.CPU_TIMEOUT
    elif sig is not None or status is None:
        outcome = Outcome.SIGNALLED
    elif code == 0:
        outcome = Outcome.OK
    elif "MemoryError" in stderr[-600:]:
        outcome = Outcome.MEMORY
    else:
        outcome = Outcome.RUNTIME_ERROR
    return ExecResult(
        outcome, code, sig, str(report.get("stdout", "")), stderr, bool(report.get("truncated")),
        cpu, float(report.get("wall", 0.0)), wait.get("maxrss_kb"), isolation,
    )  # fmt: skip


class _Worker:
    """One sandboxed fork server, spoken to over its stdin/stdout."""

    def __init__(self, make_argv: Callable[[tuple[int, int]], list[str]], *, user: int | None, timeout: float):
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 — lives as long as the worker
        extra: dict[str, Any] = {"user": user, "group": user, "extra_groups": []} if user is not None else {}
        # The call channel: the job's child reads calls from `call_in` and answers on `call_out`
        # directly, without a relay through the server. We keep the read end of `call_in` too,
        # to drain calls a dead child never read.
        self.call_in_r, self.call_in_w = os.pipe()
        call_out_r, call_out_w = os.pipe()
        argv = make_argv((self.call_in_r, call_out_w))
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
                env=clean_env(), start_new_session=True, close_fds=True,
                pass_fds=(self.call_in_r, call_out_w), **extra,
            )  # fmt: skip
        except OSError as exc:
            for fd in (self.call_in_r, self.call_in_w, call_out_r, call_out_w):
                os.close(fd)
            raise SandboxError(f"cannot start a sandbox worker ({argv[0]}): {exc}") from exc
        os.close(call_out_w)
        os.set_blocking(self.call_in_w, False)
        self.calls = _wire.FrameReader(call_out_r)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin_fd = self.proc.stdin.fileno()
        self.reader = _wire.FrameReader(self.proc.stdout.fileno())
        try:
            self.hello = self.read(time.monotonic() + timeout)
        except SandboxError as exc:
            said = self.stderr_text()[-1500:] or "(nothing)"
            self.kill()
            raise SandboxError(f"{exc}; worker said: {said}") from None
        if self.hello.get("op") != "hello":
            self.kill()
            raise SandboxError(f"sandbox worker sent {self.hello.get('op')!r} instead of hello")

    def send(self, frame: dict[str, Any], *, to_child: bool = False) -> None:
        try:
            _wire.write_frame(self.stdin_fd, frame, tag=b"C" if to_child else b"S")
        except OSError as exc:
            raise SandboxError(f"sandbox worker is gone: {exc}") from exc

    def read(self, deadline: float) -> dict[str, Any]:
        """The next frame; SandboxError if the worker dies, lies about framing, or is late."""
        while True:
            try:
                frames = self.reader.raw_frames(limit=1)
                if frames:
                    return self._decode(frames[0])
            except _wire.ProtocolError as exc:
                raise SandboxError(f"sandbox worker broke the protocol: {exc}") from exc
            if self.reader.eof:
                raise SandboxError(f"sandbox worker exited (status {self.proc.poll()})")
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.reader.fd], [], [], remaining)[0]:
                raise SandboxError("sandbox worker did not answer in time")
            self.reader.feed()

    @staticmethod
    def _decode(payload: bytes) -> dict[str, Any]:
        """A server frame as is; a child frame wrapped as {"op": "child", "frame": ...}."""
        if payload[:1] == b"S":
            return _wire.decode_payload(payload[1:])
        if payload[:1] == b"C":
            try:
                return {"op": "child", "frame": _wire.decode_payload(payload[1:])}
            except _wire.ProtocolError as exc:
                return {"op": "child", "frame": {"op": "garbage", "error": str(exc)}}
        raise _wire.ProtocolError(f"frame with unknown channel tag {payload[:1]!r}")

    def send_call(self, frame: dict[str, Any], deadline: float) -> None:
        """Write a frame to the child; stops early if the server reports the child's end."""
        payload = json.dumps(frame, separators=(",", ":"), allow_nan=False).encode("utf-8", "surrogatepass")
        view = memoryview(len(payload).to_bytes(4, "big") + payload)
        while view:
            try:
                view = view[os.write(self.call_in_w, view) :]
                continue
            except BlockingIOError:
                pass
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxError("the sandboxed child stopped reading its calls")
            readable, _, _ = select.select([self.reader.fd], [self.call_in_w], [], remaining)
            if readable:
                return  # the server has news (the child ended): the caller reads it next

    def read_any(self, deadline: float) -> tuple[str, dict[str, Any]]:
        """The next frame from the child ("call", frame) or from the server ("main", frame)."""
        while True:
            frames = self.calls.raw_frames(limit=1)  # raises ProtocolError on an oversized frame
            if frames:
                return "call", _wire.decode_payload(frames[0])
            frames = self.reader.raw_frames(limit=1)
            if frames:
                return "main", self._decode(frames[0])
            if self.reader.eof:
                raise SandboxError(f"sandbox worker exited (status {self.proc.poll()})")
            remaining = deadline - time.monotonic()
            fds = [self.reader.fd] + ([] if self.calls.eof else [self.calls.fd])
            ready = select.select(fds, [], [], remaining)[0] if remaining > 0 else []
            if not ready:
                raise SandboxError("sandbox worker did not answer in time")
            for fd in ready:
                (self.reader if fd == self.reader.fd else self.calls).feed()

    def drain_calls(self) -> None:
        """Forget whatever a finished child left in the call channel (both directions)."""
        self.calls._buf.clear()
        for fd in (self.calls.fd, self.call_in_r):
            os.set_blocking(fd, False)
            with contextlib.suppress(BlockingIOError):
                while os.read(fd, 1 << 16):
                    pass
            os.set_blocking(fd, True)

    def stderr_text(self) -> str:
        self.errors.seek(0)
        return self.errors.read().decode("utf-8", "replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """Kill the sandbox (bwrap is pid 1 of its namespace: everything inside dies with it)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        for fd in (self.call_in_r, self.call_in_w, self.calls.fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.errors.close()


class SandboxPool:
    """Pre-started sandboxed workers; `run` a program or open a call `session` in a fresh child.

    Thread-safe: up to `size` jobs run at once, one per worker; more wait for a free worker.

    Example:
        >>> with SandboxPool(size=1) as pool:
        ...     pool.run("print(input()[::-1])", stdin="abc").stdout
        'cba\\n'
    """

    def __init__(self, size: int = 2, config: SandboxConfig | None = None):
        if size < 1:
            raise ValueError(f"pool size must be >= 1, got {size}")
        self.size = size
        self.config = config or SandboxConfig()
        bwrap = find_bwrap()
        if self.config.isolation == "bubblewrap" and bwrap is None:
            raise SandboxError("isolation='bubblewrap' but bwrap is not installed: apt-get install bubblewrap")
        self.isolated = bwrap is not None and self.config.isolation != "rlimits"
        self.isolation = "bubblewrap" if self.isolated else "rlimits-only"
        self._python = python = self.config.interpreter()
        if self.isolated:
            assert bwrap is not None
            self._prefix = [*bwrap_argv(bwrap, python, self.config.extra_ro_binds), "--"]
            self._user = host_user(python)
        else:
            if self.config.isolation == "auto":
                warnings.warn(FALLBACK_WARNING, RuntimeWarning, stacklevel=2)
                log.warning(FALLBACK_WARNING)
            self._prefix, self._user = [], None
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._lock = threading.Lock()
        self._slots = threading.Semaphore(size)
        self._live = 0
        self._closed = False

    def _server_argv(self, calls: tuple[int, int]) -> list[str]:
        return [*self._prefix, *python_argv(self._python, _SERVER_SOURCE, isolate=self.isolated, calls=calls)]

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> SandboxPool:
        """Start every worker now (otherwise they start on first use). Raises SandboxError."""
        workers = [self._acquire() for _ in range(self.size)]
        for worker in workers:
            self._release(worker, healthy=True)
        return self

    def close(self) -> None:
        """Kill every idle worker; busy ones are killed when their job returns."""
        self._closed = True
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                break
            worker.kill()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _acquire(self) -> _Worker:
        if self._closed:
            raise SandboxError("the sandbox pool is closed")
        self._slots.acquire()
        try:
            while True:
                try:
                    worker = self._idle.get_nowait()
                except queue.Empty:
                    return _Worker(self._server_argv, user=self._user, timeout=self.config.start_timeout)
                if worker.alive():
                    return worker
                worker.kill()
        except BaseException:
            self._slots.release()
            raise

    def _release(self, worker: _Worker, *, healthy: bool) -> None:
        if healthy and worker.alive() and not self._closed:
            self._idle.put(worker)
        else:
            worker.kill()
        self._slots.release()

    # -- jobs ----------------------------------------------------------------------------------
    def run(
        self,
        source: str = "",
        *,
        stdin: str = "",
        limits: Limits | None = None,
        argv: list[str] | None = None,
        files: dict[str, str] | None = None,
    ) -> ExecResult:
        """Run a Python program (`source`, as `__main__`) or a command (`argv`, after writing
        `files` into the job's /tmp) with `stdin`; return how it ended and what it printed."""
        limits = limits or self.config.limits
        job = {"op": "run", "source": source, "stdin": stdin, "limits": limits.to_wire(),
               "argv": argv, "files": files or {}, "env": clean_env()}  # fmt: skip
        worker = self._acquire()
        healthy = False
        try:
            worker.send(job)
            report = worker.read(time.monotonic() + limits.wall_seconds + _GRACE)
            result = classify(report, limits, self.isolation)
            healthy = True
            return result
        finally:
            self._release(worker, healthy=healthy)

    @contextlib.contextmanager
    def session(
        self,
        source: str,
        *,
        limits: Limits | None = None,
        module_name: str = "solution",
        prefetch: Sequence[tuple[str, tuple[Any, ...]]] = (),
    ) -> Iterator[Session]:
        """Load `source` as a module in a fresh sandboxed child and call its functions.

        The whole session shares one CPU and one wall limit. Values cross as plain builtins.
        `prefetch` lists calls (name, args) to run right after loading, answered in one go.
        """
        limits = limits or self.config.limits
        worker = self._acquire()
        session = Session(worker, limits, self.isolation)
        try:
            session.open(source, module_name, prefetch)
            yield session
        finally:
            with contextlib.suppress(SandboxError, SessionEnded):
                session.close()
            self._release(worker, healthy=session.healthy)


class CandidateError(Exception):
    """The sandboxed function raised; `remote_type` is the name of its exception class."""

    remote_type: str = "Exception"


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
    """Calls into one loaded module inside the sandbox. Use through `SandboxPool.session`."""

    def __init__(self, worker: _Worker, limits: Limits, isolation: str):
        self._worker = worker
        self.limits = limits
        self.isolation = isolation
        self.result: ExecResult | None = None  # set once the child has ended
        self.healthy = True
        self.calls = 0
        self._deadline = 0.0
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
        self._worker.send({"op": "session", "source": source, "module_name": module_name,
                           "limits": self.limits.to_wire(), "stdin": "", "prefetch": pre})  # fmt: skip
        reply = self._next_child_frame("while loading")
        if reply.get("op") == "load_error":
            raise remote_exception("LoadError", str(reply.get("error", ""))[-1500:])
        if reply.get("op") != "loaded":
            self._violation("while loading", f"unexpected {reply.get('op')!r}")
        try:
            for i, msg in enumerate(pre):
                reply = self._next_child_frame("during prefetched calls")
                if reply.get("pre") != i or reply.get("op") not in ("return", "raise"):
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
            raise TypeError(f"cannot pass this argument into the sandbox: {exc}") from None
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

    def close(self) -> ExecResult:
        """End the child (if still running) and return how it ended."""
        if self.result is None:
            self._worker.send_call({"op": "end"}, self._deadline)
            with contextlib.suppress(SessionEnded):
                while True:
                    self._next_child_frame("at the end")
        assert self.result is not None
        return self.result

    # -- internals -------------------------------------------------------------------------------
    def _next_child_frame(self, stage: str) -> dict[str, Any]:
        """The child's next frame; on the server's `result` frame, raise SessionEnded."""
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
            return frame
        if frame.get("op") == "result":
            self._worker.drain_calls()
            self.result = classify(frame, self.limits, self.isolation)
            raise SessionEnded(self.result, stage)
        self.healthy = False
        raise SandboxError(f"sandbox worker sent {frame.get('op')!r} during a session")

    def _violation(self, stage: str, what: str) -> NoReturn:
        """The child broke the protocol: have the server kill it, report PROTOCOL."""
        self._worker.calls._buf.clear()
        if self.result is None:
            self._worker.send({"op": "kill"})
        while self.result is None:
            try:
                channel, frame = self._worker.read_any(self._deadline)
            except _wire.ProtocolError:  # more garbage from the dying child: drop it
                self._worker.calls._buf.clear()
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
