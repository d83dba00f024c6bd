"""How a sandboxed job ended: the facts the server reports, classified on the host."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rewardlab.errors import SandboxError as SandboxError
from rewardlab.sandbox.config import Limits


class Outcome(StrEnum):
    """How a sandboxed job ended, decided on the host from facts the server reports."""

    OK = "ok"  # exited with status 0
    RUNTIME_ERROR = "runtime_error"  # non-zero exit status (an exception, sys.exit(1), ...)
    MEMORY = "memory"  # MemoryError under the address-space limit
    CPU_TIMEOUT = "cpu_timeout"  # killed at the CPU-time limit
    WALL_TIMEOUT = "wall_timeout"  # killed at the wall-clock limit (sleeping, blocked)
    OUTPUT_LIMIT = "output_limit"  # wrote more than `output_bytes`
    SIGNALLED = "signalled"  # killed by another signal (segfault, abort, ...)
    PROTOCOL = "protocol"  # broke the call protocol (forged or oversized frames)


@dataclass(frozen=True)
class ExecResult:
    """What happened to one job. `stdout` is capped at the output limit."""

    outcome: Outcome
    exit_code: int | None
    signal: int | None
    stdout: str
    stderr: str
    truncated: bool
    cpu_seconds: float | None
    wall_seconds: float
    max_rss_kb: int | None
    isolation: str

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK

    def reason(self) -> str:
        """One line for reports: the outcome and its evidence."""
        if self.outcome is Outcome.RUNTIME_ERROR:
            tail = self.stderr.strip().splitlines()[-1:] or [""]
            return f"exit status {self.exit_code}: {tail[0][:200]}"
        if self.outcome is Outcome.SIGNALLED:
            return f"killed by signal {self.signal}"
        return self.outcome.value

    def to_info(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "cpu_seconds": None if self.cpu_seconds is None else round(self.cpu_seconds, 4),
            "wall_seconds": round(self.wall_seconds, 4),
            "max_rss_kb": self.max_rss_kb,
            "stderr": self.stderr[-500:],
            "truncated": self.truncated,
        }


def classify(report: dict[str, Any], limits: Limits, isolation: str) -> ExecResult:
    """Turn the server's `result` frame into an `ExecResult` (raises SandboxError on a fault)."""
    if report.get("fault"):
        raise SandboxError(f"sandbox set-up failed inside the worker: {report['fault'][-800:]}")
    wait = report.get("wait") or {}
    status = wait.get("status")
    cpu = wait.get("cpu")
    killed_for = report.get("killed_for")
    code = sig = None
    if isinstance(status, int):
        if os.WIFEXITED(status):
            code = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
    stderr = str(report.get("stderr", ""))
    if killed_for in ("wall", "host", "host closed"):
        outcome = Outcome.WALL_TIMEOUT
    elif killed_for == "output":
        outcome = Outcome.OUTPUT_LIMIT
    elif killed_for:
        outcome = Outcome.PROTOCOL
    elif sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu is not None and cpu >= limits.cpu_seconds * 0.9):
        outcome = Outcome.CPU_TIMEOUT
    elif sig is not None or status is None:
        outcome = Outcome.SIGNALLED
    elif code == 0:
        outcome = Outcome.OK
    elif "MemoryError" in stderr[-600:]:
        outcome = Outcome.MEMORY
    else:
        outcome = Outcome.RUNTIME_ERROR
    return ExecResult(
        outcome, code, sig, str(report.get("stdout", "")), stderr, bool(report.get("truncated")),
        cpu, float(report.get("wall", 0.0)), wait.get("maxrss_kb"), isolation,
    )  # fmt: skip
