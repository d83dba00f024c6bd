"""What the sandbox guarantees: privileges, namespaces, filesystem, limits, clean-up, fallback."""

from __future__ import annotations

import os
import platform
import warnings

import pytest
from sandbox_helpers import assert_pool_healthy, needs_bwrap, worker_pids

from rewardlab.sandbox import Limits, Outcome, SandboxConfig, SandboxError, SandboxPool
from rewardlab.sandbox import pool as pool_module
from rewardlab.sandbox.config import sandbox_path
from rewardlab.sandbox.pool import FALLBACK_WARNING
from rewardlab.sandbox.session import SessionEnded

pytestmark = needs_bwrap


def test_program_reads_stdin_and_writes_stdout(pool: SandboxPool) -> None:
    result = pool.run("import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))", stdin="1 2\n3\n")
    assert (result.outcome, result.stdout, result.isolation) == (Outcome.OK, "6\n", "bubblewrap")


def test_runs_as_unprivileged_uid_with_every_capability_dropped(pool: SandboxPool) -> None:
    code = "import os\nstatus = open('/proc/self/status').read()\nprint(os.getuid(), os.getgid())\nprint([l for l in status.splitlines() if l.startswith('Cap')])"
    result = pool.run(code)
    uid_line, caps = result.stdout.splitlines()
    assert uid_line == "65534 65534"
    for field in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert f"'{field}:\\t0000000000000000'" in caps, caps
    if os.geteuid() == 0:  # started as root: bubblewrap itself runs as host `nobody`
        assert all(os.stat(f"/proc/{pid}").st_uid == 65534 for pid in worker_pids(pool))


def test_remount_rw_of_a_read_only_bind_fails(pool: SandboxPool) -> None:
    code = """
import ctypes, subprocess
r = subprocess.run(["mount", "-o", "remount,rw", "/usr"], capture_output=True, text=True)
print("mount-cli", r.returncode)
libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND = 32, 4096
print("mount-syscall", libc.mount(b"none", b"/usr", None, MS_REMOUNT | MS_BIND, None), ctypes.get_errno())
try:
    open("/usr/rewardlab-owned", "w")
    print("write ok")
except OSError as exc:
    print("write", exc.errno)
"""
    out = pool.run(code).stdout.splitlines()
    assert out[0] != "mount-cli 0"
    assert out[1].startswith("mount-syscall -1 ")
    assert out[2] == "write 30"  # EROFS
    assert not os.path.exists("/usr/rewardlab-owned")


def test_namespaces_show_only_the_job(pool: SandboxPool) -> None:
    code = "import os, socket\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\nprint(socket.gethostname())\nprint(sorted(os.listdir('/')))"
    pids, host, root = pool.run(code).stdout.splitlines()
    assert pids == "[1, 2]"  # the job's init and the program itself: no server, no host
    assert host == "sandbox"
    assert "work" not in root and "root" not in root and "home" not in root


def test_each_job_gets_a_fresh_private_tmp(pool: SandboxPool) -> None:
    assert pool.run("open('/tmp/leftover', 'w').write('x')\nimport os; print(os.listdir('/tmp'))").stdout == "['leftover']\n"
    assert pool.run("import os; print(os.listdir('/tmp'))").stdout == "[]\n"


def test_cpu_limit_counts_cpu_not_waiting(pool: SandboxPool) -> None:
    """A program that waits longer than its CPU limit but computes less passes: machine load
    (which stretches wall time, not CPU time) does not change the verdict."""
    code = "import time\ntime.sleep(1.5)\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\nprint('done')"
    result = pool.run(code, limits=Limits(cpu_seconds=1.0, wall_seconds=10.0))
    assert result.ok and result.stdout == "done\n"
    assert result.wall_seconds > 1.5 > result.cpu_seconds  # type: ignore[operator]


def test_session_calls_return_plain_builtins(pool: SandboxPool) -> None:
    with pool.session("def f(x, *, k=1):\n    return {'sum': sum(x) * k, 't': (1, 2.5), 's': {3}}\n") as s:
        assert s.call("f", [1, 2], k=2) == {"sum": 6, "t": (1, 2.5), "s": {3}}
        with pytest.raises(TypeError):  # raised inside, re-raised here as the same builtin class
            s.call("f", ["a"])
    assert s.result is not None and s.result.ok


def test_candidate_exception_is_its_builtin_class(pool: SandboxPool) -> None:
    with pool.session("def f():\n    raise KeyError('k')\n") as s, pytest.raises(KeyError):
        s.call("f")


def test_exit_during_a_call_ends_the_session(pool: SandboxPool) -> None:
    with pool.session("import os\ndef f():\n    os._exit(0)\n") as s:
        with pytest.raises(SessionEnded, match="during call 1"):
            s.call("f")
        with pytest.raises(SessionEnded):
            s.call("f")
    assert_pool_healthy(pool)


def test_start_failure_is_a_sandbox_error() -> None:
    with pytest.raises(SandboxError, match=r"did not answer|exited|cannot start|cannot reach"):
        SandboxPool(1, SandboxConfig(python="/nonexistent/python3", start_timeout=5)).start()


def test_without_bubblewrap_falls_back_loudly_and_flags_results(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "find_bwrap", lambda: None)  # as on a machine without it
    with pytest.warns(RuntimeWarning, match="bubblewrap"):
        fallback = SandboxPool(1)
    with fallback:
        assert (fallback.isolated, fallback.isolation) == (False, "rlimits-only")
        result = fallback.run("print('hi')")
        assert (result.stdout, result.isolation) == ("hi\n", "rlimits-only")
        looped = fallback.run("while True: pass", limits=Limits(cpu_seconds=1, wall_seconds=60))  # CPU limit first, even under load
        assert looped.outcome is Outcome.CPU_TIMEOUT
    assert "WITHOUT namespaces" in FALLBACK_WARNING


