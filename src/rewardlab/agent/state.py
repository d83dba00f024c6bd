"""Final-state rewards: predicates over a JSON state, and gold actions replayed as τ-bench does.

`agent.state` checks the trajectory's final ``state`` with a list of checks, each either a
predicate written as data (evaluated here: it is not code) or ``{"code": "def check(state): ..."}``
(code from the data: it runs in the sandbox, never in this process)::

    {"checks": [{"path": ["orders", "#W1", "status"], "op": "eq", "value": "cancelled"},
                {"path": "users.u1.balance", "op": "ge", "value": 10},
                {"code": "def check(state):\\n    return len(state['orders']) == 3", "name": "three"}]}

`agent.state_replay` is τ-bench's reward (`tau_bench/envs/base.py`, `calculate_reward`): the gold
actions are replayed on a copy of the initial state and the final states compared by hash; the
required ``outputs`` must appear in the assistant's text (case-insensitive, commas removed). The
candidate's final state is the trajectory's ``state`` when it has one, else its own tool calls
replayed on another copy (what τ-bench's environment did while the agent ran). The tools are
Python source from the data (``TOOLS = {name: fn}`` or module-level functions ``fn(state,
**kwargs)``; for SQLite, ``fn(conn, **kwargs)``), so the replay runs in the sandbox.

Files (an initial state, a SQLite database, tools source) are read only under the reward's
``state_dir``: a row cannot name a host path outside it.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from rewardlab.agent import _replay
from rewardlab.agent.tool_calls import trajectory_of
from rewardlab.core.result import RewardResult
from rewardlab.core.reward import BaseReward
from rewardlab.core.sample import Sample
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.sandbox import Limits, SandboxConfig, SandboxError, SandboxPool
from rewardlab.sandbox.session import CandidateError, SessionEnded

REPLAY_SOURCE = Path(_replay.__file__).read_text(encoding="utf-8")
_POOLS: dict[tuple[int, int, SandboxConfig], SandboxPool] = {}
_LOCK = threading.Lock()
_OPS = ("eq", "ne", "in", "not_in", "contains", "exists", "absent", "gt", "ge", "lt", "le", "len")
_MISSING: Any = object()


def _pool(size: int, config: SandboxConfig) -> SandboxPool:
    key = (os.getpid(), size, config)
    with _LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = SandboxPool(size, config)
        return pool


@atexit.register
def _close_pools() -> None:
    for (pid, *_), pool in list(_POOLS.items()):
        if pid == os.getpid():
            pool.close()


class _Sandboxed(BaseReward):
    """What both state rewards share: the sandbox settings and the files under `state_dir`."""

    def __init__(self, *, state_dir: str | None = None, cpu_seconds: float = 10.0, wall_seconds: float = 30.0, memory_mb: int = 1024,
                 workers: int = 2, isolation: Literal["auto", "bubblewrap", "rlimits"] = "auto"):  # fmt: skip
        self._dir = Path(state_dir).resolve() if state_dir else None
        if self._dir is not None and not self._dir.is_dir():
            raise ConfigError(f"state_dir {state_dir!r} is not a directory")
        self._limits = Limits(cpu_seconds=cpu_seconds, wall_seconds=wall_seconds, memory_bytes=memory_mb << 20)
        self._config = SandboxConfig(isolation=isolation, limits=self._limits)
        if not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"workers must be an integer >= 1, got {workers!r}")
        self._workers = workers

    def _file(self, name: Any, what: str) -> Path:
        if not isinstance(name, str) or not name:
            raise ScoringError("invalid_input", f"{what} must name a file")
        if self._dir is None:
            raise ScoringError("invalid_input", f"{what} names the file {name!r}: set the reward's state_dir to the directory that holds it")
        path = (self._dir / name).resolve()
        if not path.is_relative_to(self._dir) or not path.is_file():
            raise ScoringError("invalid_input", f"{what} {name!r} is not a file under state_dir {str(self._dir)!r}")
        return path

    def _call(self, function: str, *args: Any) -> Any:
        pool = _pool(self._workers, self._config)
        try:
            with pool.session(REPLAY_SOURCE, limits=self._limits, module_name=_replay.MODULE_NAME) as session:
                return session.call(function, *args)
        except CandidateError as exc:  # the data's code (tools, checks) raised while loading or running
            raise ScoringError("invalid_input", f"the state code from the data failed: {str(exc)[-500:]}") from None
        except SessionEnded as ended:
            kind = "timeout" if "timeout" in ended.result.outcome.value else "sandbox"
            raise ScoringError(kind, f"the state check's sandbox ended: {ended.result.reason()}") from None
        except SandboxError as exc:
            raise ScoringError("sandbox", str(exc)) from None


class StateChecks(_Sandboxed):
    """Checks over the trajectory's final JSON state; the score is the share that pass (or all-or-nothing).

    Args:
        all_or_nothing: 1.0 only when every check passes.
        cpu_seconds: CPU limit of the sandbox that runs code checks.
        wall_seconds: wall-clock limit of that sandbox.
        memory_mb: memory limit of that sandbox.
        workers: sandboxes kept warm.
        isolation: "auto", "bubblewrap" or "rlimits" (see `rewardlab.sandbox`).
    """

    name = "agent.state"
    range = (0.0, 1.0)

    def __init__(self, *, all_or_nothing: bool = False, cpu_seconds: float = 10.0, wall_seconds: float = 30.0,
                 memory_mb: int = 1024, workers: int = 2, isolation: Literal["auto", "bubblewrap", "rlimits"] = "auto"):  # fmt: skip
        super().__init__(cpu_seconds=cpu_seconds, wall_seconds=wall_seconds, memory_mb=memory_mb,
                         workers=workers, isolation=isolation)  # fmt: skip
        self._all = bool(all_or_nothing)

    def compute(self, sample: Sample) -> RewardResult:
        state = trajectory_of(sample).state
        if state is None:
            raise ScoringError("invalid_input", "agent.state needs the trajectory's final state (a 'state' column holding JSON)")
        checks = _checks(sample.reference)
        values = evaluate_checks(state, checks, self._call)
        components = {name: RewardResult.ok(v) for name, v in values.items()}
        passed = [v >= 1.0 for v in values.values()]
        score = float(all(passed)) if self._all else sum(values.values()) / len(values)
        return RewardResult.ok(score, components=components, info={"failed": [n for n, v in values.items() if v < 1.0]})


def _checks(reference: Any) -> list[Mapping[str, Any]]:
    checks = reference.get("checks") if isinstance(reference, Mapping) else reference
    if not isinstance(checks, list) or not checks or not all(isinstance(c, Mapping) for c in checks):
        raise ScoringError("invalid_input", "agent.state needs reference.checks: a non-empty list of check objects")
    return checks


def check_name(check: Mapping[str, Any], index: int) -> str:
    name = check.get("name")
    return name if isinstance(name, str) and name else f"check{index}"


def evaluate_checks(state: Any, checks: Sequence[Mapping[str, Any]], call: Any) -> dict[str, float]:
    """Each check's value in [0, 1] by name: data predicates here, code checks in one sandbox call."""
    values: dict[str, float] = {}
    code = [(check_name(c, i), c["code"]) for i, c in enumerate(checks) if "code" in c]
    for i, check in enumerate(checks):
        if "code" not in check:
            values[check_name(check, i)] = float(predicate(state, check, f"checks[{i}]"))
    if code:
        if not all(isinstance(source, str) for _, source in code):
            raise ScoringError("invalid_input", "a check's 'code' must be Python source defining check(state)")
        answers = call("rl_checks", state, [source for _, source in code])
        if not isinstance(answers, list) or len(answers) != len(code):
            raise ScoringError("sandbox", "the checks' sandbox answered a malformed list")
        failed = [f"{name}: {answer[1]}" for (name, _), answer in zip(code, answers, strict=True) if answer[0] != "ok"]
        if failed:  # a check that raised could not decide: the reward could not be computed
            raise ScoringError("crash", "state checks raised: " + "; ".join(failed)[:600])
        for (name, _), answer in zip(code, answers, strict=True):
            values[name] = min(max(float(answer[1]), 0.0), 1.0)
    return values


