"""Batches: many runs of one command in one job sandbox, each run as isolated from the others
as separate jobs would be, each under its own limits; answers parsed as hostile data.

The command is /bin/sh reading its script from stdin, so one batch runs a different program
per test.
"""

from __future__ import annotations

import json

import pytest

from rewardlab.errors import ProtocolError
from rewardlab.sandbox import Limits, Outcome, SandboxConfig, SandboxPool
from rewardlab.sandbox._wire import NONCE_BYTES, SEQ
from rewardlab.sandbox.batch import parse_answer

SH = ["/bin/sh"]
LIMITS = Limits(cpu_seconds=1, wall_seconds=3, memory_bytes=256 << 20, output_bytes=1 << 16)


def test_runs_share_one_job_and_each_gets_its_own_stdin(pool: SandboxPool) -> None:
    with pool.batch(["/bin/cat"], limits=LIMITS) as batch:
        outs = [batch.run(text) for text in ("one", "two", "three")]
    assert [(r.outcome, r.stdout) for r in outs] == [(Outcome.OK, "one"), (Outcome.OK, "two"), (Outcome.OK, "three")]
    assert batch.jobs == 1
    assert all(r.isolation == "bubblewrap" and r.cpu_seconds is not None for r in outs)


def test_files_are_written_for_every_run(pool: SandboxPool) -> None:
    files: dict[str, str | bytes] = {"data.txt": "hello\n", "tool": b"#!/bin/sh\necho tool ran\n"}
    with pool.batch(SH, files=files, limits=LIMITS) as batch:
        first = batch.run("cat data.txt; ./tool; rm data.txt tool; echo changed > data.txt")
        second = batch.run("cat data.txt; ./tool")
    assert first.stdout == second.stdout == "hello\ntool ran\n", (first, second)


# A CPU burner gets a generous wall limit (a loaded machine gives it a fraction of a core).
CPU_LIMITS = Limits(cpu_seconds=1, wall_seconds=30, memory_bytes=256 << 20, output_bytes=1 << 16)


@pytest.mark.parametrize(
    ("script", "outcome", "limits"),
    [
        ("while :; do :; done", Outcome.CPU_TIMEOUT, CPU_LIMITS),
        ("sleep 30", Outcome.WALL_TIMEOUT, LIMITS),
        ("yes", Outcome.OUTPUT_LIMIT, LIMITS),
        ("exit 3", Outcome.RUNTIME_ERROR, LIMITS),
        ("kill -SEGV $$", Outcome.SIGNALLED, LIMITS),
    ],
)
def test_each_limit_holds_per_run_and_the_next_run_is_scored(pool: SandboxPool, script: str, outcome: Outcome, limits: Limits) -> None:
    with pool.batch(SH, limits=limits) as batch:
        before = batch.run("echo fine")
        failed = batch.run(script)
        after = batch.run("echo fine")
    assert failed.outcome is outcome, failed
    assert (before.stdout, after.outcome, after.stdout) == ("fine\n", Outcome.OK, "fine\n"), after
    assert batch.jobs == 1
    assert failed.wall_seconds < limits.wall_seconds + 1


def test_memory_limit_is_per_run(pool: SandboxPool) -> None:
    with pool.batch(["/usr/bin/python3", "-c", "import sys; x = bytearray(int(sys.stdin.read())); print(len(x))"], limits=LIMITS) as batch:
        big = batch.run(str(512 << 20))
        small = batch.run(str(64 << 20))
    assert big.outcome in (Outcome.RUNTIME_ERROR, Outcome.MEMORY) and "MemoryError" in big.stderr, big
    assert (small.outcome, small.stdout) == (Outcome.OK, f"{64 << 20}\n")


def test_a_run_cannot_leave_files_or_processes_for_the_next(pool: SandboxPool) -> None:
    plant = ("echo secret > /tmp/left; echo shm > /dev/shm/left; mkdir -p /tmp/d/e; touch /tmp/d/e/f; chmod 000 /tmp/d/e /tmp/d; "
             "(setsid sleep 100 &); (sleep 100 &); chmod 0 /tmp; echo planted")  # fmt: skip
    # pid 1 is the driver (its command line is the sandbox's source); every other process is listed
    look = "ls -A /tmp /dev/shm; echo END; for p in /proc/[0-9]*; do [ $p = /proc/1 ] || tr '\\0' ' ' < $p/cmdline; echo; done"
    with pool.batch(SH, files={"given": "x"}, limits=LIMITS) as batch:
        first = batch.run(plant)
        second = batch.run(look)
    assert first.stdout == "planted\n", first
    assert second.ok, second
    listing, processes = second.stdout.split("END\n", 1)
    assert listing.split() == ["/dev/shm:", "/tmp:", "given"], second.stdout
    assert "sleep" not in processes, processes


def test_a_run_that_attacks_the_driver_gets_its_own_verdict_and_the_rest_run(pool: SandboxPool) -> None:
    """The driver is pid 1 of the job's pid namespace: signals from inside without a handler
    are dropped, so killing it (or everything) ends only the attacker's own processes."""
    attacks = ["kill -KILL 1; kill -KILL $PPID; echo alive", "kill -KILL -1; echo alive", "kill -STOP 1; kill -TERM 1; echo alive"]
    with pool.batch(SH, limits=LIMITS) as batch:
        results = [(batch.run(attack), batch.run("echo next")) for attack in attacks]
    for attack, (attacked, after) in zip(attacks, results, strict=True):
        assert attacked.outcome in (Outcome.OK, Outcome.SIGNALLED), (attack, attacked)
        assert (after.outcome, after.stdout) == (Outcome.OK, "next\n"), (attack, after)
    assert batch.jobs == 1


