"""The `Reward` protocol, a base class that gives it for free, and `@reward` for functions.

A Reward has a `name`, a declared `range`, and scores samples one at a time or in batches.
Anything that raises inside `score` becomes an `error` result (never a 0): `ScoringError`
keeps its kind, anything else is a `crash` with the exception's type and message.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from rewardlab._lazy import dependency_error
from rewardlab.core.numbers import json_float
from rewardlab.core.result import ErrorKind, RewardResult, Status
from rewardlab.core.sample import JSON, Sample, content_hash
from rewardlab.errors import ConfigTypeError, ScoringError

Range = tuple[float, float]
UNBOUNDED: Range = (-math.inf, math.inf)

#: What a group reward groups samples by: their `group` id, or their prompt text.
GroupKey = Literal["group", "prompt"]


def group_id(sample: Sample, key: GroupKey) -> str | None:
    """The id of `sample`'s group under `key` (None: the sample has no group under it)."""
    return sample.prompt_text if key == "prompt" else sample.group


@runtime_checkable
class ComponentObserver(Protocol):
    """Told by an observed reward how long each call of one of its parts took (see
    `Reward.observed`; `rewardlab.compose.observer.ComponentTimes` keeps what it is told)."""

    def observe(self, component: str, seconds: float, samples: int) -> None:
        """`component` scored `samples` samples in `seconds` (one `score` or `score_batch` call:
        a batched reward, e.g. a model, cannot be timed per sample)."""


@runtime_checkable
class Reward(Protocol):
    """What every reward, built-in, learned, remote or composite, looks like.

    Besides the members below, a reward may declare four capabilities. `BaseReward` declares
    them with their defaults; a reward that implements only this protocol gets the same
    defaults, read through the functions of the same names, which are the one place the
    runner, the server and the adapters ask (never ``getattr`` or a type test of their own):

    * ``group_keys: frozenset[GroupKey]`` — what a group reward groups by (`group_keys`;
      default: empty, every sample is scored on its own).
    * ``spec_hash: str | None`` — the hash stamped on its results (`spec_hash`; default:
      ``None``, hashed from `describe()`; `compose.build` sets the spec's).
    * ``batches_in_process: bool`` — it batches a loaded model in this process, so it runs
      here in whole batches, not in worker processes (`batches_in_process`; default: False).
    * ``observer`` and ``observed(observer)`` — a copy that tells an observer how long each
      of its parts takes (`observer_of`, `observed`; default: no parts, nothing to tell, the
      reward itself). Composites time their components.
    """

    name: str
    range: Range

    def score(self, sample: Sample) -> RewardResult:
        """Score one sample. Never raises for a bad sample: returns an `error` result."""
        ...

    def score_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        """Score many samples; exactly one result per sample, in order."""
        ...

    async def ascore_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        """Async variant of `score_batch`."""
        ...

    def describe(self) -> dict[str, JSON]:
        """JSON description of this reward and its parameters (hashed into `spec_hash`)."""
        ...


class BaseReward:
    """Implements the protocol around one method, `compute(sample) -> RewardResult | float`.

    Subclasses set `name` and `range` (class or instance attributes) and override `compute`;
    batch-friendly rewards may override `compute_batch`. Exceptions and invalid outputs are
    turned into typed `error` results here, once, for every reward.

    A reward's parameters are declared once, as the keyword arguments of its `__init__`: the
    registry checks a spec's `params` and `rewardlab list-rewards` shows them from that
    signature, and `params` (what `describe()` shows and `spec_hash` hashes) is recorded from
    the same call, defaults filled in (the way scikit-learn's `get_params` reads an estimator's
    `__init__`). Arguments that are not JSON values (another reward, a client, a callable) are
    collaborators, not parameters, and are left out. A reward that resolves a parameter to a
    more telling value (a default order spelled out) replaces that entry after recording:
    ``self.params = {**self.params, "priority": list(order)}``.

    Examples:
        >>> class Short(BaseReward):
        ...     name = "demo.short"
        ...     def __init__(self, *, max_chars: int = 20, unit: str = "chars"):
        ...         self.max_chars = max_chars
        ...     def compute(self, sample):
        ...         return len(sample.response_text) <= self.max_chars
        >>> Short(max_chars=5).params
        {'max_chars': 5, 'unit': 'chars'}
    """

    name: str = "reward"
    range: Range = UNBOUNDED
    #: parameters shown by `describe()` and hashed into the spec hash (recorded from `__init__`)
    params: Mapping[str, JSON] = {}

    # -- capabilities (see `Reward`), with their defaults ----------------------------------
    #: what a group reward groups by (empty: each sample on its own)
    group_keys: frozenset[GroupKey] = frozenset()
    #: the hash stamped on results (None: hashed from `describe()`)
    spec_hash: str | None = None
    #: a loaded model batched in this process: run here, whole batches, never in workers
    batches_in_process: bool = False
    #: told how long each part takes (see `observed`); not part of `describe()`
    observer: ComponentObserver | None = None

    def observed(self, observer: ComponentObserver | None) -> Reward:
        """This reward, telling `observer` how long each of its parts takes. A reward without
        parts has nothing to tell, so the default is the reward itself; composites return an
        observed copy."""
        return self

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _recording_params(cls.__dict__["__init__"])  # type: ignore[method-assign]

    def compute(self, sample: Sample) -> RewardResult | float | bool | None:
        raise NotImplementedError

    def compute_batch(self, samples: Sequence[Sample]) -> Sequence[RewardResult | float | bool | None]:
        return [self._safe_compute(s) for s in samples]

    # -- the protocol ----------------------------------------------------------------------
    def score(self, sample: Sample) -> RewardResult:
        try:
            output = self.compute(sample)
        except Exception as exc:
            return crash_result(exc)
        if type(output) is RewardResult and output.status is Status.OK:  # the common case
            lo, hi = self.range
            if lo - 1e-9 <= output.score <= hi + 1e-9:  # type: ignore[operator]
                return output
        return self._check(output)

    def score_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        try:
            outputs = list(self.compute_batch(samples))
        except Exception as exc:  # a vectorised compute failed as a whole: say so per row
            return [crash_result(exc)] * len(samples)
        if len(outputs) != len(samples):
            msg = f"{self.name}: compute_batch returned {len(outputs)} results for {len(samples)} samples"
            return [RewardResult.failure(ErrorKind.INVALID_OUTPUT, msg)] * len(samples)
        return [self._check(o) for o in outputs]

    async def ascore_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return await asyncio.to_thread(self.score_batch, samples)

    def describe(self) -> dict[str, JSON]:
        return {"use": self.name, "params": dict(self.params)}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})" if args else f"{type(self).__name__}()"

    # -- internals -----------------------------------------------------------------------
    def _safe_compute(self, sample: Sample) -> RewardResult | float | bool | None:
        try:
            return self.compute(sample)
        except Exception as exc:
            return crash_result(exc)

    def _check(self, output: RewardResult | float | bool | None) -> RewardResult:
        return coerce_output(output, self.name, self.range)


