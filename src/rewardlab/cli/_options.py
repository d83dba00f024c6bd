"""Command-line options generated from a settings model, so each default and its description
are written once, on the model's field, and the CLI cannot drift from the library.

    SERVE = [Flag("workers", ("--workers", "-w")), Flag("sample_timeout", ("--timeout",))]

    @with_options(settings_options(ServeSettings, SERVE), after="port")
    def serve_command(specs: list[str] = typer.Argument(...), port: int = ..., **settings: Any) -> None:
        ServeSettings(**settings_values(SERVE, settings))

Typer reads a command's parameters from its signature; `with_options` gives the command a
signature with the generated options in it, and typer passes their values as keywords.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import typer
from pydantic import BaseModel

__all__ = ["Flag", "settings_options", "settings_values", "with_options"]

_F = TypeVar("_F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Flag:
    """One option for one field of a settings model.

    Attributes:
        field: the model's field name (also the command's parameter name).
        decls: the option's names, e.g. ``("--workers", "-w")``; default ``--field-name``.
        help: the help text; default: the field's description.
        scale: the CLI value times `scale` is the field value (``2**20``: MiB on the command
            line, bytes in the model); the default shown is divided accordingly.
        envvar: an environment variable that sets the option.
    """

    field: str
    decls: tuple[str, ...] = ()
    help: str | None = None
    scale: float | None = None
    envvar: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """`decls`, or ``--field-name`` when none are given."""
        return self.decls or ("--" + self.field.replace("_", "-"),)


def settings_options(model: type[BaseModel], flags: Iterable[Flag]) -> list[inspect.Parameter]:
    """Keyword-only typer options for `flags`, with the defaults and descriptions of `model`."""
    params = []
    for flag in flags:
        info = model.model_fields.get(flag.field)
        if info is None:
            raise KeyError(f"{model.__name__} has no field {flag.field!r}")
        if info.is_required():
            raise ValueError(f"{model.__name__}.{flag.field} has no default to offer on the command line")
        default = info.get_default(call_default_factory=True)
        kind = _cli_type(info.annotation)
        if isinstance(default, tuple):  # a repeatable option: typer collects a list
            default = list(default)
        if flag.scale is not None:
            default, kind = default / flag.scale, float
        text = flag.help or _sentence(info.description or "")
        option = typer.Option(default, *flag.names, help=text, envvar=flag.envvar)
        params.append(inspect.Parameter(flag.field, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind))
    return params


def settings_values(flags: Iterable[Flag], values: Mapping[str, Any]) -> dict[str, Any]:
    """The model's keyword arguments from the command's values of `flags` (scales applied)."""
    out = {}
    for flag in flags:
        value = values[flag.field]
        if flag.scale is not None and value is not None:
            value = int(value * flag.scale)
        out[flag.field] = value
    return out


def with_options(options: Sequence[inspect.Parameter], *, after: str) -> Callable[[_F], _F]:
    """Give a command `fn(..., **settings)` a signature with `options` right after `after`."""

    def decorate(fn: _F) -> _F:
        own = [p for p in inspect.signature(fn, eval_str=True).parameters.values() if p.kind is not p.VAR_KEYWORD]
        at = next(i for i, p in enumerate(own) if p.name == after) + 1
        keyword = [p.replace(kind=p.KEYWORD_ONLY) if p.kind is p.POSITIONAL_OR_KEYWORD else p for p in own]
        fn.__signature__ = inspect.Signature([*keyword[:at], *options, *keyword[at:]])  # type: ignore[attr-defined]
        return fn

    return decorate


def _cli_type(annotation: Any) -> Any:
    """The type typer parses: `X | None` -> `X`, a `Literal` of strings -> `str` (the model
    checks the value), `tuple[X, ...]` -> `list[X]` (a repeatable option), other scalars as
    they are."""
    args = typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _cli_type(rest[0])
    if typing.get_origin(annotation) is Literal and all(isinstance(a, str) for a in args):
        return str
    if annotation in (str, int, float, bool):
        return annotation
    if typing.get_origin(annotation) is tuple and args in ((str, Ellipsis), (int, Ellipsis), (float, Ellipsis)):
        return list[args[0]]  # type: ignore[valid-type]  # a repeatable option
    raise TypeError(f"no command-line type for {annotation!r}")


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else text
