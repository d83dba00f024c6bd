"""The fork server that runs INSIDE the sandbox (one per worker).

Standard library only: the host starts it as `python -S -s -B -c <_wire + _seccomp + _job +
this file>` inside bubblewrap, where nothing of rewardlab is importable.

The server forks job sandboxes ahead of time (`Spare`: A, B, C of `_job.py`) and, per job,
tells one to go, pumps its stdout/stderr and reports how it ended. It is a pristine template:
it never holds a job's source, stdin, calls or answers (those go straight between the host
and the job), and it reads a job's output into memory that children do not inherit
(MADV_DONTFORK) and passes it on unparsed. So a job forked after another cannot find anything
of it in its heap, on its frame stack or in /proc/self/mem. What the server does hold are
facts: limits, exit statuses, CPU times.
"""

from __future__ import annotations

import contextlib
import gc
import json
import mmap
import os
import select
import signal
import sys
import time
from typing import Any

if __name__ != "__main__":  # on the host; inside the sandbox the other files' text comes first
    from rewardlab.sandbox._job import PR_SET_DUMPABLE, _libc, job_namespaces
    from rewardlab.sandbox._seccomp import _MACHINE, _fprog
    from rewardlab.sandbox._wire import FrameReader, decode_payload, write_frame, write_raw

_CHUNK = 1 << 16  # bytes read from a job's output per read()
_STDERR_TAIL = 4000  # bytes of stderr reported


def _live_pids() -> list[int]:
    """Processes of this (worker) pid namespace that are not zombies."""
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in ("Z", "X"):
                pids.append(int(name))
    return pids


def _process_tree(pid: int) -> set[int]:
    """`pid` and its descendants."""
    tree, todo = set(), [pid]
    while todo:
        current = todo.pop()
        tree.add(current)
        with contextlib.suppress(OSError), open(f"/proc/{current}/task/{current}/children") as f:
            todo += [int(c) for c in f.read().split()]
    return tree


def _close_all_but(keep: set[int]) -> None:
    fd = -1
    for nxt in [*sorted(keep), 1 << 16]:
        if nxt > fd + 1:
            os.closerange(fd + 1, nxt)
        fd = nxt


class Spare:
    """A job sandbox forked ahead of time: A, B and C exist, B waits on `job_w` for its go."""

    def __init__(self, *, isolate: bool, tmpfs: tuple[int, int], calls: tuple[int, int]):
        self.tmpfs = tmpfs
        self.workdir = "/tmp"
        if not isolate:
            import tempfile

            self.workdir = tempfile.mkdtemp(prefix="rewardlab-job-")
        self.isolate = isolate
        fds: dict[str, int] = {}
        for a, b in (("job_r", "job_w"), ("out_r", "out_w"), ("err_r", "err_w"), ("status_r", "status_w"),
                     ("setup_r", "setup_w")):  # fmt: skip
            fds[a], fds[b] = os.pipe()
        # The call channel goes straight to the host: B reads its job from it and relays a
        # session's calls over it; nothing of it passes through us.
        fds["cin"], fds["cout"] = calls
        fds["alive_r"], fds["alive_w"] = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            # Keep only this job's descriptors: a job holding another spare's pipes would keep
            # that spare waiting for a job after the server dropped it.
            _close_all_but({0, 1, 2, *fds.values()})
            job_namespaces(fds, isolate, tmpfs, self.workdir)
        for name in ("alive_r", "alive_w"):
            os.close(fds.pop(name))
        for name in ("job_r", "out_w", "err_w", "status_w", "setup_w"):
            os.close(fds.pop(name))
        del fds["cin"], fds["cout"]
        self.fds = fds
        self.pidfd = os.pidfd_open(self.pid)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def reap(self, *, block: bool) -> bool:
        """Reap A (it exits once its job has), close our ends, remove the work directory."""
        pid, _ = os.waitpid(self.pid, 0 if block else os.WNOHANG)
        if pid == 0:
            return False
        for fd in (*self.fds.values(), self.pidfd):
            os.close(fd)
        if not self.isolate:
            import shutil

            shutil.rmtree(self.workdir, ignore_errors=True)
        return True


