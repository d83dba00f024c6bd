"""Every exception class rewardlab defines lives in `rewardlab.errors`, under `RewardLabError`.

The walk imports every module of the package (optional extras that are not installed are
skipped by name, so a missing extra cannot hide a whole subpackage) and inspects each class
whose `__module__` is that module.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pytest

import rewardlab
from rewardlab import errors
from rewardlab.errors import (
    ConfigError,
    ConfigTypeError,
    MappingError,
    ParseFailure,
    RewardLabError,
    WorkerCrashed,
)

# Private control-flow signals that never leave their module. Each entry says why it is not an
# error of the public tree; the test below fails if one is renamed, made public or escapes.
CONTROL_FLOW = {
    "rewardlab.verify.math.equivalence._Uncached": "carries an uncacheable verdict out of "
    "an lru_cache'd function; caught two lines up in `check`",
}

# Modules that are not importable in-process on purpose (entry points of child processes).
NOT_IMPORTED = {
    "rewardlab.verify.math._server": "the sympy worker's main loop reads stdin on import",
}


@pytest.fixture(scope="module")
def modules() -> list[ModuleType]:
    """Every module of the package, imported (once per run, not at collection)."""
    found = []
    for info in pkgutil.walk_packages(rewardlab.__path__, prefix="rewardlab."):
        if info.name in NOT_IMPORTED:
            continue
        found.append(importlib.import_module(info.name))
    return found


def _exception_classes(module: ModuleType) -> list[type[BaseException]]:
    return [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__
    ]


def test_the_walk_sees_the_whole_package(modules):
    names = {m.__name__ for m in modules}
    every = {info.name for info in pkgutil.walk_packages(rewardlab.__path__, prefix="rewardlab.")}
    assert set(NOT_IMPORTED) <= every and every - set(NOT_IMPORTED) == names
    for package in ("core", "compose", "verify", "sandbox", "serve", "models", "envs", "integrations", "cli"):
        assert f"rewardlab.{package}" in names
    assert len(names) > 100


def test_every_exception_class_is_defined_in_errors(modules):
    outside = []
    for module in modules:
        if module is errors:
            continue
        for cls in _exception_classes(module):
            qualified = f"{module.__name__}.{cls.__name__}"
            if qualified in CONTROL_FLOW or not issubclass(cls, Exception):
                continue
            outside.append(qualified)
    assert not outside, f"define these in rewardlab/errors.py and import them where they were: {outside}"


def test_every_class_in_errors_is_under_the_root():
    for cls in _exception_classes(errors):
        assert issubclass(cls, RewardLabError), cls


def test_the_docstring_tree_lists_every_error_class():
    drawn = set(re.findall(r"[├└]── (\w+)", errors.__doc__ or ""))
    defined = {cls.__name__ for cls in _exception_classes(errors)} - {"RewardLabError"}
    assert drawn == defined


def test_every_error_class_is_public():
    defined = {cls.__name__ for cls in _exception_classes(errors)}
    assert defined <= set(errors.__all__)


@pytest.mark.parametrize("qualified", sorted(CONTROL_FLOW))
def test_control_flow_signals_stay_private(qualified):
    module_name, _, name = qualified.rpartition(".")
    module = importlib.import_module(module_name)
    cls = getattr(module, name)
    assert name.startswith("_") and name not in getattr(module, "__all__", ())
    assert cls.__module__ == module_name


def test_moved_classes_keep_their_old_import_path():
    from rewardlab.compose.formula import FormulaError
    from rewardlab.envs.rm import NoTransitionError
    from rewardlab.errors import ApiError, BackendError, Overloaded, ServerError
    from rewardlab.errors import MappingError as OldMappingError
    from rewardlab.models import TrainingError
    from rewardlab.sandbox import EncodeError, SandboxError
    from rewardlab.sandbox._wire import ProtocolError
    from rewardlab.sandbox.session import CandidateError

    for cls in (FormulaError, NoTransitionError, TrainingError, CandidateError, EncodeError, SandboxError,
                ProtocolError, BackendError, Overloaded, ServerError, OldMappingError, ApiError):
        assert getattr(errors, cls.__name__) is cls


def test_builtin_bases_kept_for_callers_that_catch_them():
    assert issubclass(ConfigError, ValueError)
    assert issubclass(ConfigTypeError, TypeError) and issubclass(ConfigTypeError, ConfigError)
    assert issubclass(MappingError, ValueError)
    assert issubclass(ParseFailure, ValueError)
    assert issubclass(WorkerCrashed, RuntimeError)


def test_a_bad_constructor_argument_raises_config_error_in_every_package():
    from rewardlab.models.heads import EnsembleHead
    from rewardlab.runner.pool import ProcessPool
    from rewardlab.sandbox import Limits
    from rewardlab.verify.length import LengthTerm
    from rewardlab.verify.math import CheckOptions

    attempts = [
        lambda: CheckOptions(timeout=-1),
        lambda: Limits(cpu_seconds=-1),
        lambda: ProcessPool(abs, lambda item, kind, message: 0, timeout=-1),
        lambda: LengthTerm(budget=0),
        lambda: EnsembleHead(8, members=1),
    ]
    for attempt in attempts:
        with pytest.raises(ConfigError):
            attempt()


def test_a_wrong_argument_type_is_a_config_type_error():
    from rewardlab.verify.math import check

    with pytest.raises(ConfigTypeError, match="must be str"):
        check(1, "1")  # type: ignore[arg-type]


def _drawn_parents() -> dict[str, str]:
    """Each class of the docstring tree -> the class it is drawn under (by the column of `──`)."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = [(-1, "RewardLabError")]
    for line in (errors.__doc__ or "").splitlines():
        match = re.search(r"[├└]── (\w+)", line)
        if not match:
            continue
        column = match.start()
        while stack[-1][0] >= column:
            stack.pop()
        parents[match.group(1)] = stack[-1][1]
        stack.append((column, match.group(1)))
    return parents


def test_the_docstring_tree_draws_each_class_under_its_base():
    """The tree is the hierarchy, so a reader can see which family a caller catches."""
    for name, parent in _drawn_parents().items():
        cls = getattr(errors, name)
        own_bases = [b.__name__ for b in cls.__bases__ if b.__module__ == errors.__name__]
        assert own_bases == [parent], f"{name} is drawn under {parent} but derives from {own_bases}"


def test_errors_are_grouped_into_families_a_caller_can_catch():
    from rewardlab.errors import ExecutionError, ServiceError

    under_root = [name for name, parent in _drawn_parents().items() if parent == "RewardLabError"]
    assert len(under_root) <= 17, under_root  # a new error joins a family unless it is one
    for name in ("RunnerError", "SandboxError", "WorkerCrashed", "CandidateError", "TrainingError", "RewardCodeFailed"):
        assert issubclass(getattr(errors, name), ExecutionError)
    for name in ("Overloaded", "ApiError", "ServerError", "GenerationError"):
        assert issubclass(getattr(errors, name), ServiceError)
