"""Every exception rewardlab raises, under one root.

    RewardLabError                 exit code 1 unless stated
    ├── UsageError                 exit code 2: a CLI call that cannot be understood
    ├── SpecError                  a reward spec that cannot be built (carries every problem)
    │   └── UnknownRewardError     a `use = "..."` name that is not registered
    ├── FormulaError               a `formula = "..."` that cannot be parsed or evaluated
    ├── RegistryError              registering a name twice, a broken entry point or registration file
    ├── DependencyError            an optional dependency is not installed; names the extra (also an ImportError)
    ├── ConfigError                a constructor or function argument that cannot be used (a ValueError)
    │   ├── ConfigTypeError        ... because it has the wrong type (also a TypeError)
    │   └── MissingWeightsError    ... a model checkpoint without weights its class needs (a head)
    ├── ArrayError                 an array argument with a wrong shape, dtype or mask (names it)
    │   └── NonFiniteError         NaN or inf where a finite number is needed (shape, credit)
    ├── InputError                 a data row or file that cannot be read (names file and line)
    │   ├── SampleFieldError       a row field that breaks `Sample`'s rules (names the field)
    │   └── ModelNotFoundError     a Hugging Face model that is neither a directory nor in the local cache
    ├── NestingError               JSON nested too deeply for the parser (a ValueError)
    ├── MappingError               a trainer's request whose columns do not line up (a ValueError)
    │   └── GroupSplitError        a group reward's group cannot be kept in one batch or request
    ├── ParseFailure               a maths answer that latex2sympy cannot parse (a ValueError)
    ├── NoTransitionError          a reward machine with no edge for the labels (`no_match="error"`)
    ├── ScoringError               raised *inside* a reward to return a typed error result
    ├── ExecutionError             the computation broke down, not the caller's input: retry or report it
    │   ├── RunnerError            the worker pool itself failed (not a single sample)
    │   │   ├── SandboxError       the sandbox could not start or broke down
    │   │   ├── WorkerCrashed      a sympy worker process died (also a RuntimeError)
    │   │   └── BackendError       a served reward's executor failed for a whole batch
    │   ├── CandidateError         the sandboxed program itself raised (see `sandbox.session`)
    │   ├── EncodeError            a value that may not cross the sandbox boundary
    │   ├── ProtocolError          a malformed frame between host and sandbox
    │   ├── BuildTooLarge          a compile job built more than a build may hold (a ValueError)
    │   ├── TrainingError          training a reward model cannot go on (NaN loss, no data)
    │   └── RewardCodeError        reward code written by an author (`rewardlab.author`) cannot be used
    │       ├── RewardCodeRejected ... it fails the static checks before it runs (names the check and line)
    │       └── RewardCodeFailed   ... it failed in the sandbox (load error, raised, non-finite, timeout)
    ├── ServiceError               an HTTP service (a reward server, a generation endpoint) refused or failed
    │   ├── Overloaded             a served reward's queue is full (HTTP 429 + Retry-After)
    │   ├── ApiError               an HTTP error the server sends, with a stable `code`
    │   ├── ServerError            the client's view: the server refused or could not be reached
    │   └── GenerationError        a generation endpoint for test-time search failed or answered nonsense
    └── MissingReferenceWarning    a warning (also a UserWarning): completions scored without a reference

The families are what a caller catches: `SpecError`/`ConfigError`/`InputError` (fix the spec,
the argument, the data), `ExecutionError` (the machinery broke: retry, or report a bug),
`ServiceError` (a remote service: back off and retry), `DependencyError` (install the extra).

Outside the tree on purpose: `rewardlab.sandbox.session.SessionEnded` derives from `BaseException` so
that a test harness's `except Exception` inside a verifier cannot swallow the end of a sandboxed
program.

The classes marked "a ValueError" / "a TypeError" also derive from that builtin, so callers that
caught the builtin before a class moved here keep working.

A wrong answer is never an exception: it is an `ok` result with a low score. A reward that
cannot be computed raises `ScoringError` (or any exception) and the caller turns it into an
`error` result with a `RewardError` value; nothing becomes a silent 0.

This module imports nothing from the rest of the package, so `rewardlab.core` can use it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ApiError",
    "ArrayError",
    "BackendError",
    "BuildTooLarge",
    "CandidateError",
    "ConfigError",
    "ConfigTypeError",
    "DependencyError",
    "EncodeError",
    "ExecutionError",
    "FormulaError",
    "GenerationError",
    "GroupSplitError",
    "InputError",
    "MappingError",
    "MissingReferenceWarning",
    "MissingWeightsError",
    "ModelNotFoundError",
    "NestingError",
    "NoTransitionError",
    "NonFiniteError",
    "Overloaded",
    "ParseFailure",
    "ProtocolError",
    "RegistryError",
    "RewardCodeError",
    "RewardCodeFailed",
    "RewardCodeRejected",
    "RewardLabError",
    "RunnerError",
    "SampleFieldError",
    "SandboxError",
    "ScoringError",
    "ServerError",
    "ServiceError",
    "SpecError",
    "SpecProblem",
    "TrainingError",
    "UnknownRewardError",
    "UsageError",
    "WorkerCrashed",
]


class RewardLabError(Exception):
    """Root of every rewardlab exception. `exit_code` is what the CLI exits with."""

    exit_code: int = 1

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its state, not by calling `__init__` again with the formatted message
        # (which would prefix the source twice, or miss keyword arguments), so an error
        # survives a trip to a worker process unchanged.
        return (_restore, (type(self), self.args, dict(self.__dict__)))


def _restore(cls: type[RewardLabError], args: tuple[Any, ...], state: dict[str, Any]) -> RewardLabError:
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


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


class ModelNotFoundError(InputError):
    """A model id that is not a local directory and not in the local Hugging Face cache.

    Rewards never download at run time; the message says how to fetch the model once.
    """

    def __init__(self, model: str, *, cache: str, revision: str | None = None):
        pinned = f" --revision {revision}" if revision else ""
        super().__init__(
            f"model {model!r} is not a local directory and not in the Hugging Face cache {cache}; "
            f"rewardlab never downloads at run time: fetch it once with `hf download {model}{pinned}` "
            "(or `huggingface-cli download`, same arguments), set HF_HOME to the cache that holds it, "
            "or pass the model's directory",
            source=model,
        )
        self.model = model
        self.cache = cache


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


class DependencyError(RewardLabError, ImportError):
    """An optional dependency is not installed; the message says which extra provides it.

    Attributes:
        needed_by: what needs it (a reward name, a command, a module).
        modules: the import names that are missing (`sympy`).
        extras: rewardlab's extras that provide them (`math`), empty when none does.
        install: the command that installs them (`pip install 'rewardlab[math]'`, quoted so that
            zsh does not expand the brackets).

    Also an `ImportError`, so `except ImportError` around an optional feature keeps working.
    `rewardlab._lazy.require` raises it; results of a reward that hits it carry the kind
    `dependency`.
    """

    def __init__(self, needed_by: str, modules: Sequence[str] = (), extras: Sequence[str] = ()):
        self.needed_by = needed_by
        self.modules = tuple(modules)
        self.extras = tuple(extras)
        if self.extras:
            self.install = f"pip install 'rewardlab[{','.join(self.extras)}]'"
        else:
            self.install = "pip install " + " ".join(self.modules)
        names = ", ".join(self.modules) or "an optional dependency"
        super().__init__(f"{needed_by} needs {names} (not installed): {self.install}", name=self.modules[0] if self.modules else None)


class ScoringError(RewardLabError):
    """Raise inside a reward to report *why* it could not compute a score.

    `kind` is one of `rewardlab.core.ErrorKind`'s values (`parse`, `timeout`, `invalid_input`,
    `sandbox`, ...); the caller turns it into `RewardResult.failure(kind, message)`.
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class ExecutionError(RewardLabError):
    """The computation broke down (a worker, the sandbox, training, authored code), not because
    of the caller's input: retry, or report it."""