class Capture:
    """A job's stdout and stderr, read straight into an anonymous mapping that forked children
    do not get (MADV_DONTFORK) and written on to the host from there: no copy of another job's
    output ever sits in the heap that spares are forked from."""

    def __init__(self, cap: int):
        self.cap = cap
        self.room = cap + _CHUNK  # per stream: reading stops once the total passes `cap`
        self.map = mmap.mmap(-1, 2 * self.room)
        self.map.madvise(mmap.MADV_DONTFORK)
        self.view = memoryview(self.map)
        self.used = [0, 0]  # bytes of stdout, stderr

    def total(self) -> int:
        return self.used[0] + self.used[1]

    def read(self, stream: int, fd: int) -> bool:
        """One read() from `fd` into the stream's region; False at end of file."""
        start = stream * self.room + self.used[stream]
        n = os.readv(fd, [self.view[start : start + _CHUNK]])
        self.used[stream] += n
        return n > 0

    def send(self, fd: int) -> None:
        """Write stdout (up to the cap) and the tail of stderr as raw frames b"O", b"E"."""
        out = min(self.used[0], self.cap)
        err_end = min(self.used[1], self.cap)
        err_start = max(0, err_end - _STDERR_TAIL)
        write_raw(fd, b"O", self.view[:out])
        write_raw(fd, b"E", self.view[self.room + err_start : self.room + err_end])

    def close(self) -> None:
        self.view.release()
        self.map.close()


