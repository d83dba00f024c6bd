"""Checking a value against a `Literal` type, so the choices are declared once, by the type.

`check_choice` takes the type; `check_choices` reads it from the annotation of the parameter
(or dataclass field) being checked, so a constructor does not restate its own signature.

Examples:
    >>> from typing import Literal
    >>> check_choice("backend", "ray", Literal["local", "ray"])
    'ray'
    >>> check_choice("backend", "bogus", Literal["local", "ray"])
    Traceback (most recent call last):
    ...
    rewardlab.errors.ConfigError: backend must be one of 'local', 'ray'; got 'bogus'
    >>> def run(*, mode: Literal["fast", "exact"] = "fast") -> None:
    ...     check_choices(run, mode=mode)
    >>> run(mode="slow")
    Traceback (most recent call last):
    ...
    rewardlab.errors.ConfigError: mode must be one of 'fast', 'exact'; got 'slow'
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from rewardlab.errors import ConfigError

__all__ = ["ErrorFactory", "check_choice", "check_choices", "choices_of"]

T = TypeVar("T")


def choices_of(literal: Any) -> tuple[Any, ...]:
    """The values of a `Literal` type (also through an alias or `Literal[...] | None`)."""
    if typing.get_origin(literal) is typing.Literal:
        return typing.get_args(literal)
    return tuple(value for arg in typing.get_args(literal) for value in choices_of(arg))


def _optional(literal: Any) -> bool:
    """Whether `literal` is a union that admits None (``Literal[...] | None``)."""
    return typing.get_origin(literal) in (typing.Union, types.UnionType) and type(None) in typing.get_args(literal)


#: builds the error for an argument (its name) and a reason, as `ArrayError(argument, reason)`
ErrorFactory = Callable[[str, str], Exception]


def check_choice(name: str, value: T, literal: Any, *, error: ErrorFactory | None = None) -> T:
    """`value` if it is one of `literal`'s values (or None, when `literal` admits None).

    Raises:
        ConfigError: naming `name` and every allowed value (or what `error` builds from the
            name and ``"must be one of ...; got ..."``: the array packages raise `ArrayError`).
    """
    allowed = choices_of(literal)
    if not allowed:
        raise TypeError(f"{literal!r} is not a Literal type")
    if value not in allowed and not (value is None and _optional(literal)):
        reason = f"must be one of {', '.join(map(repr, allowed))}; got {value!r}"
        raise error(name, reason) if error is not None else ConfigError(f"{name} {reason}")
    return value


def check_choices(owner: Callable[..., Any] | type, /, error: ErrorFactory | None = None, **values: Any) -> None:
    """Check each of `values` against the `Literal` its parameter is annotated with in `owner`
    (a function, or a class whose annotated fields they are: a dataclass).

    Raises:
        ConfigError: the first value outside its choices, naming the parameter and the choices
            (or what `error` builds, as in `check_choice`).
    """
    for name, value in values.items():
        check_choice(name, value, _annotation(owner, name), error=error)


@functools.cache
def _annotation(owner: Callable[..., Any] | type, name: str) -> Any:
    """The evaluated annotation of `name` in `owner` (only that one: other annotations may name
    types imported for type checking alone)."""
    if isinstance(owner, type):
        for cls in owner.__mro__:
            own = inspect.get_annotations(cls)
            if name in own:
                return _evaluate(own[name], sys.modules[cls.__module__].__dict__)
        raise TypeError(f"{owner.__qualname__} has no annotated field {name!r}")
    function = inspect.unwrap(owner)
    annotations = function.__annotations__
    if name not in annotations:
        raise TypeError(f"{function.__qualname__} has no annotated parameter {name!r}")
    return _evaluate(annotations[name], function.__globals__)


def _evaluate(annotation: Any, namespace: dict[str, Any]) -> Any:
    return eval(annotation, namespace) if isinstance(annotation, str) else annotation  # the package's own annotation text
