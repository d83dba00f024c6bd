"""The processes of one job, INSIDE the sandbox: namespaces, limits, and the program itself.

Standard library only (prepended to `_server.py` to make the in-sandbox program). Per job the
server forks, ahead of time (ideas from nsjail and bubblewrap's own pid 1):

    server ── A  fresh user+pid+mount+ipc namespaces, uid map 1:1
                └─ B  pid 1 of the new pid namespace: private /proc, one size-capped tmpfs for
                      /tmp and /dev/shm, every capability dropped. On the server's go it reads
                      the job STRAIGHT FROM THE HOST and hands it to C; in a session it is C's
                      guard; it reports C's status once every process of the job is gone.
                      └─ C  the program (run) or the module whose functions are called (session)

Why this shape:
    * The server never sees a job's source, stdin, calls or output in memory a child inherits
      (the job travels host -> B directly; output is read into MADV_DONTFORK memory), so a job
      forked after another cannot find it in its heap, on its stack or in /proc/self/mem.
    * No program ever holds the worker's call channel: C gets only its standard streams and,
      in a session, a private pipe pair to B. B reads at most `frame_bytes` per answer,
      exactly one answer per call (numbered), and stamps what it forwards with the job's
      nonce; anything else is a violation that ends the job. C cannot kill, stop or read B.
    * When B exits the kernel kills everything left in its pid namespace (daemons included); B
      dies with A (PR_SET_PDEATHSIG), so killing A ends the whole job. No process of the job
      can see or signal the server: it is not in the job's pid namespace.
Without `--isolate` (no bubblewrap) B only starts a new session and kills its process group.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import fcntl
import functools
import io
import json
import math
import os
import resource
import select
import signal
import sys
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only ever called inside the sandbox, where `_batch.py`'s text follows this one
    from rewardlab.sandbox._batch import run_batch

if __name__ != "__main__":  # on the host; inside the sandbox `_wire.py`'s text comes first
    from rewardlab.sandbox._seccomp import install_seccomp
    from rewardlab.sandbox._wire import (
        SEQ,
        VIOLATION_SEQ,
        EncodeError,
        FrameReader,
        ProtocolError,
        decode_value,
        encode_value,
        write_raw,
    )

# -- kernel interfaces (ctypes: Python 3.11 has no os.unshare or capset) -------------------------
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID = 0x20000, 0x8000000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND = 0x2, 0x4, 0x8, 0x1000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


@functools.cache
def _libc() -> Any:
    """The C library, loaded once in the server: every job inherits it (loading it costs a
    job ~0.25 ms)."""
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


def private_mounts(libc: Any, tmpfs: tuple[int, int]) -> None:
    """Run in B (pid 1): a /proc that shows only this job, and ONE tmpfs that is both /tmp and
    /dev/shm, so files and POSIX shared memory share one budget: `tmpfs` is (bytes, inodes).
    Both are capped because neither is counted by any rlimit: tmpfs pages are not in RLIMIT_AS,
    and every file, empty or not, costs about a kilobyte of unreclaimable kernel memory (its
    inode and dentry), which without `nr_inodes` is bounded only by half the host's RAM."""
    # No MS_PRIVATE remount of / (it costs ~2.5 ms): a mount namespace created in a less
    # privileged user namespace receives the parent's shared mounts as slaves, so nothing
    # mounted here propagates out (mount_namespaces(7), "Restrictions on mount namespaces").
    _check(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")
    opts = f"size={max(tmpfs[0], 4096)},nr_inodes={max(tmpfs[1], 16)},mode=1777".encode()
    _check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, opts), "mount /tmp")
    if not os.path.isdir("/dev/shm"):
        return
    # /tmp/.shm becomes /dev/shm, then /tmp/.tmp is bound over /tmp itself: both views are
    # directories of the one tmpfs, and neither shows the other.
    for name in (".shm", ".tmp"):
        os.mkdir(f"/tmp/{name}", 0o1777)
        os.chmod(f"/tmp/{name}", 0o1777)
    _check(libc.mount(b"/tmp/.shm", b"/dev/shm", None, MS_BIND, None), "bind /dev/shm")
    _check(libc.mount(b"/tmp/.tmp", b"/tmp", None, MS_BIND, None), "bind /tmp")


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
    """Set the test's rlimits (`limit_pairs`) on the calling process."""
    for which, soft, hard in limit_pairs(limits):
        resource.setrlimit(which, (soft, hard))


