"""The host side: a warm pool of sandboxed fork servers, one-shot runs, and call sessions.

Every worker is one bubblewrap sandbox running `_server.py`, started once; each job forks a
fresh child in fresh namespaces inside it, so a job costs a few fork()s instead of a sandbox
and interpreter start. A worker that stops answering is killed with its whole sandbox and
replaced; its job is reported, the pool keeps working.
"""

from __future__ import annotations

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
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rewardlab.errors import ConfigError
from rewardlab.sandbox import _seccomp, _server, _wire
from rewardlab.sandbox.config import (
    HOST_GRACE_SECONDS,
    Limits,
    SandboxConfig,
    bwrap_argv,
    clean_env,
    find_bwrap,
    host_user,
    python_argv,
    unreachable_binds,
)
from rewardlab.sandbox.result import ExecResult, SandboxError, classify
from rewardlab.sandbox.session import Session, SessionEnded

log = logging.getLogger(__name__)
# The program run inside the sandbox: the wire format, then the server (see `_server.py`).
_SERVER_SOURCE = "\n".join(
    Path(module.__file__).read_text().replace("from __future__ import annotations", "")  # type: ignore[arg-type]
    for module in (_wire, _seccomp, _server)
)
_GRACE = HOST_GRACE_SECONDS
FALLBACK_WARNING = (
    "sandboxed code runs with rlimits only, WITHOUT namespaces (bubblewrap not found, or "
    "isolation='rlimits'): it can read your files and reach the network. "
    "Install bubblewrap: apt-get install bubblewrap"
)


_START_HINT = (
    "If bubblewrap could not create its user namespace, this host forbids unprivileged user "
    "namespaces: allow them (sysctl kernel.unprivileged_userns_clone=1, or "
    "kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 24.04+), or use "
    "isolation='rlimits' (no isolation)"
)


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
            raise ConfigError(f"pool size must be >= 1, got {size}")
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
            self._user = host_user()
            if self._user is not None and (blocked := unreachable_binds(python, self.config.extra_ro_binds)):
                raise SandboxError(
                    f"the sandbox runs as uid {self._user} (nobody), which cannot reach {', '.join(blocked)}: "
                    "a parent directory lacks o+x (e.g. /root is 0700). Install the environment where "
                    "nobody can read it (chmod o+x on the parents, or a virtualenv outside /root), "
                    "leave that path out of extra_ro_binds, or use isolation='rlimits' (no isolation)"
                )
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
                    return self._start_worker()
                if worker.alive():
                    return worker
                worker.kill()
        except BaseException:
            self._slots.release()
            raise

    def _start_worker(self) -> _Worker:
        # No fallback to starting bubblewrap as root when starting it as `nobody` fails (e.g.
        # AppArmor's apparmor_restrict_unprivileged_userns): such a sandbox cannot mount the
        # per-job /proc (see `host_user`), so the error says what failed instead.
        try:
            return _Worker(self._server_argv, user=self._user, timeout=self.config.start_timeout)
        except SandboxError as exc:
            raise SandboxError(f"{exc}. {_START_HINT}") from None

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
