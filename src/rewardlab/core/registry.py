"""Dotted names for rewards: `registry.create("text.exact", {"case_sensitive": True})`.

Three sources, looked up in this order:
1. rewards registered at run time (`registry.register`, `@reward(register=True)`);
2. rewardlab's built-ins, which each package declares in its own `_registry.py`
   (`REGISTRATION_FILE`: `"text.exact": ".text:ExactMatch"` in `rewardlab/verify/_registry.py`);
   core reads those files as text and imports a reward's module only when it is used, so
   `rewardlab list` does not import sympy or torch, and core names no package above it;
3. third-party packages, through the `rewardlab.rewards` entry-point group
   (`[project.entry-points."rewardlab.rewards"] "acme.toxicity" = "acme.rewards:Toxicity"`).

A factory is a Reward class (its `__init__` keyword arguments are the parameters) or a
`FunctionReward` (its function's keyword arguments are). Parameters are checked against the
factory's signature and type hints before anything runs, so a typo fails at `rewardlab check`.
"""

from __future__ import annotations

import ast
import difflib
import functools
import importlib
import inspect
import math
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from rewardlab._lazy import dependency_error, extras_for, missing
from rewardlab.core.reward import FunctionReward, Reward
from rewardlab.core.sample import JSON
from rewardlab.errors import (
    DependencyError,
    RegistryError,
    SpecError,
    SpecProblem,
    UnknownRewardError,
)

ENTRY_POINT_GROUP = "rewardlab.rewards"

#: The file in which a package of rewardlab declares the built-in rewards it owns (as
#: Gymnasium's packages register their own environments): two literal dicts, ``BUILTINS``
#: (dotted name -> ``".module:attribute"``, a module of that package) and ``NEEDS`` (dotted name
#: -> optional modules it imports only when it scores, so importing its class succeeds without
#: them: `rewardlab list`/`check` mark it unavailable and building it raises `DependencyError`
#: naming the extra, `rewardlab._lazy.OPTIONAL`). Core reads these files as text and never
#: imports them, so listing names imports no package, and names no package above it.
REGISTRATION_FILE = "_registry.py"

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the `rewardlab` package directory


@dataclass(frozen=True)
class BuiltinTables:
    """Every package's declared built-ins, merged: name -> ``"module:attribute"`` (absolute)
    and name -> optional modules."""

    builtins: Mapping[str, str]
    needs: Mapping[str, tuple[str, ...]]


@functools.cache
def builtin_tables(package_dir: Path = _PACKAGE_DIR) -> BuiltinTables:
    """The built-ins declared in the `REGISTRATION_FILE` of each package under `package_dir`.

    Raises:
        RegistryError: a file that is not two literal dicts, a target outside its package, or
            one name declared by two packages.
    """
    builtins: dict[str, str] = {}
    needs: dict[str, tuple[str, ...]] = {}
    for path in sorted(package_dir.glob(f"*/{REGISTRATION_FILE}")):
        package = f"{package_dir.name}.{path.parent.name}"
        tables = _literal_tables(path)
        for name, target in tables.get("BUILTINS", {}).items():
            if name in builtins:
                raise RegistryError(f"reward name {name!r} is declared twice: {builtins[name]} and {package} ({path})")
            builtins[name] = _absolute(target, package, path)
        needs.update((name, tuple(modules)) for name, modules in tables.get("NEEDS", {}).items())
    return BuiltinTables(builtins, needs)


def _literal_tables(path: Path) -> dict[str, dict[str, Any]]:
    """The dicts assigned at the top level of `path`, evaluated as literals (nothing runs)."""
    out: dict[str, dict[str, Any]] = {}
    target: ast.expr
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            target, expression = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, expression = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in ("BUILTINS", "NEEDS"):
            try:
                value = ast.literal_eval(expression)
            except ValueError as exc:
                raise RegistryError(f"{path}: {target.id} must be a literal dict ({exc})") from exc
            if not isinstance(value, dict):
                raise RegistryError(f"{path}: {target.id} must be a dict, got {type(value).__name__}")
            out[target.id] = value
    return out


def _absolute(target: str, package: str, path: Path) -> str:
    """`target` with its module made absolute; a built-in lives in the package declaring it."""
    if not isinstance(target, str) or ":" not in target:
        raise RegistryError(f"{path}: {target!r} is not 'module:attribute'")
    absolute = package + target if target.startswith(".") else target
    if not absolute.startswith(package + "."):
        raise RegistryError(f"{path}: {target!r} is outside {package}; a package registers its own rewards")
    return absolute