def limit_pairs(limits: dict[str, Any]) -> list[tuple[int, int, int]]:
    """rlimits: CPU seconds (soft -> SIGXCPU, hard -> SIGKILL), memory, processes, files.
    Memory is RLIMIT_DATA (private writable mappings: heap, anonymous mmap, thread stacks;
    since Linux 4.7) under a ceiling RLIMIT_AS, which also bounds shared anonymous mappings
    that RLIMIT_DATA does not count. POSIX message queues get 0 bytes: their kernel memory is
    outside both, and no test program needs them (SysV shared memory and queues are refused
    by the seccomp filter). The stack is the host's unless `stack_bytes` is set (never above
    the hard limit we were given: raising a hard limit needs a capability we dropped)."""
    cpu = max(1, math.ceil(limits["cpu_seconds"]))
    procs = limits["processes"] + 2  # counted per user and user namespace, where A and B run too
    address_space = limits.get("address_space_bytes") or limits["memory_bytes"]
    pairs = [
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_DATA, limits["memory_bytes"], limits["memory_bytes"]),
        (resource.RLIMIT_AS, address_space, address_space),
        (resource.RLIMIT_NPROC, procs, procs),
        (resource.RLIMIT_NOFILE, limits["open_files"], limits["open_files"]),
        (resource.RLIMIT_FSIZE, limits["file_size_bytes"], limits["file_size_bytes"]),
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_MSGQUEUE, 0, 0),
    ]
    if limits.get("stack_bytes"):
        hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
        stack = limits["stack_bytes"] if hard == resource.RLIM_INFINITY else min(limits["stack_bytes"], hard)
        pairs.append((resource.RLIMIT_STACK, stack, stack))
    return pairs


# -- the program ------------------------------------------------------------------------------------
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
    """Run mode: the source as `__main__` (or exec argv); never returns."""
    if job.get("argv"):
        here = "/tmp" if job["isolate"] else os.getcwd()
        for name, text in (job.get("files") or {}).items():
            with open(os.path.join(here, name), "w") as f:
                f.write(text)
        if job.get("files_error"):  # the guard could not write the binary files (see _hand_over)
            print(f"cannot write the job's files: {job['files_error']}", file=sys.stderr)
            _flush_and_exit(127)
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


def _answer_bytes(answer: dict[str, Any], max_bytes: int) -> bytes:
    """The answer as JSON; a value too large for the frame limit is an EncodeError instead."""
    body = _dumps(answer)
    if len(body) <= max_bytes:
        return body
    message = f"the value is {len(body)} bytes encoded, more than frame_bytes={max_bytes}"
    return _dumps({"op": "raise", "type": EncodeError.__name__, "message": message})