def predicate(state: Any, check: Mapping[str, Any], where: str) -> bool:
    """A check written as data: ``{"path", "op", "value"}`` (see `_OPS`)."""
    op = check.get("op", "eq")
    if op not in _OPS:
        raise ScoringError("invalid_input", f"{where}.op must be one of {list(_OPS)}, got {op!r}")
    found = lookup(state, check.get("path", []), where)
    if op == "exists":
        return found is not _MISSING
    if op == "absent":
        return found is _MISSING
    if found is _MISSING:
        return False
    expected = check.get("value")
    try:
        return _compare(op, found, expected)
    except TypeError:  # e.g. a string compared with a number: the state does not meet it
        return False


def _compare(op: str, found: Any, expected: Any) -> bool:
    if op == "eq":
        return bool(found == expected)
    if op == "ne":
        return bool(found != expected)
    if op in ("in", "not_in"):
        inside = isinstance(expected, list) and found in expected
        return inside if op == "in" else not inside
    if op == "contains":
        return isinstance(found, list | str | Mapping) and expected in found
    if op == "len":
        return isinstance(found, list | str | Mapping) and len(found) == expected
    if isinstance(found, bool) or not isinstance(found, int | float):
        return False
    return bool({"gt": found > expected, "ge": found >= expected, "lt": found < expected, "le": found <= expected}[op])


def lookup(state: Any, path: Any, where: str) -> Any:
    """The value at `path` (a list of keys and indices, or a dotted string); `_MISSING` if absent."""
    if isinstance(path, str):
        path = [p for p in path.split(".") if p] if path else []
    if not isinstance(path, list):
        raise ScoringError("invalid_input", f"{where}.path must be a list of keys or a dotted string")
    node = state
    for key in path:
        if isinstance(node, Mapping) and isinstance(key, str) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int | str) and str(key).lstrip("-").isdigit() and -len(node) <= int(key) < len(node):
            node = node[int(key)]
        else:
            return _MISSING
    return node


def json_state_hash(state: Any) -> str:
    """The hash `_replay.state_hash` gives inside the sandbox, computed here for a given state."""
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
