"""Every exception rewardlab raises, under one root.

    RewardLabError                 exit code 1 unless stated
    ├── UsageError                 exit code 2: a CLI call that cannot be understood
    ├── SpecError                  a reward spec that cannot be built (carries every problem)
    │   └── UnknownRewardError     a `use = "..."` name that is not registered
    ├── InputError                 a data row or file that cannot be read (names file and line)
    │   └── SampleFieldError       a row field that breaks `Sample`'s rules (names the field)
    ├── ArrayError                 an array argument with a wrong shape, dtype or mask (names it)
    │   └── NonFiniteError         NaN or inf where a finite number is needed (shape, credit)
    ├── RegistryError              registering a name twice, a broken entry point
    ├── ScoringError               raised *inside* a reward to return a typed error result
    └── RunnerError                the worker pool itself failed (not a single sample)

A wrong answer is never an exception: it is an `ok` result with a low score. A reward that
cannot be computed raises `ScoringError` (or any exception) and the caller turns it into an
`error` result with a `RewardError` value; nothing becomes a silent 0.

This module imports nothing from the rest of the package, so `rewardlab.core` can use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "ArrayError",
    "InputError",
    "NonFiniteError",
    "RegistryError",
    "RewardLabError",
    "RunnerError",
    "SampleFieldError",
    "ScoringError",
    "SpecError",
    "SpecProblem",
    "UnknownRewardError",
    "UsageError",
]


class RewardLabError(Exception):
    """Root of every rewardlab exception. `exit_code` is what the CLI exits with."""

    exit_code: int = 1


class UsageError(RewardLabError):
    """The command line cannot be understood; fix the arguments."""

    exit_code = 2


@dataclass(frozen=True)
class SpecProblem:
    """One problem in a spec: where (`spec key` like `reward.components[1].weight`) and what."""

    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class SpecError(RewardLabError):
    """A reward spec cannot be built. `problems` lists every problem found, not just the first."""

    def __init__(self, problems: Sequence[SpecProblem] | str, *, source: str | None = None):
        if isinstance(problems, str):
            problems = [SpecProblem("", problems)]
        self.problems: tuple[SpecProblem, ...] = tuple(problems)
        self.source = source
        where = f"{source}: " if source else ""
        lines = [f"{where}{p}" for p in self.problems]
        head = f"invalid reward spec ({len(lines)} problem{'s' if len(lines) != 1 else ''})"
        super().__init__(head + ":\n  " + "\n  ".join(lines))


class UnknownRewardError(SpecError):
    """A registry name that nobody registered; the message suggests close names."""

    def __init__(self, name: str, suggestions: Sequence[str] = (), *, location: str = ""):
        hint = f" (did you mean {', '.join(repr(s) for s in suggestions)}?)" if suggestions else ""
        msg = f"unknown reward {name!r}{hint}; `rewardlab list` shows every registered name"
        super().__init__([SpecProblem(location, msg)])
        self.name = name


class InputError(RewardLabError):
    """A data file or row that cannot be read. Names the source and the 1-based line/row."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        self.source = source
        self.line = line
        where = source or "<input>"
        if line is not None:
            where += f":{line}"
        super().__init__(f"{where}: {message}")
        self.reason = message


class SampleFieldError(InputError):
    """A row field that breaks `Sample.from_dict`'s rules; `field` is the row's column name."""

    def __init__(self, message: str, *, field: str, source: str | None = None, line: int | None = None):
        super().__init__(message, source=source, line=line)
        self.field = field


class ArrayError(RewardLabError):
    """An array argument (rewards, masks, token weights...) that cannot be used as given.

    `argument` names the offending parameter so the caller knows which input to fix.
    """

    def __init__(self, argument: str, message: str):
        super().__init__(f"{argument}: {message}")
        self.argument = argument
        self.reason = message


class NonFiniteError(ArrayError):
    """NaN or inf in an array where a finite number is needed; never propagated silently.

    Mark entries that could not be scored with `mask=False` instead of writing NaN into them.
    """


class RegistryError(RewardLabError):
    """A registration conflict or a third-party entry point that fails to load."""


class ScoringError(RewardLabError):
    """Raise inside a reward to report *why* it could not compute a score.

    `kind` is one of `rewardlab.core.ErrorKind`'s values (`parse`, `timeout`, `invalid_input`,
    `sandbox`, ...); the caller turns it into `RewardResult.failure(kind, message)`.
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class RunnerError(RewardLabError):
    """The worker pool cannot run at all (e.g. workers die on start-up)."""
