"""The fork server that runs INSIDE the sandbox, and the wire format both sides share.

Standard library only: the host starts it as `python -S -s -B -c <_wire.py + this file>`
inside bubblewrap, where nothing of rewardlab is importable.

Per job the server forks three processes (ideas from nsjail and bubblewrap's own pid 1):

    server ── A (fresh user+pid+mount+ipc namespaces, uid map 1:1)
                └─ B  pid 1 of the new pid namespace: mounts a private /proc and a size-capped
                   /tmp, drops every capability, forks C and reports C's wait status
                      └─ C  the submission: rlimits, no_new_privs, clean fds, runs the code

When B exits the kernel kills everything left in its pid namespace (daemons included); B dies
with A (PR_SET_PDEATHSIG), so killing A on a timeout ends the whole job. C cannot see or
signal the server: the server is not in C's pid namespace. Without `--isolate` (no
bubblewrap) B only starts a new session and kills its process group at the end.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import fcntl
import gc
import io
import json
import math
import os
import resource
import select
import signal
import sys
import time
import traceback
from typing import Any

if __name__ != "__main__":  # on the host; inside the sandbox `_wire.py`'s text comes first
    from rewardlab.sandbox._seccomp import install_seccomp, seccomp_program
    from rewardlab.sandbox._wire import (
        FrameReader,
        decode_payload,
        decode_value,
        encode_value,
        write_frame,
    )

# -- kernel interfaces (ctypes: Python 3.11 has no os.unshare or capset) -------------------------
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID = 0x20000, 0x8000000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x2, 0x4, 0x8
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def enter_namespaces(libc: Any) -> None:
    """Run in A: new user, mount, pid and IPC namespaces, mapping our uid/gid to themselves."""
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC), "unshare")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1")
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1")


def private_mounts(libc: Any, tmp_bytes: int) -> None:
    """Run in B (pid 1): a /proc that shows only this job and a fresh size-capped /tmp."""
    # No MS_PRIVATE remount of / (it costs ~2.5 ms): a mount namespace created in a less
    # privileged user namespace receives the parent's shared mounts as slaves, so nothing
    # mounted here propagates out (mount_namespaces(7), "Restrictions on mount namespaces").
    _check(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")
    opts = f"size={max(tmp_bytes, 4096)},mode=1777".encode()
    _check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, opts), "mount /tmp")
    if os.path.isdir("/dev/shm"):
        _check(libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV, opts), "mount /dev/shm")


def forbid_user_namespaces() -> None:
    """Run in B: no further user namespaces below this job. A new user namespace would hand
    the program a fresh set of capabilities over it and widen the kernel surface it can reach
    (the usual first step of namespace-based kernel exploits). The limit is per user
    namespace, and B holds CAP_SYS_RESOURCE over its own (user_namespaces(7), /proc/sys/user)."""
    for name in ("max_user_namespaces", "max_mnt_namespaces", "max_pid_namespaces", "max_net_namespaces"):
        with open(f"/proc/sys/user/{name}", "w") as f:
            f.write("0")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities(libc: Any) -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable capability sets."""
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails harmlessly for caps already gone
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(libc.capset(ctypes.byref(header), data), "capset")


def apply_limits(limits: dict[str, Any]) -> None:
    """rlimits for C: CPU seconds (soft -> SIGXCPU, hard -> SIGKILL), memory, processes, files."""
    cpu = max(1, math.ceil(limits["cpu_seconds"]))
    pairs = [
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, limits["memory_bytes"], limits["memory_bytes"]),
        # + 2: the count is per user and user namespace, and the job's A and B are in it too
        (resource.RLIMIT_NPROC, limits["processes"] + 2, limits["processes"] + 2),
        (resource.RLIMIT_NOFILE, limits["open_files"], limits["open_files"]),
        (resource.RLIMIT_FSIZE, limits["file_size_bytes"], limits["file_size_bytes"]),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    for which, soft, hard in pairs:
        resource.setrlimit(which, (soft, hard))


# -- C: the submission ---------------------------------------------------------------------------
def _reopen_std_streams() -> None:
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8", errors="replace")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True)


