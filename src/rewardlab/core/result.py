"""`RewardResult`: a score, or the typed reason there is none.

A wrong answer is `ok` with a low score. A reward that could not be computed is `error` with a
`RewardError`. `skipped` means the reward deliberately did not apply (a failed gate, a `None`
returned by a function reward). None of them is ever turned into a 0 silently.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from rewardlab._version import __version__
from rewardlab.core.sample import JSON
from rewardlab.errors import ConfigError


class Status(StrEnum):
    """Whether a result carries a score."""

    OK = "ok"
    ERROR = "error"
    SKIPPED = "skipped"


class ErrorKind(StrEnum):
    """Why a reward could not be computed. Reports count errors by these kinds."""

    TIMEOUT = "timeout"  # the per-sample time budget ran out (worker killed)
    PARSE = "parse"  # the reference or the response could not be parsed
    CRASH = "crash"  # the reward raised, or its worker process died
    INVALID_INPUT = "invalid_input"  # malformed row, wrong types, missing fields
    INVALID_OUTPUT = "invalid_output"  # the reward returned NaN, a non-number, out of range
    SANDBOX = "sandbox"  # the sandbox could not start (not a failing program)
    UNSUPPORTED = "unsupported"  # the reward cannot decide this case
    DEPENDENCY = "dependency"  # an optional dependency is missing
    REMOTE = "remote"  # a remote service (judge, reward server) failed
    FORMULA = "formula"  # a combining formula failed (division by zero, log of 0)
    COMPONENT = "component"  # a component failed under `on_error = "fail"`


@dataclass(frozen=True, slots=True)
class RewardError:
    """A typed reason why no score could be computed."""

    kind: ErrorKind
    message: str

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "message": self.message}


@dataclass(frozen=True, slots=True)
class Stamp:
    """Where a number came from: the library version and the hash of the reward spec."""

    rewardlab_version: str
    spec_hash: str

    def to_dict(self) -> dict[str, str]:
        return {"rewardlab_version": self.rewardlab_version, "spec_hash": self.spec_hash}


@dataclass(frozen=True, slots=True)
class RewardResult:
    """The outcome of scoring one sample with one reward.

    Attributes:
        score: the reward; `None` unless `status` is `ok`.
        status: `ok`, `error` or `skipped`.
        components: results of the parts of a composite reward, by component name.
        steps: per-step rewards (process rewards), if the reward produces them.
        info: what was extracted, normalised, decided and why (JSON values).
        error: the typed reason, when `status` is `error`.
        stamp: version and spec hash, set when the result leaves the library.
        objectives: the reward vector of a spec that declares objectives, by objective name
            (`None` for an objective that could not be computed, see `compose.objectives`);
            `None` when the reward declares no objectives.
    """

    score: float | None
    status: Status = Status.OK
    components: Mapping[str, RewardResult] = field(default_factory=dict)
    steps: tuple[float, ...] | None = None
    info: Mapping[str, JSON] = field(default_factory=dict)
    error: RewardError | None = None
    stamp: Stamp | None = None
    objectives: Mapping[str, float | None] | None = None

    def __post_init__(self) -> None:
        _check(self.score, self.status, self.error)

    # -- constructors --------------------------------------------------------------------
    @classmethod
    def ok(
        cls,
        score: float,
        *,
        info: Mapping[str, JSON] | None = None,
        components: Mapping[str, RewardResult] | None = None,
        steps: tuple[float, ...] | None = None,
        objectives: Mapping[str, float | None] | None = None,
    ) -> RewardResult:
        """A computed score (a wrong answer is `ok` with a low score)."""
        value = float(score)
        if not math.isfinite(value):
            raise ConfigError(f"an ok result needs a finite score, got {score!r}")
        return _assemble(value, Status.OK, components or {}, steps, info or {}, None, None, objectives)

    @classmethod
    def failure(
        cls,
        kind: ErrorKind | str,
        message: str,
        *,
        info: Mapping[str, JSON] | None = None,
        components: Mapping[str, RewardResult] | None = None,
    ) -> RewardResult:
        """A reward that could not be computed, with its typed reason."""
        error = RewardError(ErrorKind(kind), message)
        return cls(None, Status.ERROR, components or {}, None, info or {}, error)

    @classmethod
    def skip(
        cls,
        reason: str,
        *,
        info: Mapping[str, JSON] | None = None,
        components: Mapping[str, RewardResult] | None = None,
    ) -> RewardResult:
        """The reward deliberately does not apply to this sample."""
        return cls(None, Status.SKIPPED, components or {}, None, {**(info or {}), "skip_reason": reason})

    # -- helpers -------------------------------------------------------------------------
    @property
    def is_ok(self) -> bool:
        return self.status is Status.OK

    def stamped(self, spec_hash: str) -> RewardResult:
        """This result with a `Stamp` of the current version and `spec_hash`."""
        return replace(self, stamp=stamp(spec_hash))

    def to_dict(self, *, copy: bool = True) -> dict[str, Any]:
        """JSON-ready dict (nested components included): the one encoding of a result, which
        the cache stores, the server sends and `from_dict` reads back.

        Args:
            copy: ``False`` shares `info` (when a dict) and `steps` (a tuple) with this result
                instead of copying them, for a dict that is encoded at once and dropped (the
                server's and the cache's hot path); do not change such a dict.
        """
        out: dict[str, Any] = {"score": self.score, "status": self.status._value_}
        if self.error is not None:
            out["error"] = self.error.to_dict()
        if self.components:
            out["components"] = {k: v.to_dict(copy=copy) for k, v in self.components.items()}
        if self.steps is not None:
            out["steps"] = list(self.steps) if copy else self.steps
        info = self.info
        if info:
            out["info"] = dict(info) if copy or type(info) is not dict else info
        if self.objectives is not None:
            out["objectives"] = dict(self.objectives)
        if self.stamp is not None:
            out["rewardlab_version"] = self.stamp.rewardlab_version
            out["spec_hash"] = self.stamp.spec_hash
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RewardResult:
        """Inverse of `to_dict`; `info` is used as given. This decodes every result a reward
        server's client receives, so it checks the rules of `__post_init__` itself, once.

        Raises:
            ValueError: an unknown status or error kind, or a row that breaks the rules.
            KeyError, TypeError: a row that is not shaped like `to_dict`'s output.
        """
        status = _STATUS.get(data.get("status", "ok")) or Status(data["status"])
        score, error_row = data.get("score"), data.get("error")
        error = None
        if error_row:
            error = RewardError(_KIND.get(error_row["kind"]) or ErrorKind(error_row["kind"]), str(error_row["message"]))
        _check(score, status, error)
        components = data.get("components")
        steps = data.get("steps")
        info = data.get("info")
        stamp_ = stamp(str(data["spec_hash"]), str(data.get("rewardlab_version", ""))) if "spec_hash" in data else None
        vector = data.get("objectives")
        return _assemble(
            score,
            status,
            {k: cls.from_dict(v) for k, v in components.items()} if components else {},
            tuple(float(x) for x in steps) if steps is not None else None,
            info if type(info) is dict else dict(info or {}),
            error,
            stamp_,
            _objectives(vector) if vector is not None else None,
        )


def _objectives(row: Mapping[str, Any]) -> dict[str, float | None]:
    """A decoded objective vector: each value a finite float or None (TypeError otherwise)."""
    if not isinstance(row, Mapping):
        raise TypeError(f"objectives must be an object of numbers, got {type(row).__name__}")
    out: dict[str, float | None] = {}
    for key, value in row.items():
        if value is not None:
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"objective {key!r} is {value!r}; an objective is a finite number or null")
        out[str(key)] = value
    return out


def _check(score: float | None, status: Status, error: RewardError | None) -> None:
    """The rules every result follows (a score exactly when ok, an error exactly when error)."""
    if status is Status.OK:
        if score is None or not math.isfinite(score):
            raise ConfigError(f"an ok result needs a finite score, got {score!r}")
        if error is not None:
            raise ConfigError("an ok result cannot carry an error")
    elif status is Status.ERROR:
        if error is None:
            raise ConfigError("an error result needs a RewardError saying why")
        if score is not None:
            raise ConfigError("an error result has no score")
    elif score is not None:
        raise ConfigError("a skipped result has no score")


_STATUS = {s.value: s for s in Status}
_KIND = {k.value: k for k in ErrorKind}
# Results from one reward share one stamp: a decoded batch does not build one per row.
_stamp = functools.lru_cache(maxsize=256)(Stamp)


def stamp(spec_hash: str, version: str = __version__) -> Stamp:
    """The stamp that traces a number to the reward that produced it: `version` (default: this
    library's) and `spec_hash`. The one way a stamp is made; rows that carry it as columns
    use `Stamp.to_dict` (``rewardlab_version``, ``spec_hash``, in that order)."""
    return _stamp(version, spec_hash)

# `ok` and `from_dict` check the rules above themselves and then set the slots through their
# descriptors, without `__init__`: a frozen slots dataclass sets each field through
# `object.__setattr__` and then runs `__post_init__` again, twice the time per result; results
# are built one per sample and per component, and through `__init__` `rewardlab score` of a
# 200,000-row file takes 10% longer (bench/RESULTS.md, "what the last two speed tricks are worth").
# Nothing outside this module may build a result this way.
_SLOTS = tuple(
    RewardResult.__dict__[name].__set__ for name in ("score", "status", "components", "steps", "info", "error", "stamp", "objectives")
)


def _assemble(
    score: float | None,
    status: Status,
    components: Mapping[str, RewardResult],
    steps: tuple[float, ...] | None,
    info: Mapping[str, JSON],
    error: RewardError | None,
    stamp: Stamp | None,
    objectives: Mapping[str, float | None] | None = None,
) -> RewardResult:
    """A `RewardResult` of values its caller has just checked with `_check`."""
    result = object.__new__(RewardResult)
    set_score, set_status, set_components, set_steps, set_info, set_error, set_stamp, set_objectives = _SLOTS
    set_score(result, score)
    set_status(result, status)
    set_components(result, components)
    set_steps(result, steps)
    set_info(result, info)
    set_error(result, error)
    set_stamp(result, stamp)
    set_objectives(result, objectives)
    return result