def __getattr__(name: str) -> Any:
    """`BUILTINS` and `NEEDS`: the merged tables (read on first use, see `builtin_tables`)."""
    if name == "BUILTINS":
        return dict(builtin_tables().builtins)
    if name == "NEEDS":
        return dict(builtin_tables().needs)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class ParamInfo:
    """One parameter of a registered reward, as `rewardlab list` shows it."""

    name: str
    annotation: str
    default: JSON
    required: bool


@dataclass(frozen=True)
class RewardInfo:
    """What `rewardlab list` shows about a registered name."""

    name: str
    summary: str
    range: tuple[float, float] | None
    params: tuple[ParamInfo, ...]
    origin: str
    doc: str = ""  # the whole docstring (`rewardlab list NAME`)


class Registry:
    """Maps dotted names to reward factories."""

    def __init__(self, builtins: Mapping[str, str] | None = None, *, use_entry_points: bool = True):
        self._factories: dict[str, Any] = {}
        # None: the packages' declared built-ins, read on first use (`builtin_tables`)
        self._given = None if builtins is None else dict(builtins)
        self._tables: tuple[dict[str, str], dict[str, tuple[str, ...]]] | None = None
        self._use_entry_points = use_entry_points
        self._entry_points_loaded = False

    @property
    def _lazy(self) -> dict[str, str]:
        """name -> ``"module:attribute"`` of every name not imported yet."""
        return self._load()[0]

    @property
    def _needs(self) -> dict[str, tuple[str, ...]]:
        return self._load()[1]

    def _load(self) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
        if self._tables is None:
            if self._given is not None:
                self._tables = (self._given, {})
            else:
                tables = builtin_tables()
                self._tables = (dict(tables.builtins), dict(tables.needs))
        return self._tables

    # -- registration ----------------------------------------------------------------------
    def register(self, name: str, factory: Any, *, overwrite: bool = False) -> None:
        """Register a Reward class or `FunctionReward` under a dotted name."""
        if not overwrite and (name in self._factories or name in self._lazy):
            raise RegistryError(f"reward name {name!r} is already registered; pass overwrite=True")
        self._factories[name] = factory
        self._lazy.pop(name, None)
        self._needs.pop(name, None)  # a replacement brings its own imports

    # -- lookup ------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self._load_entry_points()
        return sorted({*self._factories, *self._lazy})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def factory(self, name: str, *, location: str = "") -> Any:
        """The factory for `name`; raises `UnknownRewardError` with suggestions."""
        if name in self._factories:
            return self._factories[name]
        if name not in self._lazy:
            self._load_entry_points()
        if name in self._lazy:
            target = self._lazy[name]
            module, _, attr = target.partition(":")
            try:
                factory = getattr(importlib.import_module(module), attr)
            except ImportError as exc:
                missing_extra = dependency_error(exc, f"reward {name!r}")
                if missing_extra is not None:
                    raise missing_extra from exc
                raise SpecError(
                    [SpecProblem(location, f"reward {name!r} cannot be imported: {exc}")]
                ) from exc
            self._factories[name] = factory
            return factory
        suggestions = difflib.get_close_matches(name, self.names(), n=3, cutoff=0.5)
        raise UnknownRewardError(name, suggestions, location=location)

    def unavailable(self, name: str) -> DependencyError | None:
        """Why `name` cannot be built here (its optional dependencies are missing), or None.

        Raises:
            UnknownRewardError: `name` is not registered.
        """
        gone = missing(*self._needs.get(name, ()))
        if gone:
            return DependencyError(f"reward {name!r}", gone, extras_for(gone))
        try:
            self.factory(name)
        except DependencyError as exc:
            return exc
        return None

    def create(self, name: str, params: Mapping[str, JSON] | None = None, *, location: str = "") -> Reward:
        """Build the reward `name` with `params`, validating them first.

        Raises:
            SpecError: unknown name, unknown parameter (with a suggestion), wrong type.
            DependencyError: the reward needs an extra that is not installed.
        """
        gone = missing(*self._needs.get(name, ()))
        if gone:
            raise DependencyError(f"reward {name!r}", gone, extras_for(gone))
        factory = self.factory(name, location=f"{location}.use" if location else "")
        params = dict(params or {})
        problems = check_params(factory, params, location=location)
        if problems:
            raise SpecError(problems)
        try:
            built = factory(**params)
        except SpecError:
            raise
        except (TypeError, ValueError) as exc:
            raise SpecError([SpecProblem(location, f"{name}: {exc}")]) from exc
        if not isinstance(built, Reward):
            raise SpecError([SpecProblem(location, f"{name!r} did not build a Reward (got {type(built).__name__})")])
        return built

    def info(self, name: str) -> RewardInfo:
        """Summary, range and parameters of `name` (for `rewardlab list`)."""
        factory = self.factory(name)
        target = factory.fn if isinstance(factory, FunctionReward) else factory
        doc = inspect.getdoc(target) or ""
        range_ = getattr(factory, "range", None)
        origin = self._lazy.get(name) or str(getattr(target, "__module__", "?"))
        summary = doc.split("\n\n")[0].replace("\n", " ")
        return RewardInfo(name, summary, range_, tuple(param_infos(factory)), origin, doc)

    # -- entry points ------------------------------------------------------------------------
    def _load_entry_points(self) -> None:
        if self._entry_points_loaded or not self._use_entry_points:
            return
        self._entry_points_loaded = True
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name not in self._factories and ep.name not in self._lazy:
                self._lazy[ep.name] = ep.value


