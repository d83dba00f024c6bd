"""Run candidate reward code in the sandbox on every transition of a task, in one batch.

The candidate is loaded as a module in a fresh sandboxed child (`SandboxPool.session`) and a
small harness appended to it calls `reward(obs, action, next_obs, info)` on each transition
and sends the values back as plain builtins. Everything that comes back is checked here, on
the trusted side: one value per transition, each a number or a dict of named numbers with the
same names everywhere, all finite. The harness shares the candidate's process, so hostile
code can change what it sends, but only ever its own rewards: the host never trusts a value
it has not checked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewardlab.errors import CandidateError, RewardCodeFailed
from rewardlab.sandbox import Limits, Outcome, SandboxPool
from rewardlab.sandbox.session import SessionEnded

__all__ = ["DEFAULT_LIMITS", "RewardTable", "evaluate_candidate"]

#: one candidate gets this much for its whole batch (the office world has 1,728 transitions;
#: a reasonable reward takes well under a second of CPU for all of them)
DEFAULT_LIMITS = Limits(cpu_seconds=4.0, wall_seconds=20.0, memory_bytes=512 << 20, processes=8, output_bytes=64 << 10)
MAX_COMPONENTS = 16

# Appended to the candidate: runs inside the sandbox, where rewardlab is not importable.
_HARNESS = '''

def rewardlab_harness_run(transitions):
    values = []
    for obs, action, next_obs, info in transitions:
        try:
            values.append(reward(obs, action, next_obs, info))
        except BaseException as exc:
            return {"raised": type(exc).__name__, "message": str(exc)[:300], "at": len(values)}
    return {"values": values}
'''


@dataclass(frozen=True)
class RewardTable:
    """A candidate's reward on every transition: `total` (P, A) and each component (P, A).

    A candidate that returns a plain number has one component, `reward`.
    """

    total: np.ndarray
    components: Mapping[str, np.ndarray]


def evaluate_candidate(
    code: str,
    transitions: Sequence[tuple[Any, int, Any, Any]],
    shape: tuple[int, int],
    pool: SandboxPool,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> RewardTable:
    """The candidate's `RewardTable` over `transitions` (ordered `p * A + a`, P * A of them).

    Raises:
        RewardCodeFailed: `kind` is `load_error`, `raised`, `timeout`, `memory`, `crashed`,
            `bad_return` or `non_finite`; the message names the transition when there is one.
        SandboxError: the sandbox itself could not run (not the candidate's fault).
    """
    try:
        with pool.session(code + _HARNESS, limits=limits, module_name="candidate") as session:
            answer = session.call("rewardlab_harness_run", [list(t) for t in transitions])
    except SessionEnded as ended:
        raise _ended(ended) from None
    except CandidateError as exc:  # the module failed to load, or the harness itself was broken
        text = str(exc)
        kind = "memory" if "MemoryError" in text else "load_error" if getattr(exc, "remote_type", "") == "LoadError" else "crashed"
        raise RewardCodeFailed(kind, f"the code did not load: {text[-400:]}") from None
    return _table(answer, transitions, shape)


def _ended(ended: SessionEnded) -> RewardCodeFailed:
    outcome = ended.result.outcome
    if outcome in (Outcome.CPU_TIMEOUT, Outcome.WALL_TIMEOUT):
        return RewardCodeFailed("timeout", f"stopped at the time limit ({outcome.value}) {ended.stage}")
    if outcome is Outcome.MEMORY:
        return RewardCodeFailed("memory", f"ran out of memory {ended.stage}")
    return RewardCodeFailed("crashed", f"the sandboxed program ended {ended.stage}: {ended.result.reason()}")


def _where(transitions: Sequence[tuple[Any, int, Any, Any]], i: int) -> str:
    obs, action, next_obs, info = transitions[i]
    return f"obs={obs}, action={action}, next_obs={next_obs}, info={info}"


def _table(answer: Any, transitions: Sequence[tuple[Any, int, Any, Any]], shape: tuple[int, int]) -> RewardTable:
    if not isinstance(answer, dict):
        raise RewardCodeFailed("bad_return", "the sandbox sent back something that is not a result")
    if "raised" in answer:
        at = answer.get("at")
        where = f" on {_where(transitions, at)}" if isinstance(at, int) and 0 <= at < len(transitions) else ""
        kind = "memory" if answer["raised"] == "MemoryError" else "raised"
        raise RewardCodeFailed(kind, f"reward raised {answer['raised']}: {answer.get('message', '')}{where}")
    values = answer.get("values")
    if not isinstance(values, list) or len(values) != len(transitions):
        raise RewardCodeFailed("bad_return", f"expected {len(transitions)} values, got {type(values).__name__}")
    names = _component_names(values[0] if values else 0.0)
    columns = np.zeros((len(names), len(values)))
    for i, value in enumerate(values):
        parts = {"reward": value} if names == ("reward",) else value
        if not isinstance(parts, dict) or set(parts) != set(names):
            raise RewardCodeFailed("bad_return", f"reward must return the same components {list(names)} on every "
                                   f"transition; got {_short(value)} on {_where(transitions, i)}")  # fmt: skip
        for j, name in enumerate(names):
            x = parts[name]
            if type(x) not in (int, float, bool):
                raise RewardCodeFailed("bad_return", f"component {name!r} is {_short(x)}, not a number, on {_where(transitions, i)}")
            # the magnitude first: an int like 10**400 is exact here but has no float (OverflowError)
            if abs(x) > 1e12 or not math.isfinite(x):
                raise RewardCodeFailed("non_finite", f"component {name!r} is {_short(x)} on {_where(transitions, i)}")
            columns[j, i] = x
    components = {name: columns[j].reshape(shape) for j, name in enumerate(names)}
    return RewardTable(columns.sum(axis=0).reshape(shape), components)


def _component_names(first: Any) -> tuple[str, ...]:
    if type(first) in (int, float, bool):
        return ("reward",)
    if not isinstance(first, dict) or not first:
        raise RewardCodeFailed("bad_return", f"reward must return a number or a dict of named numbers; got {_short(first)}")
    names = tuple(first)
    if len(names) > MAX_COMPONENTS or not all(isinstance(n, str) and 0 < len(n) <= 40 for n in names):
        raise RewardCodeFailed("bad_return", f"components must be at most {MAX_COMPONENTS} names of 1-40 characters")
    return names


def _short(value: Any) -> str:
    if type(value) is int and value.bit_length() > 256:  # repr refuses ints past 4300 digits
        return f"an int of {value.bit_length()} bits"
    return repr(value)[:120]
