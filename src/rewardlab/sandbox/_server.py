"""The fork server that runs INSIDE the sandbox, and the wire format both sides share.

Standard library only: the host starts it as `python -S -s -B -c <this file> [--isolate]`
inside bubblewrap, so nothing of rewardlab is importable in there. The host imports this module
too, for `FrameReader`, `write_frame`, `encode_value` and `decode_value`.

Wire format: 4-byte big-endian length + a UTF-8 JSON object, both directions.

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

import base64
import builtins
import contextlib
import ctypes
import fcntl
import io
import json
import math
import os
import resource
import select
import signal
import struct
import sys
import time
import traceback
from typing import Any

MAX_FRAME = 64 << 20  # bytes; a frame larger than this is a protocol violation
_HEADER = struct.Struct(">I")


# -- framing ---------------------------------------------------------------------------------
class ProtocolError(Exception):
    """A frame that is malformed, too large, or not what the protocol expects."""


def write_frame(fd: int, obj: dict[str, Any]) -> None:
    """Write one frame; blocks until every byte is written."""
    data = json.dumps(obj, separators=(",", ":"), allow_nan=False).encode("utf-8", "surrogatepass")
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


class FrameReader:
    """Incremental frame decoder over a file descriptor."""

    def __init__(self, fd: int, *, max_frame: int = MAX_FRAME):
        self.fd = fd
        self.max_frame = max_frame
        self._buf = bytearray()
        self.eof = False

    def fileno(self) -> int:
        return self.fd

    def pump(self) -> list[dict[str, Any]]:
        """Read what is available (call after select says readable); return complete frames."""
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.eof = True
        self._buf += chunk
        return self._frames()

    def read_blocking(self) -> dict[str, Any] | None:
        """The next frame, blocking; None at end of file."""
        while True:
            frames = self._frames(limit=1)
            if frames:
                return frames[0]
            if self.eof:
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
            self._buf += chunk

    def _frames(self, limit: int | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while len(self._buf) >= 4 and (limit is None or len(out) < limit):
            (size,) = _HEADER.unpack_from(self._buf)
            if size > self.max_frame:
                raise ProtocolError(f"frame of {size} bytes exceeds the {self.max_frame}-byte cap")
            if len(self._buf) < 4 + size:
                break
            payload = bytes(self._buf[4 : 4 + size])
            del self._buf[: 4 + size]
            try:
                obj = json.loads(payload.decode("utf-8", "surrogatepass"))
            except ValueError as exc:
                raise ProtocolError(f"frame is not JSON: {exc}") from None
            if not isinstance(obj, dict):
                raise ProtocolError("frame is not a JSON object")
            out.append(obj)
        return out


# -- values: exact builtin types only, tagged ----------------------------------------------------
class EncodeError(Exception):
    """A value that may not leave the sandbox (not a plain builtin, too deep or too large)."""


_ATOMS = "None, bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset"


def encode_value(value: Any, *, max_nodes: int = 1_000_000, max_depth: int = 100) -> Any:
    """Tagged JSON for `value`. Exact types only: a subclass of int or str (which could carry
    an `__eq__` that always says True) is refused, so the receiver rebuilds plain builtins."""
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
            tag = {list: "l", tuple: "t", set: "S", frozenset: "F"}[t]
            return [tag, [enc(x, depth + 1) for x in v]]
        if t is dict:
            return ["d", [[enc(k, depth + 1), enc(x, depth + 1)] for k, x in v.items()]]
        raise EncodeError(f"a value of type {t.__module__}.{t.__qualname__} cannot leave the sandbox (allowed: {_ATOMS})")

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


# -- kernel interfaces (ctypes: Python 3.11 has no os.unshare or capset) -------------------------
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID = 0x20000, 0x8000000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
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
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    _check(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")
    opts = f"size={max(tmp_bytes, 4096)},mode=1777".encode()
    _check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, opts), "mount /tmp")
    if os.path.isdir("/dev/shm"):
        _check(libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV, opts), "mount /dev/shm")


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
        (resource.RLIMIT_NPROC, limits["processes"], limits["processes"]),
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


def serve_calls(job: dict[str, Any], cin: int, cout: int) -> None:
    """C, session mode: load the source as a module, then answer calls until `end`."""
    ns: dict[str, Any] = {"__name__": job.get("module_name", "solution"), "__builtins__": builtins}
    try:
        exec(compile(job["source"], "<submission>", "exec"), ns)
    except SystemExit:
        raise
    except BaseException:
        tb = traceback.format_exc()
        write_frame(cout, {"op": "load_error", "error": tb[-2000:]})
        _flush_and_exit(1)
    write_frame(cout, {"op": "ready"})
    reader = FrameReader(cin)
    while True:
        msg = reader.read_blocking()
        if msg is None or msg.get("op") == "end":
            _flush_and_exit(0)
        try:
            fn = ns[msg["name"]] if msg["name"] in ns else getattr(builtins, msg["name"])
            args = [decode_value(a) for a in msg.get("args", [])]
            kwargs = {k: decode_value(v) for k, v in (msg.get("kwargs") or {}).items()}
            reply = {"op": "return", "value": encode_value(fn(*args, **kwargs))}
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            reply = {"op": "raise", "type": type(exc).__name__, "message": str(exc)[:500]}
        write_frame(cout, reply)


def _become_submission(job: dict[str, Any], fds: dict[str, int]) -> None:
    """C: limits, clean descriptors and working directory, then run. Never returns."""
    # Move every descriptor we keep above 32 first, so the dup2s below cannot clobber each other.
    names = ["stdin", "out_w", "err_w", "setup_w"] + (["cin", "cout"] if job["mode"] == "session" else [])
    high = {name: fcntl.fcntl(fds[name], fcntl.F_DUPFD, 32) for name in names}
    setup = high["setup_w"]
    try:
        for target, name in enumerate(["stdin", "out_w", "err_w", "cin", "cout"]):
            if name in high:
                os.dup2(high[name], target)
        os.closerange(5, setup)
        os.closerange(setup + 1, 1 << 16)
        _reopen_std_streams()
        os.chdir("/tmp" if job["isolate"] else job["workdir"])
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        apply_limits(job["limits"])
    except BaseException:
        _fault(setup)
    os.close(setup)  # from here on the code is untrusted: it must not be able to report faults
    if job["mode"] == "session":
        serve_calls(job, 3, 4)
    run_program(job)


# -- A and B --------------------------------------------------------------------------------------
def _fault(fd: int) -> None:
    """Report a set-up failure of the sandbox itself (not of the program) and exit."""
    with contextlib.suppress(BaseException):
        os.write(fd, traceback.format_exc()[-3000:].encode())
    os._exit(126)


def _job_init(job: dict[str, Any], fds: dict[str, int], parent: int) -> None:
    """B: pid 1 of the job's namespace (or a session leader without --isolate)."""
    libc = _libc()
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # A died before prctl took effect (a parent outside our pid namespace shows as 0).
        if os.getppid() not in (parent, 0):
            os._exit(124)
        if job["isolate"]:
            private_mounts(libc, job["limits"]["tmp_bytes"])
            drop_capabilities(libc)
        else:
            os.setsid()
        child = os.fork()
    except BaseException:
        _fault(fds["setup_w"])
    if child == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        _become_submission(job, fds)
    for name in ("out_w", "err_w", "setup_w"):
        os.close(fds[name])
    _, status, usage = os.wait4(child, 0)
    report = {"status": status, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss}
    os.write(fds["status_w"], json.dumps(report).encode())
    if not job["isolate"]:
        with contextlib.suppress(OSError):
            os.killpg(0, signal.SIGKILL)  # leftovers of our session; kills us too
    os._exit(0)


