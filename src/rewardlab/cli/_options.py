"""Command-line options generated from a settings model or a config dataclass, so each default
and its description are written once, on the class, and the CLI cannot drift from the library.

    SERVE = [Flag("workers", ("--workers", "-w")), Flag("sample_timeout", ("--timeout",))]

    @with_options(settings_options(ServeSettings, SERVE), after="port")
    def serve_command(specs: list[str] = typer.Argument(...), port: int = ..., **settings: Any) -> None:
        ServeSettings(**settings_values(SERVE, settings))

A pydantic model's field describes itself (`Field(description=...)`); a dataclass field is
described by its entry under ``Attributes:`` in the class docstring (Google style), the same
text the API docs show. Typer reads a command's parameters from its signature; `with_options`
gives the command a signature with the generated options in it, and typer passes their values
as keywords.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import typer
from pydantic import BaseModel

from rewardlab.core.choices import choices_of

__all__ = ["Flag", "attribute_docs", "defaulted", "field_defaults", "settings_options", "settings_values", "with_options"]

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


def settings_options(model: Any, flags: Iterable[Flag]) -> list[inspect.Parameter]:
    """Keyword-only typer options for `flags`, with the defaults and descriptions of `model`: a
    pydantic model, a dataclass, a function whose keyword parameters are the fields (their
    descriptions under ``Args:``), or a class whose constructor's are (described under ``Args:``
    of the class). A field without a default is a required option; a boolean that defaults to
    true gets ``--x/--no-x``; the choices of a `Literal` field are named in its help."""
    fields = _fields(model)
    params = []
    for flag in flags:
        if flag.field not in fields:
            raise KeyError(f"{model.__name__} has no field {flag.field!r}")
        default, annotation, description = fields[flag.field]
        if default is _REQUIRED:
            default = ...  # typer's mark of a required option
        kind = _cli_type(annotation)
        if isinstance(default, tuple):  # a repeatable option: typer collects a list
            default = list(default)
        if flag.scale is not None:
            default, kind = default / flag.scale, float
        names = flag.names
        if kind is bool and default is True and not flag.decls:
            names = (f"{names[0]}/--no-{names[0][2:]}",)
        text = flag.help or _sentence(description)
        if not text:
            raise ValueError(f"{model.__name__}.{flag.field} has no description; document it or give the Flag a help")
        text += _choices(annotation, text)
        option = typer.Option(default, *names, help=text, envvar=flag.envvar)
        params.append(inspect.Parameter(flag.field, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind))
    return params


def field_defaults(model: Any) -> dict[str, Any]:
    """Every field of `model` that has a default, with that default (for tests and docs)."""
    return {name: default for name, (default, _, _) in _fields(model).items() if default is not _REQUIRED}


def attribute_docs(obj: Any, section: str = "Attributes") -> dict[str, str]:
    """A section of `obj`'s Google-style docstring (``Attributes:`` of a class, ``Args:`` of a
    function) as name -> description, continuation lines joined."""
    docs: dict[str, str] = {}
    inside, current = False, ""
    for line in (inspect.getdoc(obj) or "").splitlines():
        if not inside:
            inside = line.strip() == f"{section}:"
            continue
        if line and not line.startswith(" "):  # the next section (or prose) ends the list
            break
        entry = _ENTRY.match(line)
        if entry:
            current = entry["name"]
            docs[current] = entry["text"].strip()
        elif current and line.strip():
            docs[current] += " " + line.strip()
    return docs


_REQUIRED = object()
_ENTRY = re.compile(r"^ {4}\**(?P<name>\w+)(?: \([^)]*\))?: ?(?P<text>.*)$")


def _fields(model: Any) -> dict[str, tuple[Any, Any, str]]:
    """name -> (default or `_REQUIRED`, annotation, description) of the fields of a pydantic
    model or a dataclass, or the keyword parameters of a function."""
    if isinstance(model, type) and issubclass(model, BaseModel):
        return {
            name: (_REQUIRED if info.is_required() else info.get_default(call_default_factory=True),
                   info.annotation, info.description or "")
            for name, info in model.model_fields.items()
        }
    if isinstance(model, type) and dataclasses.is_dataclass(model):
        hints, docs = typing.get_type_hints(model), attribute_docs(model)
        out = {}
        for f in dataclasses.fields(model):
            default: Any = f.default
            if default is dataclasses.MISSING:
                default = f.default_factory() if callable(f.default_factory) else _REQUIRED
            out[f.name] = (default, hints[f.name], docs.get(f.name, ""))
        return out
    if inspect.isfunction(model):
        return _parameters(model, attribute_docs(model, "Args"))
    init = inspect.getattr_static(model, "__init__", None) if isinstance(model, type) else None
    if inspect.isfunction(init):  # a class's constructor, documented under the class's Args
        return _parameters(init, attribute_docs(model, "Args"))
    raise TypeError(f"{model!r} is neither a pydantic model, a dataclass, a function nor a class with an __init__")


def _parameters(function: Any, docs: dict[str, str]) -> dict[str, tuple[Any, Any, str]]:
    hints = typing.get_type_hints(function)
    return {
        p.name: (_REQUIRED if p.default is p.empty else p.default, hints.get(p.name, Any), docs.get(p.name, ""))
        for p in inspect.signature(function).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
    }


def settings_values(flags: Iterable[Flag], values: Mapping[str, Any]) -> dict[str, Any]:
    """The model's keyword arguments from the command's values of `flags` (scales applied)."""
    out = {}
    for flag in flags:
        value = values[flag.field]
        if flag.scale is not None and value is not None:
            value = int(value * flag.scale)
        out[flag.field] = value
    return out


def defaulted(ctx: typer.Context, name: str) -> bool:
    """Whether option `name` of the running command took its default (the user gave no value,
    neither on the command line nor through its environment variable)."""
    source = ctx.get_parameter_source(name)
    return source is None or source.name in ("DEFAULT", "DEFAULT_MAP")


def with_options(options: Sequence[inspect.Parameter], *, after: str | None) -> Callable[[_F], _F]:
    """Give a command `fn(..., **settings)` a signature with `options` right after `after`
    (None: before its own parameters)."""

    def decorate(fn: _F) -> _F:
        own = [p for p in inspect.signature(fn, eval_str=True).parameters.values() if p.kind is not p.VAR_KEYWORD]
        at = 0 if after is None else next(i for i, p in enumerate(own) if p.name == after) + 1
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
    if annotation in (str, int, float, bool, Path):
        return annotation
    if typing.get_origin(annotation) is tuple and args in ((str, Ellipsis), (int, Ellipsis), (float, Ellipsis)):
        return list[args[0]]  # type: ignore[valid-type]  # a repeatable option
    raise TypeError(f"no command-line type for {annotation!r}")


def _choices(annotation: Any, text: str) -> str:
    """`` One of: a, b, c.`` for a `Literal` field whose help does not name every choice."""
    allowed = [str(c) for c in choices_of(annotation) if c is not None]
    if not allowed or all(re.search(rf"\b{re.escape(c)}\b", text) for c in allowed):
        return ""
    return f" One of: {', '.join(allowed)}."


def _sentence(text: str) -> str:
    text = text.strip().replace("`", "")
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else text
