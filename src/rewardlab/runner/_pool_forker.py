"""The fork server of `rewardlab.runner.pool`: one small process, forked from the pool's process
when the pool starts, that forks every worker of that pool, first and replacement alike.

Why: a worker forked from a process that has been running for hours (a server) shares with it,
copy-on-write, every page that process has dirtied since it started, and keeps the old copy of
each page the process writes next; every generation of replacement workers (after a kill -9, a
timeout, a recycle) pins another set of such copies, and the server and its workers grow
together. The fork server is forked once, while the process is still as it was built (a server
starts its pools before it opens its listening socket and takes clients), and then only forks:
every worker shares the same pages with it and holds none of the server's sockets.

Not `multiprocessing`'s ``forkserver`` start method: that starts a fresh interpreter and sends
every worker its target pickled, so a reward would have to pickle, and each new worker would
build it again (a model's weights included) instead of sharing the pool's one copy.

The pool talks to it over a SOCK_SEQPACKET socket pair. ``S slot`` asks for a worker: the reply
is its pid, with its end of the pipe to the worker and a pidfd passed as file descriptors
(SCM_RIGHTS). A pidfd (Linux >= 5.3) turns readable when the worker exits, even when a process
it started still holds copies of its pipe ends, and signals it with no risk of hitting a reused
pid. The fork server reaps its workers and sends each exit code (``X pid code``).
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import multiprocessing as mp
import os
import select
import signal
import socket
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from rewardlab.errors import RunnerError

#: A worker's entry point, run in the worker: (its end of the pipe, its progress slot).
Target = Callable[[Connection, Any], None]

_PID = struct.Struct("i")
_EXIT = struct.Struct("ii")
_KEPT_EXITS = 256  # exit codes on file: far more than the workers that can be exiting at once
_REPLY_SECONDS = 30.0  # a fork server that does not answer a request within this is replaced
_NAME = b"rewardlab-fork"  # what `ps` shows for the fork server (at most 15 bytes)

# Descriptors this process holds for pools (fork servers' sockets, workers' pipes and pidfds).
# A fork server closes them all: it and its workers must hold no other pool's ends, or another
# pool's workers and fork servers would not see their ends close. Changed only under the lock
# the pool forks under.
_POOL_FDS: set[int] = set()


@functools.cache
def supported() -> bool:
    """Whether this system has pidfds (Linux >= 5.3), which the fork server relies on."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def _close_fd(fd: int) -> None:
    _POOL_FDS.discard(fd)
    with contextlib.suppress(OSError):
        os.close(fd)


class ForkedWorker:
    """A worker forked by a fork server, with the parts of `multiprocessing.Process` the pool
    uses: `pid`, `sentinel` (its pidfd), `is_alive`, `kill`, `join`, `exitcode`."""

    def __init__(self, server: ForkServer, pid: int, pidfd: int):
        self.server, self.pid, self.sentinel = server, pid, pidfd
        self._exitcode: int | None = None

    def _exited(self, timeout: float | None = 0.0) -> bool:
        if self.sentinel < 0:
            return True
        return bool(select.select([self.sentinel], [], [], timeout)[0])

    def is_alive(self) -> bool:
        return not self._exited()

    def kill(self) -> None:
        if self.sentinel >= 0:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self.sentinel, signal.SIGKILL)

    def join(self, timeout: float | None = None) -> None:
        """Wait until it has exited and its exit code is known (or `timeout` passes)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._exited(timeout) and self._exitcode is None:
            # reported as soon as it is reaped; bounded all the same, as a hung fork server
            # must not hang the pool (`spawn` then replaces it)
            left = _REPLY_SECONDS if deadline is None else max(0.0, deadline - time.monotonic())
            self._exitcode = self.server.exit_code(self.pid, left)

    @property
    def exitcode(self) -> int | None:
        """The exit code (negative: the signal), once it has exited; None while it runs."""
        if self._exitcode is None and self._exited():
            self._exitcode = self.server.exit_code(self.pid, 2.0)  # sent as soon as it is reaped
        return self._exitcode

    def close(self) -> None:
        """Release its pidfd (after it has exited)."""
        if self.sentinel >= 0:
            _close_fd(self.sentinel)
            self.sentinel = -1


class ForkServer:
    """The pool's side of a fork server (see the module docstring).

    Args:
        target: what each worker runs: ``target(conn, progress[slot])``.
        progress: one progress slot per worker slot, in memory shared with the workers.

    Start it from the thread that should own it: it is SIGKILLed when that thread ends, and so
    are its workers when it does (`_exit_with_parent`). Call it only under the pool's fork lock.
    """

    def __init__(self, target: Target, progress: list[Any]):
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:  # the fork server: never returns
            code = 1
            try:
                parent.close()
                _serve(child, target, progress)
                code = 0
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(code)
        child.close()
        self.pid = pid
        self._sock = parent
        _POOL_FDS.add(parent.fileno())
        self._lock = threading.Lock()  # one exchange at a time on the socket
        # The latest exit codes by pid. Kept after a worker is closed, as another thread may still
        # be asking for it (two threads join a worker that dies as the pool closes); bounded, and
        # a pid's entry is dropped when a new worker gets that pid.
        self._exits: OrderedDict[int, int] = OrderedDict()
        self._gone = False  # it closed its end (died): its workers died with it

    def alive(self) -> bool:
        if self._gone:
            return False
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return done == 0

    def spawn(self, slot: int) -> tuple[ForkedWorker, Connection]:
        """A new worker on progress slot `slot`, and the pool's end of the pipe to it.

        Raises:
            RunnerError: the fork server is gone, did not answer, or could not fork.
        """
        with self._lock:
            try:
                self._sock.send(b"S" + _PID.pack(slot))
            except OSError as exc:
                self._gone = True
                raise RunnerError(f"the pool's fork server is gone ({exc})") from exc
            deadline = time.monotonic() + _REPLY_SECONDS
            while True:
                kind, data, fds = self._receive(max(0.0, deadline - time.monotonic()))
                if kind == b"P":
                    conn_fd, pidfd = fds
                    _POOL_FDS.update(fds)
                    pid = _PID.unpack(data)[0]
                    self._exits.pop(pid, None)  # a reused pid: the report on file was its predecessor's
                    return ForkedWorker(self, pid, pidfd), Connection(conn_fd)
                if kind == b"E":
                    raise RunnerError(f"the pool's fork server could not start a worker: {data.decode(errors='replace')}")
                if kind == b"":
                    raise RunnerError("the pool's fork server did not answer" if not self._gone else "the pool's fork server is gone")

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """Worker `pid`'s exit code, waiting up to `timeout` for the fork server to report it.
        A worker whose fork server is gone was SIGKILLed with it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while pid not in self._exits:
                if self._gone:
                    return -signal.SIGKILL
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._receive(left)
            return self._exits[pid]

    def _receive(self, timeout: float | None) -> tuple[bytes, bytes, list[int]]:
        """The next message as (kind, data, fds), an exit report filed in `_exits` too;
        (b"", b"", []) on timeout or when the fork server has gone. Holds `_lock`."""
        if not select.select([self._sock], [], [], timeout)[0]:
            return b"", b"", []
        try:
            message, fds, _, _ = socket.recv_fds(self._sock, 64, 2)
        except OSError:
            message, fds = b"", []
        if not message:
            self._gone = True
            return b"", b"", []
        if message[:1] == b"X":
            pid, code = _EXIT.unpack(message[1:])
            self._exits[pid] = code
            while len(self._exits) > _KEPT_EXITS:
                self._exits.popitem(last=False)
        return message[:1], message[1:], fds

    def close(self) -> None:
        """Stop the fork server (its workers should be stopped first) and reap it."""
        with contextlib.suppress(OSError):
            self._sock.send(b"Q")
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(self.pid, os.WNOHANG)[0] == 0:
                    time.sleep(0.005)
                    continue
            break
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
        with self._lock:  # a thread waiting for a report has seen the end by now (EOF)
            self._gone = True
            if self._sock.fileno() >= 0:
                _POOL_FDS.discard(self._sock.fileno())
                self._sock.close()


