"""A small pool of persistent, killable sympy worker processes.

Why processes: a timeout must stop sympy even inside a C-level big-integer operation, and must
work from any thread. `signal.alarm` does neither (it only fires in the main thread and only
between bytecodes). A process can always be killed.

Why persistent: starting Python, importing sympy + latex2sympy2_extended and warming up the
LaTeX parser costs ~2 s; a worker that stays up answers a request in about a millisecond. A
worker that times out or dies is killed and a replacement starts at once in the background. A
call still running after `SLOW_CALL` seconds starts a spare worker too (when there is room
under `max_workers`), so the call after a kill usually finds one ready. A caller
that knows it will need sympy soon launches a worker in the background (`warm_up(wait=False)`)
so that start overlaps its own work.

What is covered: wall-clock timeouts of each call (the worker is SIGKILLed past it), crashes
(segfault, `RecursionError` escaping, the OOM killer), a memory cap per worker
(`RLIMIT_AS`, `REWARDLAB_MATH_WORKER_MEM_MB`, default 4096), use from many threads (each call
takes its own worker; at most `max_workers` exist), use after `os.fork()` (the child starts its
own workers), use inside daemonic `multiprocessing` workers (plain `subprocess`, not
`multiprocessing`, so daemon processes may start them).
What is not covered: isolation from a hostile *caller*; the workers run trusted rewardlab code on
untrusted strings, no sandbox is needed or provided.

Protocol: length-prefixed pickles over the worker's stdin/stdout (4-byte big-endian length).
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from rewardlab._lazy import extras_for, missing
from rewardlab.errors import ConfigError, DependencyError, WorkerCrashed

__all__ = ["SympyPool", "default_pool", "warm_up"]

_HEADER = struct.Struct(">I")
STARTUP_TIMEOUT = 120.0  # importing sympy on a loaded 2-core box can take many seconds
# A call still running after this long (most answer in milliseconds) may end in a kill: a spare
# worker starts then, so the call after a kill finds one ready instead of waiting ~2 s or more
# for a restart.
SLOW_CALL = 1.0

# The worker runs `_server.main`, which needs symbolic.py and what it imports (sympy,
# latex2sympy2_extended, rewardlab.errors), not the `__init__`s of the packages above it: those
# import the whole library (compose, runner, extract, ...), ~0.5 s of a ~2 s start. The three
# packages are entered as bare modules with their real `__path__`, so their submodules import
# as usual (from the same files as the parent's) and only the `__init__`s are skipped.
_MATH_DIR = os.path.dirname(os.path.abspath(__file__))
_PACKAGES = (
    ("rewardlab", os.path.dirname(os.path.dirname(_MATH_DIR))),
    ("rewardlab.verify", os.path.dirname(_MATH_DIR)),
    ("rewardlab.verify.math", _MATH_DIR),
)
_BARE_PACKAGES = f"""
import sys, types
for name, path in {_PACKAGES!r}:
    package = types.ModuleType(name)
    package.__path__ = [path]
    sys.modules[name] = package
