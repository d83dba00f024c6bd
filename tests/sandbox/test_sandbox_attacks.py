"""One test per attack from issue 4. Each must be contained, reported with its reason, leave the
host unchanged, and leave the pool working (checked after every test by `_pool_survives`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest
from sandbox_helpers import (
    ATTACK_LIMITS,
    STEADY,
    assert_pool_healthy,
    needs_bwrap,
    process_list,
    settled,
    worker_pids,
)

from rewardlab.sandbox import Outcome, SandboxPool

pytestmark = needs_bwrap


@pytest.fixture(autouse=True)
def _pool_survives(pool: SandboxPool) -> Iterator[None]:
    assert_pool_healthy(pool)
    assert settled(pool) == STEADY
    yield
    assert_pool_healthy(pool)
    assert settled(pool) == STEADY, f"a process of the attack outlived its job: {process_list(pool)}"


@pytest.mark.slow
def test_fork_bomb_is_contained(pool: SandboxPool) -> None:
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    result = pool.run(code, limits=ATTACK_LIMITS)
    assert result.outcome in (Outcome.CPU_TIMEOUT, Outcome.WALL_TIMEOUT, Outcome.SIGNALLED)


def test_memory_bomb_is_contained(pool: SandboxPool) -> None:
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 << 20))\n"
    result = pool.run(code, limits=ATTACK_LIMITS)
    assert result.outcome is Outcome.MEMORY, result.reason()
    assert result.max_rss_kb is not None and result.max_rss_kb < (ATTACK_LIMITS.memory_bytes >> 10)


def test_disk_fill_is_contained(pool: SandboxPool) -> None:
    code = """
import os
written = 0
try:
    for i in range(1000):
        with open(f"/tmp/fill{i}", "wb") as f:
            f.write(b"x" * (2 << 20))
        written += 2 << 20
except OSError as exc:
    print(written, exc.errno)
"""
    result = pool.run(code, limits=ATTACK_LIMITS)
    written, errno = result.stdout.split()
    assert int(written) <= ATTACK_LIMITS.tmp_bytes
    assert int(errno) in (28, 27)  # ENOSPC (tmpfs full) or EFBIG (file size limit)
    assert pool.run("import os; print(os.listdir('/tmp'))").stdout == "[]\n"  # gone with the job


def test_output_flood_is_cut(pool: SandboxPool) -> None:
    result = pool.run("while True:\n    print('x' * 1000)\n", limits=ATTACK_LIMITS)
    assert result.outcome is Outcome.OUTPUT_LIMIT
    assert result.truncated and len(result.stdout) <= ATTACK_LIMITS.output_bytes


# The CPU limit must fire before the wall limit even when the machine is loaded: a busy loop
# that gets under a quarter of a core would otherwise reach the 4 s wall limit first.
CPU_BOUND_LIMITS = replace(ATTACK_LIMITS, wall_seconds=60.0)


@pytest.mark.slow
def test_infinite_loop_is_killed_at_the_cpu_limit(pool: SandboxPool) -> None:
    result = pool.run("while True:\n    pass\n", limits=CPU_BOUND_LIMITS)
    assert result.outcome is Outcome.CPU_TIMEOUT
    assert result.signal in (signal.SIGXCPU, signal.SIGKILL)
    # the kernel samples CPU time in ticks: the rusage figure may read a little under the limit
    assert result.cpu_seconds is not None and result.cpu_seconds >= ATTACK_LIMITS.cpu_seconds * 0.5


@pytest.mark.slow
def test_cpu_burn_in_c_code_is_killed(pool: SandboxPool) -> None:
    """Catastrophic regex backtracking never returns to the interpreter: no Python-level
    timeout (signal.alarm and friends) can interrupt it; RLIMIT_CPU does."""
    code = "import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')\nprint('finished')"
    result = pool.run(code, limits=CPU_BOUND_LIMITS)
    assert result.outcome is Outcome.CPU_TIMEOUT
    assert "finished" not in result.stdout


def test_network_connect_fails(pool: SandboxPool) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    thread = threading.Thread(target=accept)
    thread.start()
    code = f"""
import socket
for addr in [("127.0.0.1", {port}), ("1.1.1.1", 80), ("10.0.0.1", 80)]:
    try:
        socket.create_connection(addr, timeout=1)
        print("connected", addr)
    except OSError as exc:
        print("refused", exc.errno)
"""
    result = pool.run(code, limits=ATTACK_LIMITS)
    thread.join()
    server.close()
    assert "connected" not in result.stdout and result.stdout.count("refused") == 3
    assert accepted == []


def test_reading_files_outside_the_sandbox_fails(pool: SandboxPool, tmp_path: os.PathLike[str]) -> None:
    secret = os.path.join(tmp_path, "secret.txt")
    with open(secret, "w") as f:
        f.write("TOP-SECRET-HOST-FILE")
    os.chmod(secret, 0o644)
    targets = [secret, "/etc/shadow", "/etc/passwd", "/root/.bashrc", os.path.abspath("pyproject.toml"), "/proc/1/environ"]
    code = f"""