def _dumps(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode("utf-8", "surrogatepass")


def serve_calls(job: dict[str, Any], calls_in: int, calls_out: int) -> None:
    """C in a session: load the source as a module, answer the prefetched calls (literal calls
    of the tests, sent with the job to save round trips), then answer calls until B closes.
    Answers are numbered: 0 is the load, then one per prefetched call, "ready", then calls."""
    max_bytes = int(job["limits"]["frame_bytes"])
    ns: dict[str, Any] = {"__name__": job.get("module_name", "solution"), "__builtins__": builtins}
    try:
        exec(compile(job["source"], "<submission>", "exec"), ns)
    except SystemExit:
        raise
    except BaseException:
        write_raw(calls_out, SEQ.pack(0), _dumps({"op": "load_error", "error": traceback.format_exc()[-2000:]}))
        _flush_and_exit(1)
    write_raw(calls_out, SEQ.pack(0), b'{"op":"loaded"}')
    seq = 0
    for msg in job.get("prefetch") or ():
        seq += 1
        write_raw(calls_out, SEQ.pack(seq), _answer_bytes(_answer(ns, msg), max_bytes))
    seq += 1
    write_raw(calls_out, SEQ.pack(seq), b'{"op":"ready"}')
    reader = FrameReader(calls_in)
    while (msg := reader.read_blocking()) is not None:
        seq += 1
        write_raw(calls_out, SEQ.pack(seq), _answer_bytes(_answer(ns, msg), max_bytes))
    _flush_and_exit(0)  # the guard closed the calls: the session is over


# -- C: the program ------------------------------------------------------------------------------
def become_program(fds: dict[str, int], isolate: bool, workdir: str) -> None:
    """C: wait for the job from B, set up limits and descriptors, run it. Never returns."""
    job = FrameReader(fds["to_c_r"]).read_blocking()
    if job is None:  # the server dropped this spare
        os._exit(0)
    session = job["op"] == "session"
    # Move every descriptor we keep above 32 first, so the dup2s below cannot clobber each other.
    kept = ("out_w", "err_w", "setup_w", "to_c_r", "from_c_w") if session else ("out_w", "err_w", "setup_w")
    high = {name: fcntl.fcntl(fds[name], fcntl.F_DUPFD, 32) for name in kept}
    setup = high["setup_w"]
    try:
        stdin = os.memfd_create("stdin")  # before the seccomp filter, which refuses memfd_create
        os.write(stdin, job.get("stdin", "").encode("utf-8", "surrogatepass"))
        os.lseek(stdin, 0, os.SEEK_SET)
        streams = [(0, stdin), (1, high["out_w"]), (2, high["err_w"])]
        for target, fd in streams + ([(3, high["to_c_r"]), (4, high["from_c_w"])] if session else []):
            os.dup2(fd, target)
        _close_from(5 if session else 3, {setup})  # a program keeps 0-2; a session's module its pipes to B
        os.chdir("/tmp" if isolate else workdir)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        libc = _libc()
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        apply_limits(job["limits"])
        install_seccomp(libc)  # last: the set-up above needs none of the calls it refuses
    except BaseException:
        _fault(setup)
    os.close(setup)  # from here on the code is untrusted: it must not be able to report faults
    if job.get("argv") and not session:
        run_program(job)  # execs: the new image needs neither Python's streams nor our dumpable flag
    _reopen_std_streams()
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # our own /proc/self stays readable
    try:
        if session:
            serve_calls(job, 3, 4)
        run_program(job)
    except SystemExit as exc:  # sys.exit() at import or inside a call: exit with its status
        _flush_and_exit(_exit_code(exc))
    except BaseException:
        _flush_and_exit(1)
    _flush_and_exit(0)


def _close_from(low: int, keep: set[int]) -> None:
    fd = low
    for nxt in [*sorted(keep), 1 << 16]:
        if nxt > fd:
            os.closerange(fd, nxt)
        fd = nxt + 1


def _fault(fd: int) -> None:
    """Report a set-up failure of the sandbox itself (not of the program) and exit."""
    with contextlib.suppress(BaseException):
        os.write(fd, traceback.format_exc()[-3000:].encode())
    os._exit(126)


# -- B: init of the job's pid namespace, and guard of its session ---------------------------------
class Guard:
    """B in a session: relays calls host -> C and C's answers -> host, treating C as hostile.

    C's answers must come one per outstanding request, numbered in order, each at most
    `frame_bytes`; what is forwarded carries the job's nonce and the answer's number. C cannot
    stop or kill its guard: B is pid 1 of C's pid namespace, which ignores signals from inside
    it that it has no handler for (pid_namespaces(7)), and it is not dumpable."""

    def __init__(self, job: dict[str, Any], host: FrameReader, cout: int, child: int, to_c: int, from_c: int):
        self.nonce = job["nonce"].encode("ascii")
        self.host, self.cout, self.to_c = host, cout, to_c
        self.child = os.pidfd_open(child)
        self.answers = FrameReader(from_c, max_frame=int(job["limits"]["frame_bytes"]) + SEQ.size)
        self.expected = 0
        self.owed = 2 + len(job.get("prefetch") or ())  # the load, each prefetched call, "ready"

    def run(self) -> None:
        """Relay until C ends (or breaks the protocol: then kill it and tell the host)."""
        try:
            while self._step():
                pass
            self._forward_buffered()  # C has ended: what it wrote before still counts
        except ProtocolError as exc:
            self._violation(str(exc))
        finally:
            self._close_calls()
            os.close(self.child)

    def _step(self) -> bool:
        """One relay step; False once C has ended or the host is gone."""
        self._forward_buffered()
        if not self.owed and (frames := self.host.raw_frames(limit=1)):
            return self._call(frames[0])
        watch = [self.answers.fd, self.child] + ([] if self.owed or self.host.eof else [self.host.fd])
        ready = select.select(watch, [], [])[0]
        if self.answers.fd in ready:
            self.answers.feed()
        if self.host.fd in ready:
            self.host.feed()
        if self.child in ready:  # C exited: read what it wrote (its children may hold the pipe)
            for _ in range(64):
                if self.answers.eof or not select.select([self.answers.fd], [], [], 0)[0]:
                    break
                self.answers.feed()
            return False
        return not (self.answers.eof or self.host.eof)

    def _forward_buffered(self) -> None:
        while self.owed and (frames := self.answers.raw_frames(limit=1)):
            payload = frames[0]
            (seq,) = SEQ.unpack_from(payload) if len(payload) >= SEQ.size else (-1,)
            if seq != self.expected:
                raise ProtocolError(f"answer numbered {seq}, expected {self.expected}")
            write_raw(self.cout, self.nonce, payload)
            self.expected += 1
            self.owed -= 1
        if not self.owed and self.answers.buffered():
            raise ProtocolError("the program wrote an answer nobody asked for")

    def _call(self, payload: bytes) -> bool:
        if not payload:  # an empty frame ends the session: C reads end of file and exits
            self._close_calls()
            return True
        try:
            write_raw(self.to_c, payload)
        except (BrokenPipeError, OSError):  # C is gone; its status says how
            return False
        self.owed = 1
        return True

    def _violation(self, what: str) -> None:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(self.child, signal.SIGKILL)
        with contextlib.suppress(BaseException):
            write_raw(self.cout, self.nonce, VIOLATION_SEQ, _dumps({"op": "violation", "error": what[:300]}))

    def _close_calls(self) -> None:
        if self.to_c >= 0:
            os.close(self.to_c)
            self.to_c = -1


def write_binary_files(host: FrameReader, names: list[str], where: str) -> dict[str, bytes]:
    """B: the job's binary files (compiled programs), one raw frame each after the order, into
    its directory, executable; returns them (a batch writes them again for every test). Raw
    frames and written here rather than by C, so megabytes of a build cross one pipe once,
    without base64 or JSON; the tmpfs caps their size all the same."""
    failure: OSError | None = None
    files: dict[str, bytes] = {}
    for name in names:
        data = host.read_raw_blocking()
        if data is None:
            raise OSError(f"the host closed the channel before {name!r}")
        files[name] = data
        if failure is not None:
            continue  # keep reading: the next frame on the channel must not be a file
        try:
            path = os.path.join(where, name)
            with open(path, "wb") as f:
                f.write(data)
            os.chmod(path, 0o755)
        except OSError as exc:
            failure = exc
    if failure is not None:
        raise failure
    return files


def _hand_over(fds: dict[str, int], child: int, isolate: bool, workdir: str) -> dict[str, Any] | None:
    """B: wait for the server's go, read the job from the host, give it to C; in a session,
    guard the calls until C ends. A batch runs here whole (`_batch.py`) and returns the report
    of the job; otherwise None (B then waits for C)."""
    go = FrameReader(fds["job_r"]).read_blocking()
    if go is None:  # the server dropped this spare
        os._exit(0)
    # The order may carry a build (megabytes): read it as the host writes it, a pipe-full at a
    # time (the call pipe holds 1 MiB), not in 64 KiB steps that each wait for the host.
    host = FrameReader(fds["cin"], read_size=1 << 20)
    job = host.read_blocking() or {}
    host.read_size = 1 << 16
    blobs: dict[str, bytes] = {}
    try:
        blobs = write_binary_files(host, list(job.pop("binary_files", None) or []), "/tmp" if isolate else workdir)
    except OSError as exc:
        job["files_error"] = str(exc)[:300]
    if job.pop("spawner", None):  # a batch's test starter (`_spawner.py`): kept in B, never in /tmp
        job["spawner"] = host.read_raw_blocking()
    job.update(op=go["op"], limits=go["limits"], isolate=isolate)
    if job["op"] == "batch" and isolate:
        os.close(fds["to_c_w"])  # the spare's C reads end of file and exits: each test forks its own
        return run_batch(fds, host, job, blobs, child)
    write_raw(fds["to_c_w"], _dumps(job))
    if job["op"] == "session":
        Guard(job, host, fds["cout"], child, fds["to_c_w"], fds["from_c_r"]).run()
    else:
        os.close(fds["to_c_w"])
    return None


def job_init(fds: dict[str, int], isolate: bool, tmpfs: tuple[int, int], workdir: str, parent: int) -> None:
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
            private_mounts(libc, tmpfs)
            forbid_user_namespaces()
            drop_capabilities(libc)
        fds["to_c_r"], fds["to_c_w"] = os.pipe()
        fds["from_c_r"], fds["from_c_w"] = os.pipe()
        child = os.fork()
    except BaseException:
        _fault(fds["setup_w"])
    if child == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        for name in ("job_r", "cin", "cout", "status_w", "alive_r", "to_c_w", "from_c_r"):
            os.close(fds[name])  # C never holds the host's channel or the server's pipes
        become_program(fds, isolate, workdir)
    for name in ("out_w", "err_w", "setup_w", "to_c_r", "from_c_w"):
        os.close(fds[name])
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a dead C is reported by its status
    # No handler for SIGINT (Python installs one): the kernel then drops it, like every signal
    # sent to a pid namespace's init from inside without a handler, so C cannot stop its guard.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    report = None
    with contextlib.suppress(Exception):  # a guard that fails ends the job; C's status says how
        report = _hand_over(fds, child, isolate, workdir)
    if report is None:
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


def job_namespaces(fds: dict[str, int], isolate: bool, tmpfs: tuple[int, int], workdir: str) -> None:
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
            job_init(fds, isolate, tmpfs, workdir, me)
        os.closerange(3, fds["alive_w"])  # A keeps only `alive_w`: B sees EOF once A is gone
        os.closerange(fds["alive_w"] + 1, 1 << 16)
        os.waitpid(init, 0)
        os._exit(0)
    except BaseException:
        _fault(fds["setup_w"])

