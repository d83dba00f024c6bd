"""Every options, config, settings and limits class of the package refuses NaN in a float field.

NaN passes every `<`/`>` check written as `if value < 0: raise` (each comparison is False), and
then silently spoils the run: a significance level of NaN flags no probe, a NaN learning rate
trains NaN weights, a NaN reward sent to a trainer poisons its step. The classes are found by
walking the package, so a class added later is in this test.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import types
import typing
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import rewardlab
from rewardlab.errors import RewardLabError

SUFFIXES = ("Options", "Config", "Settings", "Limits")


def option_classes() -> dict[str, type]:
    found: dict[str, type] = {}
    for module_info in pkgutil.walk_packages(rewardlab.__path__, "rewardlab."):
        if "._" in module_info.name or module_info.name.startswith("rewardlab.cli"):
            continue
        try:
            module = importlib.import_module(module_info.name)
        except ImportError:  # an extra this environment lacks
            continue
        for name, obj in vars(module).items():
            ours = inspect.isclass(obj) and obj.__module__ == module.__name__ and name.endswith(SUFFIXES)
            if ours and (dataclasses.is_dataclass(obj) or issubclass(obj, BaseModel)):
                found[f"{module.__name__}.{name}"] = obj
    return found


def float_fields(cls: type) -> list[str]:
    """Fields annotated `float` or `float | None`."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else list(cls.model_fields)  # type: ignore[attr-defined]
    return [name for name in names if _is_float(hints.get(name))]


def _is_float(annotation: Any) -> bool:
    if annotation is float:
        return True
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return set(typing.get_args(annotation)) - {type(None)} == {float}
    return False


CLASSES = option_classes()
CASES = [pytest.param(cls, name, id=f"{qual.removeprefix('rewardlab.')}.{name}")
         for qual, cls in sorted(CLASSES.items()) for name in float_fields(cls)]  # fmt: skip


def test_the_walk_finds_the_option_classes():
    assert len(CLASSES) >= 20 and len(CASES) >= 40


@pytest.mark.parametrize(("cls", "field"), CASES)
def test_a_nan_float_option_is_refused_when_built(cls, field):
    try:
        cls()
    except (TypeError, RewardLabError, ValidationError):
        pytest.skip("no defaults to build it from")
    with pytest.raises((RewardLabError, ValidationError), match=field):
        cls(**{field: math.nan})
