"""The host side: a warm pool of sandboxed fork servers, one-shot runs, and call sessions.

Every worker is one bubblewrap sandbox running `_server.py`, started once; each job forks a
fresh child in fresh namespaces inside it, so a job costs a few fork()s instead of a sandbox
and interpreter start. A worker that stops answering is killed with its whole sandbox and
replaced; its job is reported, the pool keeps working.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import logging
import os
import queue
import secrets
import select
import signal
import subprocess
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, ClassVar

from rewardlab.errors import ConfigError
from rewardlab.sandbox import _batch, _job, _seccomp, _server, _wire
from rewardlab.sandbox.batch import Batch
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
    for module in (_wire, _seccomp, _job, _batch, _server)
)
_GRACE = HOST_GRACE_SECONDS
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # Linux; Python 3.10+ names it
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


class _Spawner:
    """Starts worker processes from one long-lived thread of this process.

    bubblewrap's `--die-with-parent` is PR_SET_PDEATHSIG, which fires when the *thread* that
    forked it exits, not the process (prctl(2)): a worker started from a short-lived thread
    (an executor's, a request handler's) would be killed with it. Every worker is forked here.
    """

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _by_pid: ClassVar[dict[int, _Spawner]] = {}  # a forked process needs its own thread

    def __init__(self) -> None:
        self._orders: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="rewardlab-sandbox-spawner", daemon=True)
        self._thread.start()

    @classmethod
    def get(cls) -> _Spawner:
        with cls._lock:
            spawner = cls._by_pid.get(os.getpid())
            if spawner is None:
                spawner = cls._by_pid[os.getpid()] = cls()
            return spawner

    def _loop(self) -> None:
        while True:
            make, future = self._orders.get()
            try:
                future.set_result(make())
            except BaseException as exc:
                future.set_exception(exc)

    @classmethod
    def forget(cls) -> None:
        """In a forked child: the parent's spawner thread does not exist here (nor its lock's owner)."""
        cls._lock = threading.Lock()
        cls._by_pid = {}

    def run(self, make: Callable[[], Any]) -> Any:
        """`make()` on the spawner thread; its result (or exception) here."""
        if threading.current_thread() is self._thread:
            return make()
        future: Future[Any] = Future()
        self._orders.put((make, future))
        return future.result()


os.register_at_fork(after_in_child=_Spawner.forget)


class _Worker:
    """One sandboxed fork server, spoken to over its stdin/stdout, plus the call channel that
    goes straight to the job running in it."""

    def __init__(self, make_argv: Callable[[tuple[int, int]], list[str]], *, user: int | None, timeout: float):
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 — lives as long as the worker
        extra: dict[str, Any] = {"user": user, "group": user, "extra_groups": []} if user is not None else {}
        # The call channel: a job reads its order from `call_in` and a session's guard answers
        # on `call_out`, without a relay through the server. We keep the read end of `call_in`
        # too, to drain what a dead job never read.
        self.call_in_r, self.call_in_w = os.pipe()
        call_out_r, call_out_w = os.pipe()
        argv = make_argv((self.call_in_r, call_out_w))
        popen = functools.partial(
            subprocess.Popen, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
            env=clean_env(), start_new_session=True, close_fds=True,
            pass_fds=(self.call_in_r, call_out_w), **extra,
        )  # fmt: skip
        try:
            self.proc: subprocess.Popen[bytes] = _Spawner.get().run(popen)
        except OSError as exc:
            for fd in (self.call_in_r, self.call_in_w, call_out_r, call_out_w):
                os.close(fd)
            raise SandboxError(f"cannot start a sandbox worker ({argv[0]}): {exc}") from exc
        os.close(call_out_w)
        os.set_blocking(self.call_in_w, False)
        # Builds (a Go binary is ~1.3 MB) go to the job on this pipe: a 1 MiB buffer instead of
        # 64 KiB means a handful of wake-ups per job instead of dozens (fcntl(2) F_SETPIPE_SZ;
        # silently not applied above /proc/sys/fs/pipe-max-size for an unprivileged user).
        with contextlib.suppress(OSError):
            fcntl.fcntl(self.call_in_w, _F_SETPIPE_SZ, 1 << 20)
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

    def start_job(self, op: str, limits: Limits, order: dict[str, Any], deadline: float,
                  blobs: Sequence[bytes] = ()) -> str:  # fmt: skip
        """Have the server start a job, and hand the job its order (source, stdin, calls to
        prefetch) directly: the server never sees it. `blobs` follow the order as raw frames
        (the contents of its `binary_files`, in order). Returns the job's nonce."""
        nonce = secrets.token_hex(_wire.NONCE_BYTES // 2)
        self.calls.max_frame = limits.frame_bytes + _wire.NONCE_BYTES + _wire.SEQ.size
        self.send({"op": op, "limits": limits.to_wire()})
        if self.send_call({**order, "nonce": nonce}, deadline):
            for blob in blobs:
                if not self._send_payload(blob, deadline):
                    break
        return nonce

    def send(self, frame: dict[str, Any]) -> None:
        try:
            _wire.write_frame(self.stdin_fd, frame, tag=b"S")
        except OSError as exc:
            raise SandboxError(f"sandbox worker is gone: {exc}") from exc

    def read(self, deadline: float) -> dict[str, Any]:
        """The server's next frame; a `result` comes with the job's "stdout" and "stderr".
        SandboxError if the worker dies, lies about framing, or is late."""
        frame: dict[str, Any] = self._decode(self._next_server_payload(deadline), b"S")
        if frame.get("op") == "result":
            for key, tag in (("stdout", b"O"), ("stderr", b"E")):
                frame[key] = self._decode(self._next_server_payload(deadline), tag)
        return frame

    def _next_server_payload(self, deadline: float) -> bytes:
        while True:
            try:
                frames = self.reader.raw_frames(limit=1)
            except _wire.ProtocolError as exc:
                raise SandboxError(f"sandbox worker broke the protocol: {exc}") from exc
            if frames:
                return frames[0]
            if self.reader.eof:
                raise SandboxError(f"sandbox worker exited (status {self.proc.poll()})")
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.reader.fd], [], [], remaining)[0]:
                raise SandboxError("sandbox worker did not answer in time")
            self.reader.feed()

    @staticmethod
    def _decode(payload: bytes, tag: bytes) -> Any:
        """A server frame: JSON after b"S", text after b"O"/b"E"."""
        if payload[:1] != tag:
            raise SandboxError(f"sandbox worker sent a frame tagged {payload[:1]!r}, expected {tag!r}")
        if tag == b"S":
            try:
                return _wire.decode_payload(payload[1:])
            except _wire.ProtocolError as exc:
                raise SandboxError(f"sandbox worker broke the protocol: {exc}") from exc
        return payload[1:].decode("utf-8", "replace")

    def send_call(self, frame: dict[str, Any] | None, deadline: float) -> bool:
        """Write a frame (None: the empty frame that ends a session) to the job; stops early
        (False) if the server reports the job's end."""
        payload = b"" if frame is None else json.dumps(frame, separators=(",", ":"), allow_nan=False).encode("utf-8", "surrogatepass")
        return self._send_payload(payload, deadline)

    def _send_payload(self, payload: bytes, deadline: float) -> bool:
        for part in (len(payload).to_bytes(4, "big"), payload):
            view = memoryview(part)
            while view:
                try:
                    view = view[os.write(self.call_in_w, view) :]
                    continue
                except BlockingIOError:
                    pass
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise SandboxError("the sandboxed job stopped reading its calls")
                readable, _, _ = select.select([self.reader.fd], [self.call_in_w], [], remaining)
                if readable:
                    return False  # the server has news (the job ended): the caller reads it next
        return True

    def read_any(self, deadline: float) -> tuple[str, Any]:
        """The next frame from the job ("call", raw payload) or the server ("main", frame).
        Everything a job wrote precedes the server's report of its end, so the call channel
        is read dry before a server frame is returned."""
        server_ready = False
        while True:
            frames = self.calls.raw_frames(limit=1)  # raises ProtocolError on an oversized frame
            if frames:
                return "call", frames[0]
            if server_ready or self.reader.buffered():
                if not self.calls.eof and select.select([self.calls.fd], [], [], 0)[0]:
                    self.calls.feed()
                    continue
                return "main", self.read(deadline)
            remaining = deadline - time.monotonic()
            fds = [self.reader.fd] + ([] if self.calls.eof else [self.calls.fd])
            ready = select.select(fds, [], [], remaining)[0] if remaining > 0 else []
            if not ready:
                raise SandboxError("sandbox worker did not answer in time")
            if self.calls.fd in ready:
                self.calls.feed()
            server_ready = self.reader.fd in ready

    def drain_calls(self) -> None:
        """Forget whatever a finished job left in the call channel (both directions)."""
        self.calls.clear()
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

    Examples:
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
        files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run a Python program (`source`, as `__main__`) or a command (`argv`, after writing
        `files` into the job's /tmp: text as is, bytes as executables) with `stdin` and `env`
        added to the clean environment; return how it ended and what it printed."""
        limits = limits or self.config.limits
        text, binary = _job_files(files or {}, limits)
        order = {"source": source, "stdin": stdin, "argv": argv, "files": text, "binary_files": list(binary),
                 "env": {**clean_env(), **(env or {})}}  # fmt: skip
        worker = self._acquire()
        healthy = False
        try:
            deadline = time.monotonic() + limits.wall_seconds + _GRACE
            worker.start_job("run", limits, order, deadline, blobs=list(binary.values()))
            report = worker.read(deadline)
            worker.drain_calls()
            result = classify(report, limits, self.isolation)
            healthy = True
            return result
        finally:
            self._release(worker, healthy=healthy)

    @contextlib.contextmanager
    def batch(
        self,
        argv: list[str],
        *,
        files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        size: int = 256,
    ) -> Iterator[Batch]:
        """Run the command `argv` (after writing `files`, as `run` does) on many stdins, each
        run in a fresh process under `limits`, all in one job sandbox (`batch.py`): a run
        costs a fork and an exec instead of a job's namespaces. `size` runs share a job at
        most. Holds a worker from the first run until the block ends.

        Examples:
            >>> with SandboxPool(size=1) as pool, pool.batch(["/bin/cat"]) as runs:
            ...     [runs.run(text).stdout for text in ("a", "b")]
            ['a', 'b']
        """
        batch = Batch(self, argv=argv, files=files or {}, env=env or {}, limits=limits or self.config.limits, size=size)
        try:
            yield batch
        finally:
            batch.close()

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


def job_files_limit(limits: Limits) -> int:
    """The most bytes of `files` a job under `limits` can be handed: its /tmp must hold them,
    and they travel to it in frames of at most MAX_FRAME (a text file inside the JSON order)."""
    return min(limits.tmp_bytes, _wire.MAX_FRAME // 2)


def _job_files(files: Mapping[str, str | bytes], limits: Limits) -> tuple[dict[str, str], dict[str, bytes]]:
    """Split a job's files into text and binary ones (sent as raw frames after the order);
    names must be plain file names, and the files must fit the job's /tmp."""
    text: dict[str, str] = {}
    binary: dict[str, bytes] = {}
    size = sum(len(content) for content in files.values())
    if size > job_files_limit(limits):
        raise ConfigError(f"the job's files hold {size} bytes, more than its /tmp (tmp_bytes={limits.tmp_bytes}) can take; raise tmp_bytes")
    for name, content in files.items():
        if not name or "/" in name or name in (".", ".."):
            raise ConfigError(f"job file name {name!r} must be a plain file name (no '/'): files go into the job's /tmp")
        if isinstance(content, bytes):
            binary[name] = content
        else:
            text[name] = content
    return text, binary