for path in {targets!r}:
    try:
        print(path, open(path).read()[:40])
    except OSError as exc:
        print(path, "denied", exc.errno)
"""
    result = pool.run(code, limits=ATTACK_LIMITS)
    lines = result.stdout.splitlines()
    assert len(lines) == len(targets)
    assert all(" denied " in line for line in lines), lines
    assert "TOP-SECRET" not in result.stdout


def test_writing_outside_the_temp_dir_fails(pool: SandboxPool) -> None:
    targets = ["/usr/x", "/etc/x", "/x", "/proc/x", "/dev/x", "/work/x", "/lib/x"]
    code = f"""
for path in {targets!r}:
    try:
        open(path, "w").write("x")
        print(path, "WROTE")
    except OSError as exc:
        print(path, "denied", exc.errno)
"""
    result = pool.run(code, limits=ATTACK_LIMITS)
    assert "WROTE" not in result.stdout and result.stdout.count("denied") == len(targets)
    assert not any(os.path.exists(p) for p in targets if not p.startswith(("/proc", "/dev")))


def test_environment_secrets_are_not_visible(pool: SandboxPool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDLAB_TEST_SECRET", "hunter2-api-key")
    with SandboxPool(1) as fresh:  # its worker starts while the secret is in our environment
        result = fresh.run("import os\nprint(sorted(os.environ))\nprint(open('/proc/self/environ').read())")
    assert "hunter2" not in result.stdout
    allowed = ["HOME", "LANG", "PATH", "PWD", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED"]
    assert result.stdout.splitlines()[0] == str(allowed)


def test_killing_or_signalling_the_parent_fails(pool: SandboxPool) -> None:
    before = worker_pids(pool)
    code = """
import os, signal
for target in (os.getppid(), 1, -1):  # the job's init ignores them; -1 reaches no one else
    try:
        os.kill(target, signal.SIGKILL)
    except OSError as exc:
        print("kill", target, exc.errno)
print("still here", flush=True)
os.killpg(0, signal.SIGUSR1)  # the process group: the job's own session, not the server's
print("survived killpg")
"""
    result = pool.run(code, limits=ATTACK_LIMITS)
    assert "still here" in result.stdout and "survived killpg" not in result.stdout
    assert result.outcome is Outcome.SIGNALLED and result.signal == signal.SIGUSR1
    assert worker_pids(pool) == before  # the worker (and its server) survived


def test_daemon_left_behind_is_killed(pool: SandboxPool) -> None:
    code = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            time.sleep(0.05)
    os._exit(0)
print("parent leaves")
"""
    result = pool.run(code, limits=ATTACK_LIMITS)
    assert result.ok and result.stdout == "parent leaves\n"
    # `_pool_survives` checks that no process of this job remains on the host


@pytest.mark.slow
def test_timing_tricks_do_not_escape_the_limits(pool: SandboxPool) -> None:
    """Ignoring SIGXCPU and disarming every timer does not buy time: the hard CPU limit is a
    SIGKILL, and a program that just waits is stopped by the wall clock outside it."""
    burner = """
import shutil
import signal
signal.signal(signal.SIGXCPU, signal.SIG_IGN)
signal.setitimer(signal.ITIMER_REAL, 0)
signal.setitimer(signal.ITIMER_VIRTUAL, 0)
while True:
    pass
"""
    result = pool.run(burner, limits=replace(ATTACK_LIMITS, wall_seconds=8.0))
    assert not result.ok
    if result.outcome is Outcome.CPU_TIMEOUT:  # the usual case; a very loaded machine hits the wall first
        assert result.signal == signal.SIGKILL
    else:
        assert result.outcome is Outcome.WALL_TIMEOUT
    # a sleeper burns no CPU: only the wall clock stops it, and 2 s show that as well as 4 s
    sleeper = pool.run("import time\ntime.sleep(60)\nprint('woke')", limits=replace(ATTACK_LIMITS, wall_seconds=2.0))
    assert sleeper.outcome is Outcome.WALL_TIMEOUT and "woke" not in sleeper.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_cpu_burn_in_a_compiled_c_program_is_killed(pool: SandboxPool) -> None:
    burn = "int main(void) { volatile unsigned long x = 0; for (;;) x++; }\n"
    result = pool.run(argv=["/bin/sh", "-c", "gcc -O0 -o /tmp/burn burn.c && exec /tmp/burn"],
                      files={"burn.c": burn}, limits=replace(ATTACK_LIMITS, wall_seconds=8.0))
    assert result.outcome in (Outcome.CPU_TIMEOUT, Outcome.WALL_TIMEOUT), result.reason()