class Server:
    """Reads job orders from the host, lets a spare run each, reports facts (never verdicts)."""

    SPARES = 2  # job sandboxes kept ready: the next job never waits for namespace set-up

    def __init__(self, host_in: int, host_out: int, *, isolate: bool, calls: tuple[int, int]):
        self.host = FrameReader(host_in)
        self.host_out = host_out
        self.isolate = isolate
        self.calls = calls
        self.spares: list[Spare] = []
        self.dying: list[Spare] = []
        self.tmpfs = (0, 0)  # (bytes, inodes) of the spares' /tmp

    def serve(self) -> None:
        hello = {"op": "hello", "python": sys.version.split()[0], "isolate": self.isolate, "uid": os.getuid()}
        write_frame(self.host_out, hello, tag=b"S")
        while True:
            payload = self.host.read_raw_blocking()
            if payload is None:
                return
            if payload[:1] != b"S":
                continue
            order = decode_payload(payload[1:])
            if order.get("op") == "exit":
                return
            if order.get("op") in ("run", "session", "batch"):
                self.run_job(order["op"], order["limits"])
                # Spares are forked here, at the top of the loop: no frame below this one is
                # on the stack a job inherits.
                self.refill()
            elif order.get("op") != "kill":  # a kill that arrived after its job had ended
                write_frame(self.host_out, {"op": "error", "error": f"unknown op {order.get('op')!r}"}, tag=b"S")

    def refill(self) -> None:
        while len(self.spares) < self.SPARES:
            self.spares.append(Spare(isolate=self.isolate, tmpfs=self.tmpfs, calls=self.calls))
        for old in self.dying:  # the spare that ran, and spares dropped for other limits
            old.reap(block=True)
        self.dying = []

    def run_job(self, op: str, limits: dict[str, Any]) -> None:
        """Tell a ready spare to go, pump its output, report. A replacement is forked after
        the report, while the host is busy with the result."""
        tmpfs = (int(limits["tmp_bytes"]), int(limits["tmp_inodes"]))
        if tmpfs != self.tmpfs:
            for spare in self.spares:
                spare.kill()
            self.dying += self.spares
            self.spares, self.tmpfs = [], tmpfs
        self.refill()
        spare = self.spares.pop(0)
        start = time.monotonic()
        with contextlib.suppress(OSError):  # the spare died: _watch reports it
            write_frame(spare.fds["job_w"], {"op": op, "limits": limits})
        capture = Capture(int(limits["output_bytes"]))
        try:
            killed_for = self._watch(limits, spare, capture, start)
            self._report(spare.fds, capture, killed_for, time.monotonic() - start)
        finally:
            capture.close()
        self.dying.append(spare)  # A exits right after C's status: reaped in refill

    def _watch(self, limits: dict[str, Any], spare: Spare, capture: Capture, start: float) -> str | None:
        """Pump output until C's status arrives or a limit is hit (calls bypass us)."""
        fds = spare.fds
        deadline = start + limits["wall_seconds"]
        watched = {fds["out_r"]: 0, fds["err_r"]: 1}
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self._kill(spare, "wall")
            ready, _, _ = select.select([spare.pidfd, fds["status_r"], self.host.fd, *watched], [], [], remaining)
            if spare.pidfd in ready or fds["status_r"] in ready:
                return None
            for fd in [fd for fd in ready if fd in watched]:
                if not capture.read(watched[fd], fd):
                    del watched[fd]
            if capture.total() > capture.cap:
                return self._kill(spare, "output")
            if self.host.fd in ready:  # during a job the host only ever says "kill"
                payloads = self.host.pump_raw()
                if payloads or self.host.eof:
                    return self._kill(spare, "host" if payloads else "host closed")

    def _kill(self, spare: Spare, reason: str) -> str:
        os.kill(spare.pid, signal.SIGKILL)
        if self.isolate:
            self._wait_until_gone()
        return reason

    def _wait_until_gone(self, timeout: float = 5.0) -> None:
        """After killing a job, wait until none of its processes is alive: until then one could
        still write into the call channel that the next job will use. (A job that ends by itself
        needs no wait: its init kills and reaps everything before it reports the status.)"""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            keep = {1, os.getpid()}
            for spare in self.spares:
                keep |= _process_tree(spare.pid)
            if not [pid for pid in _live_pids() if pid not in keep]:
                return
            time.sleep(0.002)

    def _report(self, fds: dict[str, int], capture: Capture, killed_for: str | None, wall: float) -> None:
        for stream, fd in ((0, fds["out_r"]), (1, fds["err_r"])):
            os.set_blocking(fd, False)
            with contextlib.suppress(BlockingIOError):
                while capture.total() <= capture.cap and capture.read(stream, fd):
                    pass
        status, fault = None, ""
        for fd in (fds["status_r"], fds["setup_r"]):
            os.set_blocking(fd, False)
        with contextlib.suppress(BlockingIOError, ValueError):
            status = json.loads(os.read(fds["status_r"], 4096) or b"null")
        with contextlib.suppress(BlockingIOError):
            fault = os.read(fds["setup_r"], 4096).decode("utf-8", "replace")
        report = {"op": "result", "truncated": capture.total() > capture.cap, "killed_for": killed_for,
                  "wait": status, "fault": fault, "wall": wall}  # fmt: skip
        write_frame(self.host_out, report, tag=b"S")
        capture.send(self.host_out)  # followed by the output frames, always both


def main(argv: list[str]) -> None:
    """Entry point inside the sandbox: `python -c <source> --calls R,W [--isolate]`."""
    isolate = "--isolate" in argv
    calls_r, calls_w = (int(fd) for fd in argv[argv.index("--calls") + 1].split(","))
    # Frames travel on private copies of fd 0/1; fd 0/1 themselves become /dev/null and stderr so
    # nothing a job inherits can reach the host channel.
    host_in, host_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no ptrace or /proc/<pid>/mem access to us
    for name in ("json", "math", "re", "collections", "itertools", "functools", "heapq", "bisect",
                 "string", "random", "typing", "fractions", "decimal", "hashlib", "copy", "statistics"):  # fmt: skip
        __import__(name)  # warm the interpreter once; every job forks from here
    if _MACHINE == "x86_64":
        _fprog()  # the filter, built once here and inherited by every job
    gc.freeze()  # keep the collector off inherited objects: fewer copy-on-write faults per job
    Server(host_in, host_out, isolate=isolate, calls=(calls_r, calls_w)).serve()


if __name__ == "__main__":
    main(sys.argv)
