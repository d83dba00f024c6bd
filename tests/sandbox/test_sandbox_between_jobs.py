"""One test per attack of one job on another: reading an earlier job's data,
reaching the worker's control channel, holding memory outside the limits, and losing workers
to threads. After every test an honest program still runs right (`_pool_survives`)."""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

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

from rewardlab.sandbox import Limits, Outcome, SandboxPool
from rewardlab.sandbox.session import CandidateError, SessionEnded

pytestmark = needs_bwrap


@pytest.fixture(autouse=True)
def _pool_survives(pool: SandboxPool) -> Iterator[None]:
    assert_pool_healthy(pool)
    yield
    assert_pool_healthy(pool)
    with pool.session("def f(x):\n    return x[::-1]\n") as honest:
        assert honest.call("f", "x" * (1 << 20) + "y") == "y" + "x" * (1 << 20)  # > a pipe's buffer
    assert settled(pool) == STEADY, f"a process of the attack outlived its job: {process_list(pool)}"


# -- 1. cross-job leaks --------------------------------------------------------------------------
# Secrets are "LEAKMARK" + 16 fresh hex digits; the scanners look for the prefix (built at run
# time, so their own source does not contain it whole) and print what follows each occurrence.
SCAN_MEMORY = r"""
import re
needle = re.compile(re.escape(b"LEAK" + b"MARK") + rb"([0-9a-f]{16})")
found = set()
with open("/proc/self/maps") as maps:
    regions = [line.split() for line in maps]
with open("/proc/self/mem", "rb", buffering=0) as mem:
    for region in regions:
        if not region[1].startswith("r"):
            continue
        lo, hi = (int(x, 16) for x in region[0].split("-"))
        for start in range(lo, hi, 1 << 20):
            try:
                mem.seek(start)
                chunk = mem.read(min(hi - start, (1 << 20) + 24))
            except (OSError, OverflowError, ValueError):
                break
            found.update(m.group(1).decode() for m in needle.finditer(chunk))
FOUND = sorted(found)
"""
WALK_FRAMES = r"""
import gc, re, sys
needle = re.compile("LEAK" "MARK" "([0-9a-f]{16})")
found, frames, frame = set(), 0, sys._getframe()
while frame is not None:
    frames += 1
    for value in list(frame.f_locals.values()):
        found.update(needle.findall(repr(value)[:1 << 22]))
    frame = frame.f_back
for obj in gc.get_objects():
    if isinstance(obj, (str, bytes, bytearray, dict)):
        text = obj if isinstance(obj, str) else repr(obj)
        found.update(needle.findall(text[:1 << 20]))
FOUND = sorted(found)
"""


def _secret() -> str:
    return secrets.token_hex(8)


def _run_secret_jobs(pool: SandboxPool) -> set[str]:
    """A program and a session that hold secrets in their source, stdin, stdout, call
    arguments and return value; returns the secrets' hex digits."""
    in_source, in_stdin, in_session_source, in_args = (_secret() for _ in range(4))
    out = pool.run(f"# LEAKMARK{in_source}\nprint('LEAK' 'MARK' + input()[8:][::-1])", stdin=f"LEAKMARK{in_stdin}")
    assert out.ok, out.stderr
    with pool.session(f"# LEAKMARK{in_session_source}\ndef f(x):\n    return 'LEAK' 'MARK' + x[8:][::-1]\n") as session:
        assert session.call("f", f"LEAKMARK{in_args}") == f"LEAKMARK{in_args[::-1]}"
    # the stdout and the return value hold the reversed digits: found only if they leaked
    return {in_source, in_stdin, in_stdin[::-1], in_session_source, in_args, in_args[::-1]}


def _scan_with_later_jobs(pool: SandboxPool, scanner: str) -> set[str]:
    """What jobs forked after the secret ones find; each spare the server holds gets a turn,
    as a program and as a session module."""
    found: set[str] = set()
    for _ in range(2 + 1):  # more jobs than spares: one forked after the secret jobs ran, too
        # the secret jobs' limits: other limits would make the server fork fresh spares
        run = pool.run(scanner + "\nprint(FOUND)")
        assert run.ok, run.stderr
        found |= set(eval(run.stdout))
        with pool.session(scanner + "\ndef found():\n    return FOUND\n") as s:
            found |= set(s.call("found"))
    return found


def test_scanning_proc_self_mem_finds_no_earlier_job(pool: SandboxPool) -> None:
    leaked = _run_secret_jobs(pool)
    assert not leaked & _scan_with_later_jobs(pool, SCAN_MEMORY)


def test_walking_the_frame_stack_finds_no_earlier_job(pool: SandboxPool) -> None:
    leaked = _run_secret_jobs(pool)
    assert not leaked & _scan_with_later_jobs(pool, WALK_FRAMES)