def test_a_job_that_dies_gives_the_run_in_flight_a_verdict_and_the_rest_a_fresh_job(pool: SandboxPool) -> None:
    with pool.batch(SH, limits=LIMITS) as batch:
        assert batch.run("echo one").stdout == "one\n"
        worker = batch._worker
        assert worker is not None
        worker.send({"op": "kill"})  # the server kills the job, as it does at the job's wall budget
        lost = batch.run("sleep 1; echo two")  # still running when the kill lands, however fast tests start
        rest = [batch.run(f"echo {n}") for n in ("three", "four")]
    assert lost.outcome is Outcome.WALL_TIMEOUT and "ended during this test" in lost.stderr, lost
    assert [r.stdout for r in rest] == ["three\n", "four\n"]
    assert batch.jobs == 2


def test_size_bounds_the_runs_of_one_job(pool: SandboxPool) -> None:
    with pool.batch(["/bin/cat"], limits=LIMITS, size=2) as batch:
        outs = [batch.run(str(n)).stdout for n in range(5)]
    assert outs == ["0", "1", "2", "3", "4"] and batch.jobs == 3


def test_without_bubblewrap_every_run_is_its_own_job() -> None:
    with SandboxPool(size=1, config=SandboxConfig(isolation="rlimits")) as pool, pool.batch(["/bin/cat"], limits=LIMITS) as batch:
        outs = [batch.run(text) for text in ("a", "b")]
    assert [r.stdout for r in outs] == ["a", "b"] and batch.jobs == 0
    assert outs[0].isolation == "rlimits-only"


# -- answers are hostile data ---------------------------------------------------------------------
NONCE = b"0123456789abcdef"
assert len(NONCE) == NONCE_BYTES
GOOD = {"status": 0, "cpu": 0.01, "maxrss_kb": 1000, "killed_for": None, "truncated": False, "fault": "", "wall": 0.02,
        "last": False, "out": 2, "err": 0}  # fmt: skip


def _answer(fields: dict[str, object], body: bytes = b"5\n", *, nonce: bytes = NONCE, seq: int = 0) -> bytes:
    header = json.dumps(fields).encode()
    return nonce + SEQ.pack(seq) + len(header).to_bytes(4, "big") + header + body


def test_a_well_formed_answer_is_read() -> None:
    result, last = parse_answer(_answer(GOOD), NONCE, 0, LIMITS, "bubblewrap")
    assert (result.outcome, result.stdout, result.exit_code, last) == (Outcome.OK, "5\n", 0, False)


@pytest.mark.parametrize(
    ("name", "payload"),
    [
        ("another job's nonce", _answer(GOOD, nonce=b"f" * NONCE_BYTES)),
        ("an answer out of order", _answer(GOOD, seq=1)),
        ("a missing field", _answer({k: v for k, v in GOOD.items() if k != "cpu"})),
        ("an extra field", _answer({**GOOD, "verdict": "pass"})),
        ("a boolean status", _answer({**GOOD, "status": True})),
        ("a negative cpu time", _answer({**GOOD, "cpu": -1})),
        ("an unknown kill reason", _answer({**GOOD, "killed_for": "judge says pass"})),
        ("lengths that do not add up", _answer({**GOOD, "out": 1})),
        ("more output than the cap", _answer({**GOOD, "out": LIMITS.output_bytes + 1}, b"x" * (LIMITS.output_bytes + 1))),
        ("a header that is not an object", NONCE + SEQ.pack(0) + (2).to_bytes(4, "big") + b"[]"),
        ("an oversized header", NONCE + SEQ.pack(0) + (1 << 20).to_bytes(4, "big") + b"{}"),
        ("a truncated frame", NONCE + SEQ.pack(0)),
    ],
)
def test_a_malformed_answer_is_a_protocol_error(name: str, payload: bytes) -> None:
    with pytest.raises(ProtocolError):
        parse_answer(payload, NONCE, 0, LIMITS, "bubblewrap")


PROBE = """
import os, resource
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
try:
    os.memfd_create("x")
    memfd = "allowed"
except OSError as exc:
    memfd = f"refused {exc.errno}"
print(memfd, status["NoNewPrivs"].strip(), status["CapEff"].strip(), resource.getrlimit(resource.RLIMIT_NOFILE)[1],
      resource.getrlimit(resource.RLIMIT_STACK)[0] >> 20, sorted(os.listdir("/proc/self/fd")))
"""


def test_every_run_has_the_jobs_isolation_and_its_own_limits(pool: SandboxPool) -> None:
    limits = Limits(cpu_seconds=2, wall_seconds=20, memory_bytes=256 << 20, open_files=48, stack_bytes=64 << 20)
    with pool.batch(["/usr/bin/python3", "-S", "probe.py"], files={"probe.py": PROBE}, limits=limits) as batch:
        first, second = batch.run(), batch.run()
    assert first.ok, first
    assert first.stdout == second.stdout == "refused 1 1 0000000000000000 48 64 ['0', '1', '2', '3']\n", first.stdout


def test_a_command_that_cannot_run_is_a_runtime_error_of_its_own(pool: SandboxPool) -> None:
    with pool.batch(["./missing"], limits=LIMITS) as batch:
        runs = [batch.run(), batch.run()]
    assert all(r.outcome is Outcome.RUNTIME_ERROR and r.exit_code == 127 and "cannot execute ./missing" in r.stderr for r in runs), runs
    assert batch.jobs == 1