def _set_name(name: bytes) -> bytes:
    """Set the name `ps` and `psutil` show for this process; returns the name it had."""
    try:
        with open("/proc/self/comm", "rb") as f:
            before = f.read().strip()
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(15, name)  # 15 = PR_SET_NAME
    except (OSError, AttributeError):
        return name
    return before


def _serve(sock: socket.socket, target: Target, progress: list[Any]) -> None:
    """The fork server's loop: fork a worker on request, report each worker's exit code."""
    from rewardlab.runner._pool_worker import _exit_with_parent

    for fd in list(_POOL_FDS):
        _close_fd(fd)
    faulthandler.disable()
    _exit_with_parent()
    own_name = _set_name(_NAME)
    # The pool decides when this process ends (or its thread's death does): a Ctrl-C to the
    # process group is the server's to handle, and the server's signal wake-up socket is not ours.
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)
    interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctx = mp.get_context("fork")
    live: dict[int, Any] = {}  # pidfd -> the worker's Process

    def run(conn: Connection, slot: Any, pool_end: int) -> None:
        signal.signal(signal.SIGINT, interrupt)
        _set_name(own_name)  # a worker is named as the pool's process, as when forked from it
        sock.close()  # the fork server's socket and the pool's end of this worker's own pipe:
        for fd in [pool_end, *live]:  # held here, neither would close when its owner goes
            with contextlib.suppress(OSError):
                os.close(fd)
        target(conn, slot)

    while True:
        ready = select.select([sock.fileno(), *live], [], [])[0]
        for fd in ready:
            if fd in live:
                process = live.pop(fd)
                os.close(fd)
                process.join()
                with contextlib.suppress(OSError):
                    sock.send(b"X" + _EXIT.pack(process.pid, process.exitcode))
                process.close()
        if sock.fileno() not in ready:
            continue
        try:
            message = sock.recv(64)
        except OSError:
            message = b""
        if message[:1] != b"S":  # b"Q" or the pool's end closed
            return
        slot = _PID.unpack(message[1:])[0]
        parent, child = ctx.Pipe()
        try:
            process = ctx.Process(target=run, args=(child, progress[slot], parent.fileno()), daemon=True)
            process.start()
        except OSError as exc:  # EAGAIN (a process limit), ENOMEM: the pool raises it
            parent.close()
            sock.send(b"E" + str(exc).encode()[:60])
            continue
        finally:
            child.close()
        pid = process.pid or 0  # set by `start`
        pidfd = os.pidfd_open(pid)  # cannot fail for a child not yet reaped
        live[pidfd] = process
        socket.send_fds(sock, [b"P" + _PID.pack(pid)], [parent.fileno(), pidfd])
        parent.close()
