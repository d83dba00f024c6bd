"""The spawner: batches start each test through a small C program (posix_spawn) instead of a
fork of the Python driver; the test's process must be exactly what a forked test gets."""

from __future__ import annotations

import os
import re
import resource

import pytest

from rewardlab.sandbox import Limits, Outcome, SandboxPool
from rewardlab.sandbox import batch as batch_module
from rewardlab.sandbox._seccomp import seccomp_program
from rewardlab.sandbox._spawner import build, spawner_binary, variants

LIMITS = Limits(cpu_seconds=1, wall_seconds=3, memory_bytes=256 << 20, output_bytes=1 << 16)
PROBE = ("cat /proc/self/limits; grep -E 'NoNewPrivs|Seccomp|Sig(Ign|Blk)|Cap(Eff|Bnd|Prm|Inh|Amb)|Umask' /proc/self/status;"
         " pwd; ls /proc/$$/fd; ls -a /tmp; id; echo $PATH")  # fmt: skip


def _probe(pool: SandboxPool) -> tuple[str, bool]:
    with pool.batch(["/bin/sh"], limits=LIMITS, files={"x.txt": "hi"}) as batch:
        run = batch.run(PROBE)
        assert run.outcome is Outcome.OK, run
        return run.stdout, bool(batch._order.get("spawner"))


def test_a_spawned_test_starts_exactly_as_a_forked_one(pool: SandboxPool, monkeypatch: pytest.MonkeyPatch) -> None:
    if spawner_binary() is None:
        pytest.skip("no C compiler: batches fork every test")
    spawned, used = _probe(pool)
    monkeypatch.setattr(batch_module, "spawner_binary", lambda: None)  # the fallback: forked in Python
    forked, fallback_used = _probe(pool)
    assert used and not fallback_used
    assert spawner_binary() == build(*variants()[0])  # the cheapest build is the one in use
    assert _without_glibc_signals(spawned) == _without_glibc_signals(forked)
    for line in ("NoNewPrivs:\t1", "Seccomp:\t2", "CapEff:\t0000000000000000", "/tmp\n0\n1\n2\n.\n..\nx.txt\n"):
        assert line in spawned, (line, spawned)


def _without_glibc_signals(status: str) -> str:
    """`status` with signals 32 and 33 left out of the ignored set. glibc reserves them for itself
    (thread cancellation, set*id broadcast): its `posix_spawn` leaves them ignored in the child and
    that survives exec, so whether the job's process has them ignored depends on how its ancestors
    were started. The spawner resets them with the raw system call; the forked fallback cannot
    (glibc's `sigaction` refuses both), so a forked test inherits whatever the job had."""
    reserved = (1 << 31) | (1 << 32)

    def clear(match: re.Match[str]) -> str:
        return f"SigIgn:\t{int(match.group(1), 16) & ~reserved:016x}"

    return re.sub(r"SigIgn:\t([0-9a-f]+)", clear, status)


@pytest.fixture(scope="module", params=range(len(variants())), ids=lambda i: " ".join(variants()[i][1]) or "dynamic")
def program(request: pytest.FixtureRequest) -> bytes:
    """Each build of the spawner this host can use (without a C library, on the C library)."""
    if request.param == len(variants()) - 1:
        pytest.skip("the dynamic build is the static one's source")
    built = build(*variants()[request.param])
    if built is None:
        pytest.skip("this build of the spawner is unavailable here")
    return built


def _spawner(program: bytes, tmp_path: object, *args: str) -> tuple[int, bytes, bytes]:
    path = os.path.join(str(tmp_path), "spawner")
    with open(path, "wb") as f:
        f.write(program)
    os.chmod(path, 0o755)
    # As B starts it: posix_spawn, stdout on a pipe, the set-up pipe on fd 3.
    (out_r, out_w), (setup_r, setup_w) = os.pipe(), os.pipe()
    actions = [(os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, setup_w, 3)]
    pid = os.posix_spawn(path, [path, *args], {"PATH": "/usr/bin:/bin"}, file_actions=actions)
    os.close(out_w)
    os.close(setup_w)
    with os.fdopen(out_r, "rb") as out, os.fdopen(setup_r, "rb") as setup:
        stdout, fault = out.read(), setup.read()
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), stdout, fault


@pytest.mark.parametrize(
    "args",
    [
        ("", "1", "abc", "1", "1", "--", "/bin/true"),  # a resource that is not a number
        ("", "1", str(resource.RLIMIT_NOFILE), "1x", "1", "--", "/bin/true"),
        ("", "2", str(resource.RLIMIT_NOFILE), "8", "8", "--", "/bin/true"),  # fewer limits than claimed
        ("zz" * 8, "0", "--", "/bin/true"),  # a filter that is not hexadecimal
        ("00" * 7, "0", "--", "/bin/true"),  # a filter that is not whole instructions
        ("", "0", "/bin/true"),  # no "--"
        ("", "0", "--"),  # no command
    ],
)
def test_the_spawner_refuses_malformed_arguments_as_a_fault(program: bytes, tmp_path: object, args: tuple[str, ...]) -> None:
    code, out, fault = _spawner(program, tmp_path, *args)
    assert code == 126 and out == b"" and fault.startswith(b"spawner: "), (code, out, fault)


def test_the_spawner_sets_limits_and_filter_then_runs_the_command(program: bytes, tmp_path: object) -> None:
    limit = str(resource.RLIMIT_NOFILE)
    code, out, fault = _spawner(program, tmp_path, seccomp_program().hex(), "1", limit, "9", "9", "--", "/bin/sh", "-c",
                                "grep -E 'files|Seccomp:' /proc/self/limits /proc/self/status; pwd")  # fmt: skip
    assert (code, fault) == (0, b""), (code, out, fault)
    assert b"Max open files            9                    9" in out and b"Seccomp:\t2" in out and out.endswith(b"/tmp\n")
    code, out, fault = _spawner(program, tmp_path, "", "0", "--", "./no-such-program")
    assert (code, fault) == (127, b"")
    code, out, fault = _spawner(program, tmp_path, "", "0", "--", "sh", "-c", "echo found on PATH")  # searched as execvp does
    assert (code, out, fault) == (0, b"found on PATH\n", b""), (code, out, fault)


def test_a_spawner_that_cannot_run_falls_back_to_forking(pool: SandboxPool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_module, "spawner_binary", lambda: b"\x7fELF not a program")
    with pool.batch(["/bin/sh"], limits=LIMITS) as batch:
        runs = [batch.run(f"echo {n}") for n in range(3)]
        assert batch._order.get("spawner")
    assert [(r.outcome, r.stdout) for r in runs] == [(Outcome.OK, f"{n}\n") for n in range(3)], runs
    assert batch.jobs == 1