"""
_SERVER_PROGRAM = _BARE_PACKAGES + "from rewardlab.verify.math._server import main\nmain()\n"


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                raise TimeoutError
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise WorkerCrashed("sympy worker exited")
        buf += chunk
    return bytes(buf)


# What the worker imports (symbolic.py); missing, it would die on start with a traceback.
_DEPENDENCIES = ("sympy", "latex2sympy2_extended")


def _check_dependencies() -> None:
    """Raise `DependencyError` (kind `dependency` in results) when the worker could not import
    what it needs, before a process is launched to find out."""
    gone = missing(*_DEPENDENCIES)
    if gone:
        raise DependencyError("the maths verifier's symbolic step", gone, extras_for(gone))


class _Worker:
    """One worker process and its pipes. Constructing one only launches the process; `wait_ready`
    waits for it to have imported sympy (so a launch can overlap other work)."""

    def __init__(self) -> None:
        # stderr goes to an unnamed temporary file (a pipe nobody reads could fill and block
        # the worker); its tail explains a worker that fails to start.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the worker; closed in kill)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER_PROGRAM],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            close_fds=True,
        )
        self._out = self.proc.stdout.fileno()  # type: ignore[union-attr]
        self._launched = time.monotonic()
        self.ready = False

    def wait_ready(self) -> None:
        """Block until the worker says it is ready (at most `STARTUP_TIMEOUT` after its launch).

        Raises:
            WorkerCrashed: it died or did not start in time (the worker is killed).
        """
        if self.ready:
            return
        try:
            kind, _ = self._receive(self._launched + STARTUP_TIMEOUT)
        except (TimeoutError, WorkerCrashed) as exc:
            self.proc.kill()
            self.proc.wait()
            self._stderr.seek(0)
            tail = self._stderr.read()[-600:].decode(errors="replace").strip()
            self.kill()
            raise WorkerCrashed(f"sympy worker did not start ({type(exc).__name__}): {tail or exc}") from exc
        if kind != "ready":
            self.kill()
            raise WorkerCrashed(f"sympy worker sent {kind!r} instead of 'ready'")
        self.ready = True

    def has_answered(self) -> bool:
        """Whether `wait_ready` would return (or raise) at once: its message, or EOF, is there."""
        return self.ready or bool(select.select([self._out], [], [], 0)[0])

    def _receive(self, deadline: float | None) -> tuple[str, Any]:
        (size,) = _HEADER.unpack(_read_exact(self._out, _HEADER.size, deadline))
        return pickle.loads(_read_exact(self._out, size, deadline))  # type: ignore[no-any-return]

    def call(self, func: str, args: tuple[Any, ...], timeout: float, on_slow: Callable[[], None] | None = None) -> Any:
        """Run `func(*args)` in this worker; `on_slow` is called once when no answer has come
        after `SLOW_CALL` seconds (the call may be on its way to a timeout and a kill)."""
        payload = pickle.dumps((func, args), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.proc.stdin.write(_HEADER.pack(len(payload)) + payload)  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError) as exc:
            raise WorkerCrashed(f"sympy worker is gone: {exc}") from exc
        deadline = time.monotonic() + timeout
        if on_slow is not None and timeout > SLOW_CALL and not select.select([self._out], [], [], SLOW_CALL)[0]:
            on_slow()
        kind, value = self._receive(deadline)
        if kind == "err":
            raise RuntimeError(value)
        return value

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self._stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def close(self) -> None:
        """Ask the worker to exit (EOF on its stdin), then make sure it did."""
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()


class SympyPool:
    """Up to `max_workers` persistent sympy workers shared by the threads of one process.

    Args:
        max_workers: most processes alive at once; a call finding all busy waits (within its
            timeout) for one to come free.
    """

    def __init__(self, max_workers: int = 2):
        if max_workers < 1:
            raise ConfigError(f"max_workers must be >= 1, got {max_workers}")
        self.max_workers = max_workers
        self._idle: list[_Worker] = []
        self._starting: list[_Worker] = []  # launched by `warm_up(wait=False)`, not yet ready
        self._alive = 0
        self._cond = threading.Condition()
        self._pid = os.getpid()
        self.launched = 0  # worker processes launched so far (tests and reports read it)
        self.restarts = 0  # workers killed after a timeout or crash (tests and reports read it)
        _POOLS.add(self)

    def _acquire(self, deadline: float) -> _Worker:
        with self._cond:
            while not self._idle and not self._starting and self._alive >= self.max_workers:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._cond.wait(remaining):
                    raise TimeoutError("no free sympy worker before the deadline")
            if self._idle:
                return self._idle.pop()
            # A worker launched early is further along than a new one would be: take it.
            worker = self._starting.pop(0) if self._starting else None
            if worker is None:
                self._alive += 1
        try:
            if worker is None:
                worker = self._launch()
            worker.wait_ready()  # outside the lock: other threads keep working meanwhile
            return worker
        except BaseException:
            with self._cond:
                self._alive -= 1
                self._cond.notify()
            raise

    def _launch(self) -> _Worker:
        _check_dependencies()
        worker = _Worker()
        with self._cond:
            self.launched += 1
        return worker

    def _release(self, worker: _Worker, *, broken: bool) -> None:
        if broken:
            worker.kill()
        with self._cond:
            if broken:
                self._alive -= 1
                self.restarts += 1
            else:
                self._idle.append(worker)
            self._cond.notify()
        if broken:
            self._spare()  # the replacement starts now, not when the next call comes

    def _spare(self) -> None:
        """Launch a worker in the background when none is idle or starting and there is room:
        a spare for the call that comes after a kill."""
        with self._cond:
            if self._idle or self._starting or self._alive >= self.max_workers:
                return
            self._alive += 1
        try:
            worker = self._launch()
        except (OSError, DependencyError):
            with self._cond:  # the next call launches one itself and reports the failure
                self._alive -= 1
            return
        with self._cond:
            self._starting.append(worker)
            self._cond.notify()

    def call(self, func: str, args: tuple[Any, ...], *, timeout: float) -> Any:
        """Run `rewardlab.verify.math.symbolic.<func>(*args)` in a worker.

        Raises:
            TimeoutError: no answer within `timeout` seconds (the worker was killed).
            WorkerCrashed: the worker died or could not start.
            RuntimeError: the function raised inside the worker (message says what).
        """
        self._check_fork()
        worker = self._acquire(time.monotonic() + timeout)
        broken = True
        try:
            value = worker.call(func, args, timeout, on_slow=self._spare)
            broken = False
            return value
        except RuntimeError as exc:
            if isinstance(exc, WorkerCrashed):
                raise
            broken = False  # an exception inside the worker leaves it healthy
            raise
        finally:
            self._release(worker, broken=broken)

    def has_ready_worker(self) -> bool:
        """Whether a call now would find a worker without waiting for one to start: an idle
        worker, or one launched in the background that has finished starting. Never blocks."""
        self._check_fork()
        with self._cond:
            return bool(self._idle) or any(worker.has_answered() for worker in self._starting)

    def warm_up(self, *, wait: bool = True) -> None:
        """Have one worker up, so the first verdict does not pay the sympy import (~1-2 s).

        Args:
            wait: True blocks until it is ready. False only launches it (when no worker is up
                or starting) and returns at once: it imports sympy while the caller does other
                work (e.g. reads a file), and the first call that needs a worker waits only for
                what is left of its start.
        """
        self._check_fork()
        if wait:
            worker = self._acquire(time.monotonic() + STARTUP_TIMEOUT)
            self._release(worker, broken=False)
            return
        self._spare()

    def close(self) -> None:
        """Stop every idle or starting worker (busy ones are stopped when they come back broken
        or at exit)."""
        with self._cond:
            idle, self._idle = self._idle, []
            starting, self._starting = self._starting, []
            self._alive -= len(idle) + len(starting)
        for worker in idle:
            worker.close()
        for worker in starting:
            worker.kill()  # still importing: nothing to finish

    def _check_fork(self) -> None:
        # After os.fork() the child must not talk to the parent's workers (their pipes are
        # shared with the parent): forget them and start fresh ones.
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._idle = []
            self._starting = []
            self._alive = 0
            self._cond = threading.Condition()


_POOLS: weakref.WeakSet[SympyPool] = weakref.WeakSet()
_DEFAULT: SympyPool | None = None
_DEFAULT_LOCK = threading.Lock()


def default_pool() -> SympyPool:
    """The process-wide pool (`REWARDLAB_MATH_WORKERS` workers, default 2)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT._pid != os.getpid():
            _DEFAULT = SympyPool(int(os.environ.get("REWARDLAB_MATH_WORKERS", "2")))
        return _DEFAULT


def warm_up(*, wait: bool = True) -> None:
    """Start the default pool's first worker now (takes ~1-2 s; otherwise the first check that
    needs sympy pays). `wait=False` launches it in the background (see `SympyPool.warm_up`)."""
    default_pool().warm_up(wait=wait)


@atexit.register
def _close_all() -> None:
    for pool in list(_POOLS):
        if pool._pid == os.getpid():
            pool.close()