def _flush_and_exit(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    os._exit(code)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def run_program(job: dict[str, Any]) -> None:
    """C, stdio mode: run the source as `__main__` (or exec argv); never returns."""
    if job.get("argv"):
        for name, text in (job.get("files") or {}).items():
            with open(os.path.join("/tmp" if job["isolate"] else os.getcwd(), name), "w") as f:
                f.write(text)
        argv = job["argv"]
        try:
            os.execvpe(argv[0], argv, job["env"])
        except OSError as exc:
            print(f"cannot execute {argv[0]}: {exc}", file=sys.stderr)
            _flush_and_exit(127)
    try:
        code = compile(job["source"], "<submission>", "exec")
        exec(code, {"__name__": "__main__", "__builtins__": builtins})
        rc = 0
    except SystemExit as exc:
        rc = _exit_code(exc)
    except BaseException:
        traceback.print_exc()
        rc = 1
    _flush_and_exit(rc)


def _answer(ns: dict[str, Any], msg: dict[str, Any]) -> dict[str, Any]:
    """Run one call of the loaded module; its value (encoded) or the exception it raised."""
    try:
        fn = ns[msg["name"]] if msg["name"] in ns else getattr(builtins, msg["name"])
        args = [decode_value(a) for a in msg.get("args", [])]
        kwargs = {k: decode_value(v) for k, v in (msg.get("kwargs") or {}).items()}
        return {"op": "return", "value": encode_value(fn(*args, **kwargs))}
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:
        return {"op": "raise", "type": type(exc).__name__, "message": str(exc)[:500]}


def serve_calls(job: dict[str, Any], cin: int, cout: int) -> None:
    """C, session mode: load the source as a module, answer the prefetched calls (literal
    calls of the tests, sent with the job to save round trips), then answer calls until `end`."""
    ns: dict[str, Any] = {"__name__": job.get("module_name", "solution"), "__builtins__": builtins}
    try:
        exec(compile(job["source"], "<submission>", "exec"), ns)
    except SystemExit:
        raise
    except BaseException:
        tb = traceback.format_exc()
        write_frame(cout, {"op": "load_error", "error": tb[-2000:]})
        _flush_and_exit(1)
    write_frame(cout, {"op": "loaded"})
    for i, msg in enumerate(job.get("prefetch") or ()):
        write_frame(cout, {**_answer(ns, msg), "pre": i})
    write_frame(cout, {"op": "ready"})
    reader = FrameReader(cin)
    while True:
        msg = reader.read_blocking()
        if msg is None or msg.get("op") == "end":
            _flush_and_exit(0)
        write_frame(cout, _answer(ns, msg))


def _become_submission(fds: dict[str, int], isolate: bool, workdir: str) -> None:
    """C: wait for the job, then limits, clean descriptors and working directory, run it."""
    job = FrameReader(fds["job_r"]).read_blocking()
    if job is None:  # the server dropped this spare
        os._exit(0)
    job["isolate"] = isolate
    # Move every descriptor we keep above 32 first, so the dup2s below cannot clobber each other.
    names = ["out_w", "err_w", "setup_w", "cin", "cout"]
    high = {name: fcntl.fcntl(fds[name], fcntl.F_DUPFD, 32) for name in names}
    setup = high["setup_w"]
    try:
        stdin = os.memfd_create("stdin")
        os.write(stdin, job.get("stdin", "").encode("utf-8", "surrogatepass"))
        os.lseek(stdin, 0, os.SEEK_SET)
        os.dup2(stdin, 0)
        for target, name in ((1, "out_w"), (2, "err_w"), (3, "cin"), (4, "cout")):
            os.dup2(high[name], target)
        os.closerange(5, setup)
        os.closerange(setup + 1, 1 << 16)
        _reopen_std_streams()
        os.chdir("/tmp" if isolate else workdir)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        libc = _libc()
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # our own /proc/self stays readable
        apply_limits(job["limits"])
        install_seccomp(libc)  # last: the set-up above needs none of the calls it refuses
    except BaseException:
        _fault(setup)
    os.close(setup)  # from here on the code is untrusted: it must not be able to report faults
    try:
        if job["op"] == "session":
            serve_calls(job, 3, 4)
        run_program(job)
    except SystemExit as exc:  # sys.exit() at import or inside a call: exit with its status
        _flush_and_exit(_exit_code(exc))
    except BaseException:
        _flush_and_exit(1)
    _flush_and_exit(0)


def _fault(fd: int) -> None:
    """Report a set-up failure of the sandbox itself (not of the program) and exit."""
    with contextlib.suppress(BaseException):
        os.write(fd, traceback.format_exc()[-3000:].encode())
    os._exit(126)


def _job_init(fds: dict[str, int], isolate: bool, tmp_bytes: int, workdir: str, parent: int) -> None:
    """B: pid 1 of the job's namespace (or a session leader without isolation)."""
    libc = _libc()
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # A died before prctl took effect? (getppid() cannot tell: a parent outside our pid
        # namespace shows as 0.) A holds the only other end of `alive`: EOF means it is gone.
        os.close(fds["alive_w"])
        if select.select([fds["alive_r"]], [], [], 0)[0] or os.getppid() not in (parent, 0):
            os._exit(124)
        # A new session and process group: kill(0, ...) in the job must not reach the server,
        # which it otherwise could (process groups ignore pid namespaces).
        os.setsid()
        if isolate:
            private_mounts(libc, tmp_bytes)
            forbid_user_namespaces()
            drop_capabilities(libc)
        child = os.fork()
    except BaseException:
        _fault(fds["setup_w"])
    if child == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _become_submission(fds, isolate, workdir)
    for name in ("out_w", "err_w", "setup_w", "job_r", "cin", "cout"):
        os.close(fds[name])
    _, status, usage = os.wait4(child, 0)
    report = {"status": status, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss}
    if isolate:  # kill and reap everything left (daemons) before reporting: nothing outlives C
        with contextlib.suppress(OSError):
            os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while True:
                os.waitpid(-1, 0)
    os.write(fds["status_w"], json.dumps(report).encode())
    if not isolate:
        with contextlib.suppress(OSError):
            os.killpg(0, signal.SIGKILL)  # leftovers of our session; kills us too
    os._exit(0)  # as pid 1: the kernel now kills every process left in the namespace


def _close_all_but(keep: set[int]) -> None:
    fd = -1
    for nxt in [*sorted(keep), 1 << 16]:
        if nxt > fd + 1:
            os.closerange(fd + 1, nxt)
        fd = nxt


def _job_namespaces(fds: dict[str, int], isolate: bool, tmp_bytes: int, workdir: str) -> None:
    """A: enter fresh namespaces, fork B, wait for it. Never returns."""
    try:
        if isolate:
            libc = _libc()
            # The server is not dumpable (see main); A must be while it writes its uid map,
            # then stops being so: C must not be able to open /proc/<A>/mem.
            libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
            enter_namespaces(libc)
            libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        me = os.getpid()
        init = os.fork()
        if init == 0:
            _job_init(fds, isolate, tmp_bytes, workdir, me)
        os.closerange(3, fds["alive_w"])  # A keeps only `alive_w`: B sees EOF once A is gone
        os.closerange(fds["alive_w"] + 1, 1 << 16)
        os.waitpid(init, 0)
        os._exit(0)
    except BaseException:
        _fault(fds["setup_w"])


# -- the server -----------------------------------------------------------------------------------
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


class Spare:
    """A job sandbox forked ahead of time: A, B and C exist, C waits on `job_w` for its job."""

    def __init__(self, *, isolate: bool, tmp_bytes: int, calls: tuple[int, int]):
        self.tmp_bytes = tmp_bytes
        self.workdir = "/tmp"
        if not isolate:
            import tempfile

            self.workdir = tempfile.mkdtemp(prefix="rewardlab-job-")
        self.isolate = isolate
        fds: dict[str, int] = {}
        for a, b in (("job_r", "job_w"), ("out_r", "out_w"), ("err_r", "err_w"), ("status_r", "status_w"),
                     ("setup_r", "setup_w")):  # fmt: skip
            fds[a], fds[b] = os.pipe()
        # The call channel goes straight to the host (no relay through us): C keeps it as fd 3/4
        # in a session, closes it otherwise.
        fds["cin"], fds["cout"] = calls
        fds["alive_r"], fds["alive_w"] = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            # Keep only this job's descriptors: a job holding another spare's pipes would keep
            # that spare waiting for a job after the server dropped it.
            _close_all_but({0, 1, 2, *fds.values()})
            _job_namespaces(fds, isolate, tmp_bytes, self.workdir)
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


class Server:
    """Reads jobs from the host, runs each in a fresh child, reports facts (never verdicts)."""

    SPARES = 2  # job sandboxes kept ready: the next job never waits for namespace set-up

    def __init__(self, host_in: int, host_out: int, *, isolate: bool, calls: tuple[int, int]):
        self.host = FrameReader(host_in)
        self.host_out = host_out
        self.isolate = isolate
        self.calls = calls
        self.spares: list[Spare] = []
        self.dying: list[Spare] = []

    def _new_spare(self, tmp_bytes: int) -> Spare:
        return Spare(isolate=self.isolate, tmp_bytes=tmp_bytes, calls=self.calls)

    def serve(self) -> None:
        hello = {"op": "hello", "python": sys.version.split()[0], "isolate": self.isolate, "uid": os.getuid()}
        write_frame(self.host_out, hello, tag=b"S")
        while True:
            payload = self.host.read_raw_blocking()
            if payload is None:
                return
            if payload[:1] != b"S":
                continue  # a stray frame for a child that has already ended
            msg = decode_payload(payload[1:])
            if msg.get("op") == "exit":
                return
            if msg.get("op") in ("run", "session"):
                self.run_job(msg)
            else:
                write_frame(self.host_out, {"op": "error", "error": f"unknown op {msg.get('op')!r}"}, tag=b"S")

    def run_job(self, job: dict[str, Any]) -> None:
        """Hand the job to a ready spare, report, then fork a replacement and reap: set-up and
        tear-down of namespaces happen while the host is busy with the result."""
        tmp_bytes = int(job["limits"]["tmp_bytes"])
        if any(spare.tmp_bytes != tmp_bytes for spare in self.spares):
            for spare in self.spares:
                spare.kill()
            self.dying += self.spares
            self.spares = []
        while len(self.spares) < self.SPARES:
            self.spares.append(self._new_spare(tmp_bytes))
        spare = self.spares.pop(0)
        start = time.monotonic()
        with contextlib.suppress(OSError):  # the spare died: _watch reports it
            write_frame(spare.fds["job_w"], job)
        report = self._watch(job, spare, start)
        write_frame(self.host_out, report, tag=b"S")
        self.spares.append(self._new_spare(tmp_bytes))
        for old in self.dying:  # spares dropped for other limits: killed, reaped here
            old.reap(block=True)
        self.dying = []
        spare.reap(block=True)  # A exits right after C's status: this takes a moment

    def _watch(self, job: dict[str, Any], spare: Spare, start: float) -> dict[str, Any]:
        """Pump output until C's status arrives or a limit is hit (calls bypass us)."""
        limits, fds = job["limits"], spare.fds
        deadline = start + limits["wall_seconds"]
        cap = limits["output_bytes"]
        out, err = bytearray(), bytearray()
        killed_for = None
        watched = {fds["out_r"]: out, fds["err_r"]: err}
        while killed_for is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                killed_for = "wall"
                break
            rlist = [spare.pidfd, fds["status_r"], self.host.fd, *watched]
            ready, _, _ = select.select(rlist, [], [], remaining)
            if spare.pidfd in ready or fds["status_r"] in ready:
                break
            for fd in [fd for fd in ready if fd in watched]:
                chunk = os.read(fd, 1 << 16)
                watched[fd].extend(chunk)
                if not chunk:
                    del watched[fd]
            if len(out) + len(err) > cap:
                killed_for = "output"
            if self.host.fd in ready:  # during a job the host only ever says "kill"
                payloads = self.host.pump_raw()
                if payloads or self.host.eof:
                    killed_for = "host" if payloads else "host closed"
        if killed_for:
            os.kill(spare.pid, signal.SIGKILL)
            if self.isolate:
                self._wait_until_gone()
        return self._report(fds, out, err, cap, killed_for, time.monotonic() - start)

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

    @staticmethod
    def _report(fds: dict[str, int], out: bytearray, err: bytearray, cap: int, killed_for: str | None, wall: float) -> dict[str, Any]:
        for fd, buf in ((fds["out_r"], out), (fds["err_r"], err)):
            os.set_blocking(fd, False)
            with contextlib.suppress(BlockingIOError):
                while len(buf) <= cap and (chunk := os.read(fd, 1 << 16)):
                    buf.extend(chunk)
        status, fault = None, ""
        for fd in (fds["status_r"], fds["setup_r"]):
            os.set_blocking(fd, False)
        with contextlib.suppress(BlockingIOError, ValueError):
            status = json.loads(os.read(fds["status_r"], 4096) or b"null")
        with contextlib.suppress(BlockingIOError):
            fault = os.read(fds["setup_r"], 4096).decode("utf-8", "replace")
        return {
            "op": "result",
            "stdout": bytes(out[:cap]).decode("utf-8", "replace"),
            "stderr": bytes(err[:cap][-4000:]).decode("utf-8", "replace"),
            "truncated": len(out) + len(err) > cap,
            "killed_for": killed_for,
            "wait": status,
            "fault": fault,
            "wall": wall,
        }


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
    seccomp_program()  # built once here, inherited by every job
    gc.freeze()  # keep the collector off inherited objects: fewer copy-on-write faults per job
    Server(host_in, host_out, isolate=isolate, calls=(calls_r, calls_w)).serve()


if __name__ == "__main__":
    main(sys.argv)