def _recording_params(init: Callable[..., None]) -> Callable[..., None]:
    """`init`, recording its JSON-valued arguments (defaults applied) as `self.params` first.

    Only the outermost `__init__` of a call records (a subclass's own signature is the one its
    users and the registry see); what `init` then assigns to `self.params` wins.
    """
    signature = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self: BaseReward, *args: Any, **kwargs: Any) -> None:
        if "params" not in self.__dict__:
            try:
                bound = signature.bind(self, *args, **kwargs)
            except TypeError:  # a wrong call: let `init` raise its own error
                pass
            else:
                bound.apply_defaults()
                self.params = _json_params(signature, bound.arguments)
        init(self, *args, **kwargs)

    return __init__


def _json_params(signature: inspect.Signature, arguments: Mapping[str, Any]) -> dict[str, JSON]:
    """The JSON-valued arguments after `self`, `**kwargs` spread, paths as strings, tuples as lists."""
    out: dict[str, JSON] = {}
    for param in list(signature.parameters.values())[1:]:
        if param.name not in arguments or param.kind is param.VAR_POSITIONAL:
            continue
        value = arguments[param.name]
        for name, item in (value.items() if param.kind is param.VAR_KEYWORD else [(param.name, value)]):
            if isinstance(item, os.PathLike):
                item = os.fspath(item)
            if _is_json(item):
                out[name] = _lists(item)
    return out


