"""Names a package exports but imports on first use (PEP 562), so importing the package stays
cheap when its modules need an extra (torch, fastapi).

    _WHERE = {"Client": "rewardlab.serve.client"}
    __getattr__, __dir__ = exports(__name__, _WHERE)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports", "load"]


def load(package: str, where: Mapping[str, str], name: str) -> Any:
    """`name` from the module `where[name]`, kept in `package` so the next lookup is direct.

    Raises:
        AttributeError: `package` exports no `name` (what a missing attribute always raises).
    """
    module = where.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    setattr(sys.modules[package], name, value)
    return value


def exports(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` of `package`, whose lazy names are `where`."""

    def __getattr__(name: str) -> Any:
        return load(package, where, name)

    def __dir__() -> list[str]:
        return sorted({*where, *vars(sys.modules[package])})

    return __getattr__, __dir__