# -- 2. the worker's control channel -----------------------------------------------------------
PROBE_FDS = "import os\nprint(sorted(int(fd) for fd in os.listdir('/proc/self/fd')))"


def test_a_program_holds_no_descriptor_but_stdio(pool: SandboxPool) -> None:
    result = pool.run(PROBE_FDS)
    assert result.stdout == "[0, 1, 2, 3]\n"  # 3: the directory listdir itself opened


def test_an_exec_job_holds_no_descriptor_but_stdio(pool: SandboxPool) -> None:
    """Compiled (C/C++) jobs run through argv: the shell sees only its standard streams."""
    script = "for fd in 3 4 5 6 7 8 9; do [ -e /proc/self/fd/$fd ] && echo open $fd; done; echo checked"
    result = pool.run(argv=["/bin/sh", "-c", script])
    assert result.stdout == "checked\n"


def test_a_session_module_holds_only_its_private_pipes(pool: SandboxPool) -> None:
    with pool.session(PROBE_FDS.replace("print(", "FDS = (") + "\ndef fds():\n    return FDS\n") as s:
        assert s.call("fds") == [0, 1, 2, 3, 4, 5]  # 3/4: the pipe pair to its guard; 5: listdir


PLANT = r"""
import json, os, struct
def frame(obj):
    data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data
planted = [frame({"op": "loaded"}), frame({"op": "return", "value": ["l", []]}), frame({"op": "ready"}),
           struct.pack(">I", 8 + 9) + struct.pack(">Q", 1) + b'{"op":"x"}']
for fd in range(3, 64):
    for data in planted:
        try:
            os.write(fd, data)
        except OSError:
            pass
"""


def test_frames_planted_by_a_program_do_not_reach_the_next_session(pool: SandboxPool) -> None:
    pool.run(PLANT)
    with pool.session("def f():\n    return 7\n", prefetch=[("f", ())]) as s:
        assert s.call("f") == 7
        assert s.call("f") == 7  # not prefetched: a real round trip


def test_frames_planted_by_a_session_end_it_and_not_the_next(pool: SandboxPool) -> None:
    with pytest.raises(SessionEnded) as ended, pool.session(PLANT + "\ndef f():\n    return 1\n") as s:
        s.call("f")
    assert ended.value.result.outcome is Outcome.PROTOCOL
    with pool.session("def f():\n    return 7\n") as s:
        assert s.call("f") == 7


def test_two_answers_to_one_call_end_the_session(pool: SandboxPool) -> None:
    code = PLANT.split("planted =")[0] + (
        "import struct\n"
        "def f(n):\n"
        "    os.write(4, struct.pack('>I', 8 + 15) + struct.pack('>Q', n + 2) + b'{\"op\":\"ready\"}')\n"
        "    os.write(4, frame({'op': 'return', 'value': ['i', '0x1']}))\n"
        "    return n\n"
    )
    with pytest.raises(SessionEnded) as ended, pool.session(code) as s:
        for n in range(3):
            s.call("f", n)
    assert ended.value.result.outcome is Outcome.PROTOCOL


def test_non_blocking_descriptors_do_not_break_later_jobs(pool: SandboxPool) -> None:
    code = "import os\nfor fd in range(64):\n    try:\n        os.set_blocking(fd, False)\n    except OSError:\n        pass\n"
    pool.run(code)
    with pool.session(code + "def big():\n    return 'z' * (1 << 20)\n") as s:
        assert s.call("big") == "z" * (1 << 20)
    for _ in range(3):  # `_pool_survives` then checks a large answer of an honest session
        assert pool.run("print('x' * 200000)").stdout == "x" * 200000 + "\n"


def test_deeply_nested_answer_is_a_protocol_failure(pool: SandboxPool) -> None:
    code = (
        "import os, struct\n"
        "body = b'[' * 500000\n"
        "os.write(4, struct.pack('>I', 8 + len(body)) + struct.pack('>Q', 0) + body)\n"
    )
    with pytest.raises(SessionEnded) as ended, pool.session(code):
        pass
    assert ended.value.result.outcome is Outcome.PROTOCOL