def _signature_target(factory: Any) -> tuple[Callable[..., Any], bool]:
    """The callable whose keyword arguments are the parameters, and whether to skip arg 0."""
    if isinstance(factory, FunctionReward):
        return factory.fn, True
    if inspect.isclass(factory):
        return factory.__init__, True
    return factory, False


def _parameters(factory: Any) -> tuple[list[inspect.Parameter], dict[str, Any], bool]:
    target, skip_first = _signature_target(factory)
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return [], {}, True
    params = list(signature.parameters.values())[1 if skip_first else 0 :]
    open_kwargs = any(p.kind is p.VAR_KEYWORD for p in params)
    params = [p for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable forward references: skip type checks, keep name checks
        hints = {}
    return params, hints, open_kwargs


def param_infos(factory: Any) -> list[ParamInfo]:
    params, hints, _ = _parameters(factory)
    preset = factory.params if isinstance(factory, FunctionReward) else {}
    out = []
    for p in params:
        default = preset.get(p.name, None if p.default is p.empty else p.default)
        annotation = hints.get(p.name, p.annotation)
        if annotation is inspect.Parameter.empty:
            text = "any"
        elif isinstance(annotation, str):
            text = annotation
        elif typing.get_args(annotation):  # Literal['a', 'b'], list[str] | None: the whole type
            text = str(annotation)
        else:
            text = getattr(annotation, "__name__", str(annotation))
        out.append(ParamInfo(p.name, str(text).replace("typing.", ""), default, p.default is p.empty and p.name not in preset))
    return out


def check_params(factory: Any, params: Mapping[str, JSON], *, location: str = "") -> list[SpecProblem]:
    """Every problem with `params` for `factory`: unknown names, missing ones, wrong types."""
    from pydantic import TypeAdapter, ValidationError

    known, hints, open_kwargs = _parameters(factory)
    by_name = {p.name: p for p in known}
    preset = factory.params if isinstance(factory, FunctionReward) else {}
    problems: list[SpecProblem] = []
    where = f"{location}.params" if location else "params"
    for key, value in params.items():
        if key not in by_name:
            if open_kwargs:
                continue
            close = difflib.get_close_matches(key, list(by_name), n=1, cutoff=0.6)
            advice = f"; did you mean {close[0]!r}?" if close else f"; known: {sorted(by_name) or 'none'}"
            problems.append(SpecProblem(f"{where}.{key}", f"unknown parameter{advice}"))
            continue
        hint = hints.get(key)
        if hint is None:
            continue
        if isinstance(value, float) and math.isnan(value) and _numeric(hint):
            # pydantic takes NaN for a float, and NaN passes every `if x < 0: raise` check
            problems.append(SpecProblem(f"{where}.{key}", "must be a number, got nan"))
            continue
        try:
            TypeAdapter(hint).validate_python(value, strict=False)
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"] if exc.errors() else str(exc)
            problems.append(SpecProblem(f"{where}.{key}", f"{reason} (got {value!r})"))
        except Exception:  # a hint pydantic cannot build a validator for: trust the factory
            continue
    for p in known:
        if p.default is p.empty and p.name not in params and p.name not in preset:
            problems.append(SpecProblem(f"{where}.{p.name}", "required parameter is missing"))
    return problems


def _numeric(hint: Any) -> bool:
    """A parameter type that is a number: `float`, `int | float`, `float | None`..."""
    members = set(typing.get_args(hint)) or {hint}
    return bool(members - {type(None)}) and members - {type(None)} <= {int, float}


#: The process-wide registry that specs and the CLI use.
registry = Registry()


def register(name: str, factory: Any, *, overwrite: bool = False) -> None:
    """Register a reward factory in the global registry."""
    registry.register(name, factory, overwrite=overwrite)
