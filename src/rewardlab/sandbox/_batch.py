"""A batch, INSIDE the sandbox: many runs of one command in one job sandbox, each in a fresh process.

Standard library only (its text follows `_job.py` in the in-sandbox program). The tests of one
build differ only in their stdin, so one job sandbox (namespaces, /proc, tmpfs: the costly
part of a job) serves them all. B, pid 1 of the job's pid namespace, runs the tests one after
another, as the host sends them:

    B ── per test: start C through the spawner (`_spawner.py`, a small C program B holds in a
         sealed memfd: posix_spawn with the test's stdin in a memfd; the spawner sets the
         test's rlimits and seccomp filter, then execs the command), or, without it, hand the
         test to C forked ahead, which does the same in Python; B pumps C's stdout/stderr (capped
         at `output_bytes`), enforces the wall limit, waits for C, kills and reaps every
         process the test left, empties /tmp and /dev/shm and writes the job's files again
         (from B's memory), answers the host, and forks the next C.

What each test gets, as a job of its own would: a fresh process under the test's rlimits
(CPU, data, address space, stack, processes, files), its own stdin, output capped and a wall
limit, a /tmp and /dev/shm holding exactly the job's files, no process of an earlier test
alive. C execs at once, so nothing of B's memory (earlier tests' input or output) reaches the
program. C cannot stop B: B is the namespace's init, which ignores signals from inside that it
has no handler for, and it is not dumpable. A test whose leftovers cannot be removed (the
clean-up fails or times out) keeps its own verdict but ends the batch after its answer
("last"); the host starts a fresh job for the rest.

Answers go on the call channel: nonce + answer number + 4-byte header length + JSON header +
stdout + stderr tail. The host parses them as hostile data (`batch.py`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import time
from typing import Any

if __name__ != "__main__":  # on the host; inside the sandbox the other files' text comes first
    from rewardlab.sandbox._job import (
        PR_SET_NO_NEW_PRIVS,
        _close_from,
        _dumps,
        _fault,
        _libc,
        apply_limits,
        limit_pairs,
    )
    from rewardlab.sandbox._seccomp import _MACHINE, install_seccomp, seccomp_program
    from rewardlab.sandbox._wire import SEQ, FrameReader, write_raw

STDERR_TAIL = 4000  # bytes of a test's stderr reported (as a job's)
_CHUNK = 1 << 16
_CLEANUP_SECONDS = 2.0  # leftovers of a test must be gone by then, else the batch ends (within the host's grace)
TEST_TAG = b"T"  # a test's frame from the host: b"T" + stdin; anything else ends the batch


def run_batch(fds: dict[str, int], host: FrameReader, job: dict[str, Any], blobs: dict[str, bytes], spare: int) -> dict[str, Any]:
    """B: run the host's tests until it sends anything but a test; returns the job's report
    (the status of the spare's C, which exits unused). Never raises."""
    _, status, usage = os.wait4(spare, 0)
    report = {"status": status, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss}
    nonce = job["nonce"].encode("ascii")
    seq = 0
    with contextlib.suppress(Exception):
        files_error = job.get("files_error") or _reset_tmp(job.get("files") or {}, blobs)[0]
        spawner = spawner_argv(job)
        # Without the spawner, the next test's process is forked ahead (as the server forks spare
        # jobs), while the host judges the previous answer: a test then waits only for its exec.
        ready = None if spawner else fork_test(job)
        while (payload := host.read_raw_blocking()) is not None and payload[:1] == TEST_TAG:
            if ready is None and files_error:  # the forked path reports the missing files as a run
                ready = fork_test(job)
            head, out, err, files_error = run_test(job, ready, payload, blobs, files_error, spawner)
            head.update(out=len(out), err=len(err))
            header = _dumps(head)
            write_raw(fds["cout"], nonce, SEQ.pack(seq), len(header).to_bytes(4, "big"), header, out, err)
            seq += 1
            if head["last"]:
                break
            ready = None if spawner else fork_test(job)
    return report


def spawner_argv(job: dict[str, Any]) -> list[str]:
    """The command line that starts a test through the spawner (`_spawner.py`): the filter,
    the test's rlimits, the command. Empty when the host sent no spawner: tests are forked.
    The program is held in a sealed memfd above the descriptors a test is given, and run
    through /proc/self/fd (exec closes it: it is close-on-exec)."""
    program = job.pop("spawner", None)
    if not program:
        return []
    memfd = os.memfd_create("spawner", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    fd = fcntl.fcntl(memfd, fcntl.F_DUPFD_CLOEXEC, 32)
    os.close(memfd)
    view = memoryview(program)
    while view:
        view = view[os.write(fd, view) :]
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    pairs = limit_pairs(job["test_limits"])
    numbers = [str(n if n >= 0 else (1 << 64) - 1) for triple in pairs for n in triple]  # -1: RLIM_INFINITY
    bpf = seccomp_program().hex() if _MACHINE == "x86_64" else ""
    return [f"/proc/self/fd/{fd}", bpf, str(len(pairs)), *numbers, "--", *job["argv"]]


def spawn_test(argv: list[str], env: dict[str, str], stdin_bytes: memoryview) -> tuple[int, dict[str, int]]:
    """C of a test through the spawner: stdin in a memfd, stdout/stderr pipes, the set-up pipe
    on fd 3; SIGPIPE back to its default (B ignores it)."""
    fds: dict[str, int] = {}
    stdin = os.memfd_create("stdin")
    try:
        while stdin_bytes:
            stdin_bytes = stdin_bytes[os.write(stdin, stdin_bytes) :]
        os.lseek(stdin, 0, os.SEEK_SET)
        for a, b in (("out_r", "out_w"), ("err_r", "err_w"), ("setup_r", "setup_w")):
            fds[a], fds[b] = os.pipe()
        # Every source above the targets 0-3, so no dup2 below overwrites a later one's source.
        high = {name: fcntl.fcntl(fds[name], fcntl.F_DUPFD_CLOEXEC, 4) for name in ("out_w", "err_w", "setup_w")}
        for name, fd in high.items():
            os.close(fds[name])
            fds[name] = fd
        if stdin < 4:
            stdin, low = fcntl.fcntl(stdin, fcntl.F_DUPFD_CLOEXEC, 4), stdin
            os.close(low)
        actions = [(os.POSIX_SPAWN_DUP2, stdin, 0), (os.POSIX_SPAWN_DUP2, fds["out_w"], 1),
                   (os.POSIX_SPAWN_DUP2, fds["err_w"], 2), (os.POSIX_SPAWN_DUP2, fds["setup_w"], 3)]  # fmt: skip
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions, setsigdef=(signal.SIGPIPE,))
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    finally:
        os.close(stdin)
    for name in ("out_w", "err_w", "setup_w"):
        os.close(fds.pop(name))
    return pid, fds


def fork_test(job: dict[str, Any]) -> tuple[int, dict[str, int]]:
    """C of the next test, forked ahead: it sets up what every test shares, then waits for its
    test on a pipe (`become_test`)."""
    fds: dict[str, int] = {}
    for a, b in (("out_r", "out_w"), ("err_r", "err_w"), ("setup_r", "setup_w"), ("to_c_r", "to_c_w")):
        fds[a], fds[b] = os.pipe()
    pid = os.fork()
    if pid == 0:  # no death signal needed: if B (pid 1) dies, the kernel kills the namespace
        become_test({name: fds[name] for name in ("out_w", "err_w", "setup_w", "to_c_r")}, job)
    for name in ("out_w", "err_w", "setup_w", "to_c_r"):
        os.close(fds.pop(name))
    return pid, fds


def become_test(fds: dict[str, int], job: dict[str, Any]) -> None:
    """C of a test. While it waits: its output streams, no descriptor but those (never the
    host's channel), /tmp as its directory, no new privileges. Then its stdin (into a memfd,
    before the limits: RLIMIT_FSIZE would cap it), its rlimits and seccomp filter, and exec.
    Never returns; a failure of its own set-up goes to B on `setup_w` (a fault, not a verdict)."""
    # Descriptors we keep go above 32 first, so the dup2s below cannot clobber each other.
    high = {name: fcntl.fcntl(fd, fcntl.F_DUPFD, 32) for name, fd in fds.items()}
    setup = high["setup_w"]
    try:
        stdin = os.memfd_create("stdin")  # before the seccomp filter, which refuses memfd_create
        os.dup2(high["out_w"], 1)
        os.dup2(high["err_w"], 2)
        _close_from(3, {setup, high["to_c_r"], stdin})
        os.chdir("/tmp")
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        libc = _libc()
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    except BaseException:
        _fault(setup)
    reader = FrameReader(high["to_c_r"])
    test = reader.read_blocking()
    if test is None:  # the batch is over
        os._exit(0)
    try:
        os.write(stdin, reader.read_raw_blocking() or b"")
        os.lseek(stdin, 0, os.SEEK_SET)
        os.dup2(stdin, 0)
        for fd in (stdin, high["to_c_r"]):
            os.close(fd)
        apply_limits(job["test_limits"])
        install_seccomp(libc)  # last: the set-up above needs none of the calls it refuses
    except BaseException:
        _fault(setup)
    os.close(setup)  # from here on the code is untrusted
    argv = job["argv"]
    if test.get("files_error"):
        os.write(2, f"cannot write the job's files: {test['files_error']}\n".encode())
        os._exit(127)
    try:
        os.execvpe(argv[0], argv, job["env"])
    except OSError as exc:
        os.write(2, f"cannot execute {argv[0]}: {exc}\n".encode())
        os._exit(127)


def run_test(job: dict[str, Any], ready: tuple[int, dict[str, int]] | None, payload: bytes, blobs: dict[str, bytes],
             files_error: str, spawner: list[str]) -> tuple[dict[str, Any], bytes, bytes, str]:  # fmt: skip
    """One test in the forked-ahead C (`ready`), or in one started now by the spawner, on the
    files as `_reset_tmp` left them: its output and status; then its leftovers killed and the
    files reset for the next test (or, if that fails, "last": the batch ends after this
    answer). Returns the header, stdout, stderr tail and what went wrong writing the next
    test's files."""
    limits = job["test_limits"]
    cap = int(limits["output_bytes"])
    last = False
    start = time.monotonic()
    if ready is None:
        try:
            ready = spawn_test(spawner, job["env"], memoryview(payload)[1:])
        except OSError:  # the spawner cannot run here (not an executable of this machine): fork this test and the rest
            spawner.clear()
            ready = fork_test(job)
    pid, fds = ready
    try:
        if "to_c_w" in fds:
            with contextlib.suppress(OSError):  # C is gone: its status says how
                write_raw(fds["to_c_w"], _dumps({"files_error": files_error}))
                write_raw(fds["to_c_w"], memoryview(payload)[1:])  # the stdin, after the test's tag
            os.close(fds.pop("to_c_w"))
        out, err, killed_for = _pump(pid, fds, limits, start + float(limits["wall_seconds"]))
        _, status, usage = os.wait4(pid, 0)
        wall = time.monotonic() - start
        last = not _kill_leftovers()
        _drain(fds, out, err, cap)
        os.set_blocking(fds["setup_r"], False)
        fault = b""
        with contextlib.suppress(BlockingIOError):
            fault = os.read(fds["setup_r"], 4096)
    finally:
        for fd in fds.values():
            os.close(fd)
    if not last:
        files_error, clean = _reset_tmp(job.get("files") or {}, blobs)
        last = not clean
    head = {"status": status, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss,
            "killed_for": killed_for, "truncated": len(out) + len(err) > cap,
            "fault": fault.decode("utf-8", "replace"), "wall": wall, "last": last}  # fmt: skip
    err_end = min(len(err), cap)
    return head, bytes(out[: min(len(out), cap)]), bytes(err[max(0, err_end - STDERR_TAIL) : err_end]), files_error


def _pump(pid: int, fds: dict[str, int], limits: dict[str, Any], deadline: float) -> tuple[bytearray, bytearray, str | None]:
    """C's output until it exits, its wall limit passes, or it writes more than the cap (then it
    is killed, and why is returned)."""
    out, err = bytearray(), bytearray()
    buffers = {fds["out_r"]: out, fds["err_r"]: err}
    cap = int(limits["output_bytes"])
    pidfd = os.pidfd_open(pid)
    killed_for = None
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                killed_for = "wall"
                break
            ready = select.select([pidfd, *buffers], [], [], remaining)[0]
            if pidfd in ready:
                break
            for fd in ready:
                chunk = os.read(fd, _CHUNK)
                if chunk:
                    buffers[fd] += chunk
                else:
                    del buffers[fd]
            if len(out) + len(err) > cap:
                killed_for = "output"
                break
    finally:
        os.close(pidfd)
    if killed_for:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return out, err, killed_for


def _drain(fds: dict[str, int], out: bytearray, err: bytearray, cap: int) -> None:
    """What is left in the pipes once every writer is gone (bounded: no writer is alive)."""
    for fd, buffer in ((fds["out_r"], out), (fds["err_r"], err)):
        os.set_blocking(fd, False)
        with contextlib.suppress(BlockingIOError):
            while len(out) + len(err) <= cap and (chunk := os.read(fd, _CHUNK)):
                buffer += chunk


def _kill_leftovers() -> bool:
    """Kill and reap every process of the namespace but B (daemons, double forks of the test);
    False if some outlived the clean-up's time. As pid 1, kill(-1) reaches all of them, and
    orphans are B's to reap."""
    deadline = time.monotonic() + _CLEANUP_SECONDS
    while True:
        with contextlib.suppress(OSError):
            os.kill(-1, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return True  # no process left
        if time.monotonic() > deadline:
            return False
        time.sleep(0.0005)


def _reset_tmp(files: dict[str, str], blobs: dict[str, bytes]) -> tuple[str, bool]:
    """Empty /tmp and /dev/shm, then write the job's files (text, and executables): every test
    starts from the same directory. Returns why the files could not be written ("" if they
    were; the test then fails as a run whose files are missing would), and False if emptying
    failed (no further test may run in this job)."""
    for top in ("/tmp", "/dev/shm"):
        if os.path.isdir(top):
            try:
                os.chmod(top, 0o1777)  # the test may have taken its own permissions away
                _empty(top)
            except OSError:
                return "", False
    # Written again every time, even when they look untouched: a file's ctime comes from a
    # coarse clock, so a test that rewrites it in place within the same tick leaves no trace.
    try:
        for name, text in files.items():
            with open(os.path.join("/tmp", name), "w") as f:
                f.write(text)
        for name, data in blobs.items():
            path = os.path.join("/tmp", name)
            with open(path, "wb") as f:
                f.write(data)
            os.chmod(path, 0o755)
    except OSError as exc:
        return str(exc)[:300], True
    return "", True


def _empty(top: str) -> None:
    """Remove everything under `top` without recursion (a test may nest directories as deep as
    its inode budget) and without following symlinks; directories are made searchable first."""
    dirs: list[str] = []
    todo = [top]
    while todo:
        with os.scandir(todo.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    os.chmod(entry.path, 0o700)
                    dirs.append(entry.path)
                    todo.append(entry.path)
                else:
                    os.unlink(entry.path)
    for path in reversed(dirs):
        os.rmdir(path)