class ServiceError(RewardLabError):
    """An HTTP service (a reward server, a generation endpoint) refused, is overloaded or failed."""


class RunnerError(ExecutionError):
    """The worker pool cannot run at all (e.g. workers die on start-up)."""


class ConfigError(RewardLabError, ValueError):
    """A constructor or function argument with a value that cannot be used.

    The message names the argument and says what is allowed (`timeout must be > 0, got -1`).
    Also a `ValueError`, so callers that catch the builtin keep working.
    """


class ConfigTypeError(ConfigError, TypeError):
    """An argument of a type that cannot be used; also a `TypeError`."""


class MissingWeightsError(ConfigError):
    """A checkpoint that lacks weights its model class needs, typically the scoring head: a base
    encoder or a policy (causal-LM) checkpoint loaded as a reward model. transformers would fill
    them with random values, so every score would be noise that differs in every process.

    `missing` names the weights (transformers' `missing_keys` and shape-mismatched keys).
    """

    def __init__(self, model: str, model_class: str, missing: Sequence[str], *, hint: str = ""):
        shown = ", ".join(list(missing)[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        super().__init__(f"model {model!r} has no trained weights for {shown} of {model_class}: transformers would "
                         f"initialise them at random, so every score would be noise{hint}")
        self.model = model
        self.model_class = model_class
        self.missing = tuple(missing)


class FormulaError(RewardLabError):
    """A formula that cannot be parsed, names an unknown variable, or fails at evaluation."""


class NestingError(RewardLabError, ValueError):
    """A JSON document nested too deeply for the parser (its stack would overflow)."""


class MappingError(RewardLabError, ValueError):
    """A trainer's request that cannot be mapped to samples (lists of different lengths, ...)."""


class GroupSplitError(MappingError):
    """A group reward's group cannot be kept in one piece (a request, a trainer's call): scoring
    it in parts would silently vote on a part of it, so nothing is scored."""


class ParseFailure(RewardLabError, ValueError):
    """latex2sympy could not parse the answer."""


class NoTransitionError(RewardLabError):
    """No edge matched the labels and the machine's policy is `no_match = "error"`."""


class TrainingError(ExecutionError):
    """Training cannot go on (a NaN loss, no usable data); the message says what to change."""


class CandidateError(ExecutionError):
    """The sandboxed function raised; `remote_type` is the name of its exception class."""

    remote_type: str = "Exception"


class EncodeError(ExecutionError):
    """A value that may not leave the sandbox (not a plain builtin, too deep or too large)."""


class ProtocolError(ExecutionError):
    """A frame that is malformed, too large, or not what the protocol expects."""


class SandboxError(RunnerError):
    """The sandbox could not start or broke down (not a failing program)."""


class BuildTooLarge(ExecutionError, ValueError):
    """A compile job built more files or bytes than a build may hold (the program's doing)."""


class WorkerCrashed(RunnerError, RuntimeError):
    """The worker process died (or failed to start) while handling a call."""


class BackendError(RunnerError):
    """The executor failed as a whole (not one sample): the batch has no results."""


class Overloaded(ServiceError):
    """The reward's queue is full; retry after `retry_after` seconds."""

    def __init__(self, reward: str, queued: int, limit: int, retry_after: float):
        super().__init__(
            f"reward {reward!r} has {queued} samples queued (limit {limit}); retry after {retry_after:.0f}s "
            "or send smaller batches"
        )
        self.retry_after = retry_after


class ApiError(ServiceError):
    """An HTTP error with a stable machine-readable `code` (see `serve.schemas.ErrorResponse`)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        details: Sequence[Any] = (),
        headers: Mapping[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = list(details)
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        """The JSON error body: `{"error": {"code", "message", "details"}}`."""
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class ServerError(ServiceError):
    """The server refused a request, or could not be reached after every retry.

    Attributes:
        status: HTTP status (0 when no reply was received).
        code: the server's error code (``unknown_reward``, ``overloaded``, ...) or ``unreachable``.
        details: the server's details list.
    """

    def __init__(self, status: int, code: str, message: str, details: Sequence[Any] = ()):
        super().__init__(f"reward server: {code} ({status}): {message}" if status else f"reward server: {message}")
        self.status = status
        self.code = code
        self.details = list(details)


class GenerationError(ServiceError):
    """A model endpoint used to generate steps for search failed (after its retries) or sent a
    reply that is not a completions object; the message names the endpoint and what to check."""


class RewardCodeError(ExecutionError):
    """Reward code written by an author (a language model, a template) cannot be used.

    `kind` is a stable machine-readable name of what went wrong (the candidate's fate in the
    records of `rewardlab.author`); the message says what happened and where.
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class RewardCodeRejected(RewardCodeError):
    """The code fails a static check before it runs (syntax, or a node, name, attribute or import
    off the allow-lists, a dunder, its size, the `reward` signature); `line` is 1-based or None."""

    def __init__(self, kind: str, message: str, *, line: int | None = None):
        super().__init__(kind, f"line {line}: {message}" if line is not None else message)
        self.line = line


class RewardCodeFailed(RewardCodeError):
    """The code failed inside the sandbox: it did not load, raised, returned a non-finite or
    malformed value, or was stopped at a limit (`kind`: load_error, raised, non_finite,
    bad_return, timeout, memory, crashed)."""


class MissingReferenceWarning(RewardLabError, UserWarning):
    """Completions were scored without a reference, so a component could not compare.

    A warning, not raised: `warnings.warn` it; it is also a `UserWarning` so the standard
    filters apply.
    """