def _job_namespaces(job: dict[str, Any], fds: dict[str, int]) -> None:
    """A: enter fresh namespaces, fork B, wait for it. Never returns."""
    try:
        if job["isolate"]:
            # The server is not dumpable (see main); A must be, or /proc/self/uid_map is root's.
            _libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
            enter_namespaces(_libc())
        me = os.getpid()
        init = os.fork()
        if init == 0:
            _job_init(job, fds, me)
        for name in ("out_w", "err_w", "status_w", "setup_w"):
            os.close(fds[name])
        os.waitpid(init, 0)
        os._exit(0)
    except BaseException:
        _fault(fds["setup_w"])


# -- the server -----------------------------------------------------------------------------------
class Server:
    """Reads jobs from the host, runs each in a fresh child, reports facts (never verdicts)."""

    def __init__(self, host_in: int, host_out: int, *, isolate: bool):
        self.host = FrameReader(host_in)
        self.host_out = host_out
        self.isolate = isolate

    def serve(self) -> None:
        write_frame(self.host_out, {"op": "hello", "python": sys.version.split()[0], "isolate": self.isolate, "uid": os.getuid()})
        while True:
            msg = self.host.read_blocking()
            if msg is None or msg.get("op") == "exit":
                return
            if msg.get("op") in ("run", "session"):
                write_frame(self.host_out, self.run_job(msg))
            else:
                write_frame(self.host_out, {"op": "error", "error": f"unknown op {msg.get('op')!r}"})

    def run_job(self, job: dict[str, Any]) -> dict[str, Any]:
        job["isolate"] = self.isolate
        job["mode"] = "session" if job["op"] == "session" else "stdio"
        fds = self._make_fds(job)
        workdir = None
        if not self.isolate:
            import tempfile

            workdir = job["workdir"] = tempfile.mkdtemp(prefix="rewardlab-job-")
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.close(self.host.fd)
            os.close(self.host_out)
            _job_namespaces(job, fds)
        for name in ("stdin", "out_w", "err_w", "status_w", "setup_w", "cin", "cout"):
            if name in fds:
                os.close(fds[name])
        try:
            result = self._watch(job, pid, fds, start)
        finally:
            for name in ("out_r", "err_r", "status_r", "setup_r", "to_child", "from_child"):
                if name in fds:
                    os.close(fds[name])
            if workdir is not None:
                import shutil

                shutil.rmtree(workdir, ignore_errors=True)
        return result

    @staticmethod
    def _make_fds(job: dict[str, Any]) -> dict[str, int]:
        fds: dict[str, int] = {}
        fds["stdin"] = os.memfd_create("stdin")
        os.write(fds["stdin"], job.get("stdin", "").encode("utf-8", "surrogatepass"))
        os.lseek(fds["stdin"], 0, os.SEEK_SET)
        fds["out_r"], fds["out_w"] = os.pipe()
        fds["err_r"], fds["err_w"] = os.pipe()
        fds["status_r"], fds["status_w"] = os.pipe()
        fds["setup_r"], fds["setup_w"] = os.pipe()
        if job["mode"] == "session":
            fds["cin"], fds["to_child"] = os.pipe()
            fds["from_child"], fds["cout"] = os.pipe()
        return fds

    def _watch(self, job: dict[str, Any], pid: int, fds: dict[str, int], start: float) -> dict[str, Any]:
        """Pump output and session frames until A exits or a limit is hit."""
        limits = job["limits"]
        deadline = start + limits["wall_seconds"]
        cap = limits["output_bytes"]
        out, err = bytearray(), bytearray()
        killed_for = None
        pidfd = os.pidfd_open(pid)
        child = FrameReader(fds["from_child"], max_frame=limits["frame_bytes"]) if "from_child" in fds else None
        watched = {fds["out_r"]: out, fds["err_r"]: err}
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    killed_for = "wall"
                    break
                rlist = [pidfd, *watched] + ([self.host.fd] if child else []) + ([child.fd] if child and not child.eof else [])
                ready, _, _ = select.select(rlist, [], [], remaining)
                if pidfd in ready:
                    break
                for fd in [fd for fd in ready if fd in watched]:
                    chunk = os.read(fd, 1 << 16)
                    watched[fd].extend(chunk)
                    if not chunk:
                        del watched[fd]
                if len(out) + len(err) > cap:
                    killed_for = "output"
                    break
                if child is not None and child.fd in ready:
                    try:
                        for frame in child.pump():
                            write_frame(self.host_out, {"op": "child", "frame": frame})
                    except ProtocolError as exc:
                        killed_for = f"protocol: {exc}"
                        break
                if child is not None and self.host.fd in ready:
                    frames = self.host.pump()
                    if self.host.eof:
                        killed_for = "host closed"
                        break
                    for frame in frames:
                        if frame.get("op") == "kill":
                            killed_for = "host"
                            break
                        write_frame(fds["to_child"], frame)
                    if killed_for:
                        break
        finally:
            if killed_for:
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(pidfd)
        if child is not None and not killed_for:
            self._drain_child(child)
        return self._report(fds, out, err, cap, killed_for, time.monotonic() - start)

    def _drain_child(self, child: FrameReader) -> None:
        """Forward frames the child wrote just before it exited."""
        os.set_blocking(child.fd, False)
        try:
            while not child.eof:
                for frame in child.pump():
                    write_frame(self.host_out, {"op": "child", "frame": frame})
        except (BlockingIOError, ProtocolError):
            pass

    @staticmethod
    def _report(fds: dict[str, int], out: bytearray, err: bytearray, cap: int, killed_for: str | None, wall: float) -> dict[str, Any]:
        for fd, buf in ((fds["out_r"], out), (fds["err_r"], err)):
            os.set_blocking(fd, False)
            try:
                while len(buf) <= cap and (chunk := os.read(fd, 1 << 16)):
                    buf.extend(chunk)
            except BlockingIOError:
                pass
        status, fault = None, ""
        for fd in (fds["status_r"], fds["setup_r"]):
            os.set_blocking(fd, False)
        with contextlib.suppress(BlockingIOError, ValueError):
            status = json.loads(os.read(fds["status_r"], 4096) or b"null")
        with contextlib.suppress(BlockingIOError):
            fault = os.read(fds["setup_r"], 4096).decode("utf-8", "replace")
        truncated = len(out) + len(err) > cap
        return {
            "op": "result",
            "stdout": bytes(out[:cap]).decode("utf-8", "replace"),
            "stderr": bytes(err[:cap][-4000:]).decode("utf-8", "replace"),
            "truncated": truncated,
            "killed_for": killed_for,
            "wait": status,
            "fault": fault,
            "wall": wall,
        }


def main(argv: list[str]) -> None:
    """Entry point inside the sandbox: `python -c <source> [--isolate]`."""
    isolate = "--isolate" in argv
    # Frames travel on private copies of fd 0/1; fd 0/1 themselves become /dev/null and stderr so
    # nothing a job inherits can reach the host channel.
    host_in, host_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no ptrace or /proc/<pid>/mem access to us
    for name in ("json", "math", "re", "collections", "itertools", "functools", "heapq", "bisect",
                 "string", "random", "typing", "fractions", "decimal", "hashlib", "copy", "statistics"):
        __import__(name)  # warm the interpreter once; every job forks from here
    Server(host_in, host_out, isolate=isolate).serve()


if __name__ == "__main__":
    main(sys.argv)