def test_required_bubblewrap_missing_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "find_bwrap", lambda: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
            SandboxPool(1, SandboxConfig(isolation="bubblewrap"))


def test_a_killed_job_cannot_write_into_the_next_session(pool: SandboxPool) -> None:
    """A daemon spams the call channel; the job is killed for breaking the protocol. The server
    reports only once every process of that job is gone, so the next session reads clean."""
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.close(1); os.close(2)\n"
        "    while True:\n"
        "        os.write(4, b'\\xff\\xff\\xff\\xffgarbage')\n"
        "def f():\n"
        "    time.sleep(60)\n"
    )
    with pytest.raises(SessionEnded) as ended, pool.session(code, limits=Limits(cpu_seconds=1, wall_seconds=3)) as s:
        s.call("f")  # the garbage may already end the session while the module loads
    assert ended.value.result.outcome is Outcome.PROTOCOL
    for _ in range(3):
        with pool.session("def g():\n    return 42\n") as clean:
            assert clean.call("g") == 42


def test_program_cannot_create_new_namespaces(pool: SandboxPool) -> None:
    """A fresh user namespace would give the program capabilities over it (and a wider kernel
    surface); the job's limits forbid any."""
    code = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "for flag in (0x10000000, 0x40000000, 0x20000, 0x20000000):  # user, net, mount, pid\n"
        "    print(libc.unshare(flag), ctypes.get_errno())\n"
    )
    lines = pool.run(code).stdout.splitlines()
    assert len(lines) == 4 and all(line.startswith("-1 ") for line in lines), lines


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the seccomp table is x86_64 only")
def test_seccomp_refuses_exploit_primitives_but_not_ordinary_work(pool: SandboxPool) -> None:
    code = (
        "import ctypes, subprocess, threading\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "for name, nr in (('ptrace', 101), ('keyctl', 250), ('bpf', 321), ('userfaultfd', 323),\n"
        "                 ('perf_event_open', 298), ('io_uring_setup', 425), ('x32 getpid', 0x40000000 + 39)):\n"
        "    print(name, libc.syscall(nr, 0, 0, 0, 0, 0), ctypes.get_errno())\n"
        "print(subprocess.run(['echo', 'spawned'], capture_output=True, text=True).stdout.strip())\n"
        "t = threading.Thread(target=print, args=('threaded',)); t.start(); t.join()\n"
    )
    lines = pool.run(code).stdout.splitlines()
    assert lines[:6] == [f"{n} -1 1" for n in ("ptrace", "keyctl", "bpf", "userfaultfd", "perf_event_open", "io_uring_setup")]
    assert lines[6] == "x32 getpid -1 38"  # ENOSYS: the x32 ABI cannot sidestep the table
    assert lines[7:] == ["spawned", "threaded"]


def test_read_only_binds_under_tmp_are_reachable_at_their_alias() -> None:
    # A CI checkout (and its virtualenv) may live under /tmp, which the sandbox replaces with
    # its own: such binds appear under HOST_ALIAS instead of being silently hidden.
    import shutil
    import tempfile
    from pathlib import Path

    from rewardlab.sandbox.config import HOST_ALIAS, sandbox_path

    top = Path(tempfile.mkdtemp(dir="/tmp"))  # world-reachable, as a checkout would be
    os.chmod(top, 0o755)
    library = top / "lib"
    library.mkdir(mode=0o755)
    (library / "hostmod.py").write_text("VALUE = 42\n")
    inside = sandbox_path(str(library))
    assert inside.startswith(HOST_ALIAS) == str(library).startswith("/tmp/")
    with SandboxPool(1, SandboxConfig(extra_ro_binds=(str(library),))) as pool:
        result = pool.run(f"import sys\nsys.path.append({inside!r})\nimport hostmod\nprint(hostmod.VALUE)")
        denied = pool.run(f"open({inside!r} + '/x', 'w')")
    shutil.rmtree(top)
    assert (result.outcome, result.stdout) == (Outcome.OK, "42\n")
    assert denied.outcome is not Outcome.OK


@pytest.mark.skipif(os.geteuid() != 0, reason="only root starts bubblewrap as host `nobody`")
def test_a_bind_nobody_cannot_reach_is_refused_at_start() -> None:
    # Started as root, bubblewrap would make every job's private /proc mount fail (EPERM), so
    # the pool never starts as root: a bind `nobody` cannot reach is an error naming the path.
    import shutil
    import tempfile
    from pathlib import Path

    private = Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's tmp_path is itself 0700
    os.chmod(private, 0o700)
    hidden = private / "site-packages"
    hidden.mkdir(mode=0o755)
    with pytest.raises(SandboxError, match=rf"cannot reach {hidden}.*isolation='rlimits'"):
        SandboxPool(1, SandboxConfig(extra_ro_binds=(str(hidden),)))
    os.chmod(private, 0o755)  # the same bind, now reachable, starts and is readable
    with SandboxPool(1, SandboxConfig(extra_ro_binds=(str(hidden),))) as pool:
        listed = pool.run(f"import os; print(os.listdir({sandbox_path(str(hidden))!r}))")
    shutil.rmtree(private)
    assert listed.stdout == "[]\n"