def _lists(value: Any) -> Any:
    """`value` with its tuples as lists, as it reads back from JSON."""
    if isinstance(value, list | tuple):
        return [_lists(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _lists(v) for k, v in value.items()}
    return value


def _is_json(value: object) -> bool:
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list | tuple):
        return all(_is_json(v) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def crash_result(exc: BaseException) -> RewardResult:
    """The `error` result for an exception raised inside a reward."""
    if isinstance(exc, ScoringError):
        try:
            kind = ErrorKind(exc.kind)
        except ValueError:
            kind = ErrorKind.CRASH
        return RewardResult.failure(kind, exc.message)
    if isinstance(exc, TimeoutError):
        return RewardResult.failure(ErrorKind.TIMEOUT, str(exc) or "timed out")
    if isinstance(exc, ImportError):
        missing_extra = dependency_error(exc, "this reward")
        if missing_extra is not None:
            return RewardResult.failure(ErrorKind.DEPENDENCY, str(missing_extra))
        return RewardResult.failure(ErrorKind.DEPENDENCY, f"{exc}; install the package that provides it")
    return RewardResult.failure(ErrorKind.CRASH, f"{type(exc).__name__}: {exc}")


def coerce_output(output: object, name: str, range_: Range = UNBOUNDED) -> RewardResult:
    """Turn what a reward returned into a `RewardResult`, rejecting NaN and out-of-range scores."""
    if isinstance(output, RewardResult):
        result = output
    elif output is None:
        return RewardResult.skip(f"{name} returned None")
    elif isinstance(output, bool | int | float):
        value = float(output) if isinstance(output, bool) else json_float(output)
        if value is None or not math.isfinite(value):
            return RewardResult.failure(ErrorKind.INVALID_OUTPUT, f"{name} returned {output!r:.60}; expected a finite number")
        result = RewardResult.ok(value)
    else:
        return RewardResult.failure(
            ErrorKind.INVALID_OUTPUT,
            f"{name} returned {type(output).__name__}; expected a number, None or RewardResult",
        )
    lo, hi = range_
    if result.score is not None and not (lo - 1e-9 <= result.score <= hi + 1e-9):
        return RewardResult.failure(
            ErrorKind.INVALID_OUTPUT,
            f"{name} returned {result.score}, outside its declared range [{lo}, {hi}]",
            info=dict(result.info),
        )
    return result


class FunctionReward(BaseReward):
    """A plain function `fn(sample, **params)` as a Reward (what `@reward` builds)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        range: Range = UNBOUNDED,
        params: Mapping[str, JSON] | None = None,
    ):
        self.fn = fn
        self.name = name
        self.range = range
        self.params = dict(params or {})
        _check_params(fn, self.params, name)

    def compute(self, sample: Sample) -> RewardResult | float | bool | None:
        return self.fn(sample, **self.params)  # type: ignore[no-any-return]

    def __call__(self, **params: JSON) -> FunctionReward:
        """The same function with other parameters: `exact_len(max_tokens=100)`."""
        return FunctionReward(self.fn, name=self.name, range=self.range, params={**self.params, **params})

    def describe(self) -> dict[str, JSON]:
        # The code hash makes the spec hash change when the function's body changes.
        code = getattr(self.fn, "__code__", None)
        digest = ""
        if code is not None:
            body = code.co_code + repr((code.co_consts, code.co_names)).encode()
            digest = hashlib.blake2b(body, digest_size=8).hexdigest()
        return {"use": self.name, "params": dict(self.params), "code": digest}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"reward:{self.name}({args})"


def _check_params(fn: Callable[..., Any], params: Mapping[str, JSON], name: str) -> None:
    signature = inspect.signature(fn)
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    known = [p for p in list(signature.parameters)[1:]]
    unknown = [k for k in params if k not in known]
    if unknown and not accepts_any:
        raise ConfigTypeError(f"{name}: unknown parameter(s) {unknown}; known: {known}")


def reward(
    name: str | None = None,
    *,
    range: Range = UNBOUNDED,
    register: bool = False,
) -> Callable[[Callable[..., Any]], FunctionReward]:
    """Turn `fn(sample, **params) -> float | bool | None | RewardResult` into a Reward.

    Returning `None` gives a `skipped` result; raising gives an `error` result (use
    `rewardlab.errors.ScoringError(kind, message)` to choose the kind).

    Examples:
        >>> from rewardlab import reward, Sample
        >>> @reward("demo.short", range=(0, 1))
        ... def short(sample, *, max_chars=20):
        ...     return len(sample.response_text) <= max_chars
        >>> short.score(Sample(response="hi")).score
        1.0

    Args:
        name: dotted registry name; defaults to the function's `__name__`.
        range: declared `(low, high)`; a score outside it becomes an `invalid_output` error.
        register: also add it to the global registry under `name`.
    """

    def wrap(fn: Callable[..., Any]) -> FunctionReward:
        built = FunctionReward(fn, name=name or fn.__name__, range=range)
        if register:
            from rewardlab.core.registry import registry

            registry.register(built.name, built, overwrite=True)
        return built

    return wrap


def group_keys(reward_: object) -> frozenset[GroupKey]:
    """What `reward_` groups by; empty for a reward that scores every sample on its own.

    A *group reward* scores a sample against the other members of its group (majority vote,
    consensus, within-group weights) and declares it with a `group_keys` attribute. Whoever
    cuts a batch into pieces (the runner's pools, Ray, the server's batcher, the client) must
    keep every group in one `score_batch` call, or the group is silently scored on a part of it.
    Composites declare the union of their parts' keys.
    """
    return frozenset(getattr(reward_, "group_keys", ()))


def batches_in_process(reward_: object) -> bool:
    """Whether `reward_` batches a loaded model in this process (`model.hf`, `model.hf_prm`, or
    a composite with such a part): it is scored here, in whole batches, whatever `workers`."""
    return bool(getattr(reward_, "batches_in_process", False))


def observer_of(reward_: object) -> ComponentObserver | None:
    """The observer `reward_` reports its parts' times to (None: not observed)."""
    observer = getattr(reward_, "observer", None)
    return observer if isinstance(observer, ComponentObserver) else None


def observed(reward_: Reward, observer: ComponentObserver | None) -> Reward:
    """`reward_` telling `observer` how long each of its parts takes (`Reward.observed`); a
    reward that cannot be observed is returned as it is."""
    method = getattr(reward_, "observed", None)
    return method(observer) if callable(method) else reward_


def spec_hash(reward_: Reward) -> str:
    """The hash stamped on `reward_`'s results (`Stamp.spec_hash`).

    A reward built from a spec (`compose.build`) carries the hash of its validated spec as a
    `spec_hash` attribute; any other reward is hashed by its `describe()` output, so the same
    reward with the same parameters always gets the same hash.
    """
    own = getattr(reward_, "spec_hash", None)
    return own if isinstance(own, str) and own else content_hash(reward_.describe())

