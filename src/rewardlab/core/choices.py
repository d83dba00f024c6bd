"""Checking a value against a `Literal` type, so the choices are declared once, by the type.

Examples:
    >>> from typing import Literal
    >>> check_choice("backend", "ray", Literal["local", "ray"])
    'ray'
    >>> check_choice("backend", "bogus", Literal["local", "ray"])
    Traceback (most recent call last):
    ...
    rewardlab.errors.ConfigError: backend must be one of 'local', 'ray'; got 'bogus'
"""

from __future__ import annotations

import typing
from typing import Any, TypeVar

from rewardlab.errors import ConfigError

__all__ = ["check_choice", "choices_of"]

T = TypeVar("T")


def choices_of(literal: Any) -> tuple[Any, ...]:
    """The values of a `Literal` type (also through an alias or `Literal[...] | None`)."""
    if typing.get_origin(literal) is typing.Literal:
        return typing.get_args(literal)
    return tuple(value for arg in typing.get_args(literal) for value in choices_of(arg))


def check_choice(name: str, value: T, literal: Any) -> T:
    """`value` if it is one of `literal`'s values.

    Raises:
        ConfigError: naming `name` and every allowed value.
    """
    allowed = choices_of(literal)
    if not allowed:
        raise TypeError(f"{literal!r} is not a Literal type")
    if value not in allowed:
        raise ConfigError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value