def _peak_rss_after(action: object) -> int:
    """Growth of this process's peak RSS (kB) while `action()` runs (clear_refs 5 resets it)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

    def field(name: str) -> int:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(name))

    before = field("VmRSS:")
    action()  # type: ignore[operator]
    return field("VmHWM:") - before


def test_oversized_return_is_refused_without_growing_the_host(pool: SandboxPool) -> None:
    limits = Limits(memory_bytes=768 << 20, cpu_seconds=5, wall_seconds=20)
    code = "def huge():\n    return 'x' * (60 << 20)\n"

    def call_it() -> None:
        with pool.session(code, limits=limits) as s, pytest.raises(CandidateError, match="frame_bytes"):
            s.call("huge")

    assert _peak_rss_after(call_it) < 16 << 10


def test_oversized_raw_frame_is_refused_without_growing_the_host(pool: SandboxPool) -> None:
    limits = Limits(memory_bytes=768 << 20, cpu_seconds=5, wall_seconds=20)
    code = (
        "import os, struct\n"
        "body = struct.pack('>Q', 0) + b'\"' + b'x' * (60 << 20) + b'\"'\n"
        "os.write(4, struct.pack('>I', len(body)) + body)\n"
    )

    def load_it() -> None:
        with pytest.raises(SessionEnded) as ended, pool.session(code, limits=limits):
            pass
        assert ended.value.result.outcome is Outcome.PROTOCOL

    assert _peak_rss_after(load_it) < 16 << 10


# -- 3. memory the address-space limit does not see --------------------------------------------
def test_memfd_cannot_hold_memory_outside_the_limit(pool: SandboxPool) -> None:
    code = """
import os
held = 0
try:
    for _ in range(24):
        fd = os.memfd_create("stash")
        os.write(fd, b"x" * (16 << 20))
        held += 16 << 20
except OSError as exc:
    print("refused", exc.errno)
print(held)
"""
    result = pool.run(code, limits=ATTACK_LIMITS)
    assert int(result.stdout.split()[-1]) < ATTACK_LIMITS.memory_bytes, result


def test_shared_memory_and_tmp_share_one_capped_budget(pool: SandboxPool) -> None:
    code = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("shmget", libc.syscall(29, 0, 64 << 20, 0o1000 | 0o600), ctypes.get_errno())
print("msgget", libc.syscall(68, 0, 0o1000 | 0o600), ctypes.get_errno())
held = 0
for i in range(64):
    for where in ("/dev/shm", "/tmp"):
        try:
            with open(f"{where}/f{i}", "wb") as f:
                f.write(b"x" * (1 << 20))
            held += 1 << 20
        except OSError:
            pass
print(held)
"""
    lines = pool.run(code, limits=ATTACK_LIMITS).stdout.splitlines()
    assert lines[0] == "shmget -1 1" and lines[1] == "msgget -1 1"  # EPERM: segments outlive detaching
    assert int(lines[2]) <= ATTACK_LIMITS.tmp_bytes


# -- 4. workers and threads -------------------------------------------------------------------
def _thread_gone(native_id: int) -> None:
    """Wait until the OS thread has fully exited (its parent-death signals are sent by then)."""
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/self/task/{native_id}") and time.monotonic() < deadline:
        time.sleep(0.001)


def test_a_pool_started_from_a_short_lived_thread_stays_up() -> None:
    with SandboxPool(size=2) as fresh:
        ids: list[int] = []
        starter = threading.Thread(target=lambda: (ids.append(threading.get_native_id()), fresh.start()))
        starter.start()
        starter.join()
        _thread_gone(ids[0])
        before = sorted(worker_pids(fresh))
        results = [fresh.run(f"print({i} * {i})") for i in range(4)]
        assert [r.stdout for r in results] == [f"{i * i}\n" for i in range(4)]
        assert sorted(worker_pids(fresh)) == before  # the same workers: none died with the thread


@pytest.mark.slow
def test_200_concurrent_mixed_jobs_from_threads_are_all_correct() -> None:
    """Four rounds of 50 jobs, each round from a fresh executor whose threads then exit (as
    `code.tests` batches run); the pool's workers are first started by those threads."""

    def job(i: int) -> bool:
        if i % 3 == 0:
            return fresh.run("print(int(input()) ** 2)", stdin=str(i)).stdout == f"{i * i}\n"
        if i % 3 == 1:
            with fresh.session("def f(x):\n    return [x, str(x)]\n", prefetch=[("f", (i,))]) as s:
                return bool(s.call("f", i) == [i, str(i)] and s.call("f", -i) == [-i, str(-i)])
        return fresh.run(argv=["/bin/sh", "-c", f"echo {i}"]).stdout == f"{i}\n"

    with SandboxPool(size=3) as fresh:
        outcomes: list[bool] = []
        for round_ in range(4):
            with ThreadPoolExecutor(8) as executor:
                outcomes += executor.map(job, range(round_ * 50, (round_ + 1) * 50))
        assert len(outcomes) == 200 and all(outcomes), [i for i, ok in enumerate(outcomes) if not ok]


def test_signalling_the_guard_does_not_stop_it(pool: SandboxPool) -> None:
    """The module's guard is pid 1 of its pid namespace: SIGKILL, SIGSTOP and SIGINT from the
    program are dropped, so calls still get answered."""
    code = "import os, signal\nfor sig in (signal.SIGINT, signal.SIGSTOP, signal.SIGKILL):\n    os.kill(1, sig)\ndef f(x):\n    return x + 1\n"
    with pool.session(code) as s:
        assert [s.call("f", i) for i in range(3)] == [1, 2, 3]
    assert s.result is not None and s.result.ok
