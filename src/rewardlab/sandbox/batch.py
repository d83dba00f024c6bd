"""Batches: many runs of one command in one job sandbox (the host side of `_batch.py`).

A program's tests differ only in their stdin. A batch sets up one job sandbox (namespaces, a
private /proc and tmpfs) and runs every test in it in a fresh process under the test's own
limits, with /tmp reset to the job's files and every leftover process killed in between (see
`_batch.py` for what each test gets). Each answer is parsed here as hostile data: this job's
nonce, the next answer number, a bounded header of exactly the expected fields and types, and
output lengths that add up. A job that ends without answering (killed by the server's clock,
broken protocol, the worker lost) gives the test in flight a typed verdict from how the job
ended; the next run starts a fresh job, so the other tests are still scored.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rewardlab.sandbox import _wire
from rewardlab.sandbox._batch import STDERR_TAIL, TEST_TAG
from rewardlab.sandbox._spawner import spawner_binary
from rewardlab.sandbox.config import HOST_GRACE_SECONDS, Limits, clean_env
from rewardlab.sandbox.result import ExecResult, Outcome, SandboxError, classify

if TYPE_CHECKING:
    from rewardlab.sandbox.pool import SandboxPool, _Worker

_HEADER_BYTES = 4096  # the largest header of an answer
_FIELDS = frozenset({"status", "cpu", "maxrss_kb", "killed_for", "truncated", "fault", "wall", "last", "out", "err"})
_KILLED_FOR = (None, "wall", "output")


class Batch:
    """Runs of one command (`argv` over `files`), one stdin after another, in one job sandbox
    of the pool, each in a fresh process under `limits`. Use through `SandboxPool.batch`.

    At most `size` runs share a job (then a fresh one starts, so the job's own wall budget is
    known). Without bubblewrap every run is a job of its own (`SandboxPool.run`).
    """

    def __init__(self, pool: SandboxPool, *, argv: list[str], files: Mapping[str, str | bytes], env: Mapping[str, str],
                 limits: Limits, size: int):  # fmt: skip
        from rewardlab.sandbox.pool import _job_files

        self._pool = pool
        self.limits = limits
        self._argv, self._files, self._env = list(argv), dict(files), dict(env)
        text, binary = _job_files(self._files, limits)
        self._order: dict[str, Any] = {"source": "", "stdin": "", "argv": self._argv, "files": text, "binary_files": list(binary),
                       "env": {**clean_env(), **self._env}, "test_limits": limits.to_wire()}  # fmt: skip
        self._blobs = list(binary.values())
        spawner = spawner_binary() if pool.isolated else None
        if spawner is not None:  # the tests start through it (`_spawner.py`), else each is forked in Python
            self._order["spawner"] = True
            self._blobs.append(spawner)
        self._size = max(1, size)
        self._worker: _Worker | None = None
        self._left = 0  # runs the current job may still take
        self._seq = 0
        self._nonce = b""
        self._job_deadline = 0.0
        self.jobs = 0  # job sandboxes started so far

    # -- runs ----------------------------------------------------------------------------------
    def run(self, stdin: str = "") -> ExecResult:
        """Run the command on `stdin`; how it ended and what it printed (as `SandboxPool.run`)."""
        if not self._pool.isolated:
            return self._pool.run(argv=self._argv, files=self._files, stdin=stdin, limits=self.limits, env=self._env)
        if self._worker is None:
            self._start()
        worker = self._worker
        assert worker is not None
        self._left -= 1
        deadline = min(time.monotonic() + self.limits.wall_seconds + HOST_GRACE_SECONDS, self._job_deadline)
        try:
            worker._send_payload(TEST_TAG + stdin.encode("utf-8", "surrogatepass"), deadline)
            channel, frame = worker.read_any(deadline)
        except _wire.ProtocolError as exc:
            return self._violation(str(exc))
        except SandboxError:
            self._release(healthy=False)
            return self._lost(Outcome.WALL_TIMEOUT, "the batch's job stopped answering")
        if channel == "main":
            return self._ended_early(frame)
        try:
            result, last = parse_answer(frame, self._nonce, self._seq, self.limits, self._pool.isolation)
        except _wire.ProtocolError as exc:
            return self._violation(str(exc))
        self._seq += 1
        if last or self._left <= 0:
            self.close()
        return result

    def close(self) -> None:
        """End the current job (the next run starts a fresh one)."""
        worker = self._worker
        if worker is None:
            return
        try:
            worker.send_call(None, self._job_deadline)
            while True:
                channel, frame = worker.read_any(self._job_deadline)
                if channel == "main":
                    if frame.get("op") == "result":
                        worker.drain_calls()
                        self._release(healthy=True)
                        classify(frame, self.limits, self._pool.isolation)  # a fault of the sandbox raises
                        return
                    raise SandboxError(f"sandbox worker sent {frame.get('op')!r} during a batch")
                raise _wire.ProtocolError("an answer after the last test")
        except (SandboxError, _wire.ProtocolError):
            if self._worker is not None:
                self._release(healthy=False)

    # -- internals -----------------------------------------------------------------------------
    def _start(self) -> None:
        budget = self._size * (self.limits.wall_seconds + 1.0) + 10.0
        job_limits = replace(self.limits, wall_seconds=budget,
                             frame_bytes=max(self.limits.frame_bytes, self.limits.output_bytes + STDERR_TAIL + 2 * _HEADER_BYTES))  # fmt: skip
        worker = self._pool._acquire()
        self._worker, self._left, self._seq = worker, self._size, 0
        self._job_deadline = time.monotonic() + budget + HOST_GRACE_SECONDS
        try:
            nonce = worker.start_job("batch", job_limits, self._order, self._job_deadline, blobs=self._blobs)
        except SandboxError:
            self._release(healthy=False)
            raise
        self._nonce = nonce.encode("ascii")
        self.jobs += 1

    def _release(self, *, healthy: bool) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            self._pool._release(worker, healthy=healthy)

    def _lost(self, outcome: Outcome, why: str, stdout: str = "", cpu: float | None = None) -> ExecResult:
        """The verdict of the test in flight when its job ended without answering."""
        return ExecResult(outcome, None, None, stdout, why, False, cpu, 0.0, None, self._pool.isolation)

    def _ended_early(self, frame: dict[str, Any]) -> ExecResult:
        """The job ended with this test unanswered: the test gets how the job ended."""
        worker = self._worker
        assert worker is not None
        if frame.get("op") != "result":
            self._release(healthy=False)
            raise SandboxError(f"sandbox worker sent {frame.get('op')!r} during a batch")
        worker.drain_calls()
        self._release(healthy=True)
        ended = classify(frame, self.limits, self._pool.isolation)
        outcome = Outcome.PROTOCOL if ended.ok else ended.outcome
        return self._lost(outcome, f"the batch's job ended during this test: {ended.reason()}\n{ended.stderr}"[-2000:])

    def _violation(self, what: str) -> ExecResult:
        """An answer broke the protocol: have the server kill the job; the test is PROTOCOL."""
        worker = self._worker
        assert worker is not None
        worker.calls.clear()
        try:
            worker.send({"op": "kill"})
            while True:
                try:
                    channel, frame = worker.read_any(self._job_deadline)
                except _wire.ProtocolError:  # more garbage from the dying job: drop it
                    worker.calls.clear()
                    continue
                if channel == "main" and frame.get("op") == "result":
                    worker.drain_calls()
                    self._release(healthy=True)
                    break
        except SandboxError:
            self._release(healthy=False)
        return self._lost(Outcome.PROTOCOL, what[:300])


def parse_answer(payload: bytes, nonce: bytes, seq: int, limits: Limits, isolation: str) -> tuple[ExecResult, bool]:
    """One test's answer (nonce + number + header length + JSON header + stdout + stderr), checked
    field by field; ProtocolError on anything else. Returns the run and whether it is the last
    answer of its job."""
    head = _wire.NONCE_BYTES + _wire.SEQ.size
    if payload[: _wire.NONCE_BYTES] != nonce:
        raise _wire.ProtocolError("a frame without this job's nonce")
    if payload[_wire.NONCE_BYTES : head] != _wire.SEQ.pack(seq):
        raise _wire.ProtocolError(f"answer {int.from_bytes(payload[_wire.NONCE_BYTES : head], 'big')} where {seq} was due")
    if len(payload) < head + 4:
        raise _wire.ProtocolError("an answer without its header")
    size = int.from_bytes(payload[head : head + 4], "big")
    if size > _HEADER_BYTES:
        raise _wire.ProtocolError(f"an answer header of {size} bytes (at most {_HEADER_BYTES})")
    fields = _wire.decode_payload(payload[head + 4 : head + 4 + size])
    body = payload[head + 4 + size :]
    _check_fields(fields, limits, len(body))
    report = {"wait": {"status": fields["status"], "cpu": fields["cpu"], "maxrss_kb": fields["maxrss_kb"]},
              "killed_for": fields["killed_for"], "truncated": fields["truncated"], "fault": fields["fault"],
              "wall": fields["wall"], "stdout": body[: fields["out"]].decode("utf-8", "replace"),
              "stderr": body[fields["out"] :].decode("utf-8", "replace")}  # fmt: skip
    return classify(report, limits, isolation), fields["last"]


def _check_fields(fields: dict[str, Any], limits: Limits, body: int) -> None:
    if set(fields) != _FIELDS:
        raise _wire.ProtocolError(f"an answer with fields {sorted(fields)[:12]}")

    def count(name: str, *, optional: bool = False, most: float = math.inf) -> None:
        value = fields[name]
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
            raise _wire.ProtocolError(f"an answer whose {name!r} is {str(value)[:40]}")

    def seconds(name: str, *, optional: bool = False) -> None:
        value = fields[name]
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e9:
            raise _wire.ProtocolError(f"an answer whose {name!r} is {str(value)[:40]}")

    count("status", optional=True, most=0xFFFF)
    count("maxrss_kb", optional=True)
    count("out", most=limits.output_bytes)
    count("err", most=STDERR_TAIL)
    seconds("cpu", optional=True)
    seconds("wall")
    if fields["killed_for"] not in _KILLED_FOR:
        raise _wire.ProtocolError(f"an answer killed for {str(fields['killed_for'])[:40]}")
    if not isinstance(fields["truncated"], bool) or not isinstance(fields["last"], bool):
        raise _wire.ProtocolError("an answer whose flags are not booleans")
    if not isinstance(fields["fault"], str) or len(fields["fault"]) > 8192:
        raise _wire.ProtocolError("an answer whose fault is not a short text")
    if fields["out"] + fields["err"] != body:
        raise _wire.ProtocolError(f"an answer of {body} output bytes that claims {fields['out']} + {fields['err']}")
