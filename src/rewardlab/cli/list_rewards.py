"""`rewardlab list [NAME]`: registered rewards, one short block each; `list NAME` shows one in full.

A reward whose optional dependencies are not installed is listed as unavailable, with the
`pip install` that provides them.
"""

from __future__ import annotations

import json
import math
import textwrap
from typing import Any

import typer


def _range(r: tuple[float, float] | None) -> str:
    if r is None:
        return "?"
    lo, hi = (("-inf" if math.isinf(v) and v < 0 else "inf" if math.isinf(v) else f"{v:g}") for v in r)
    return f"[{lo}, {hi}]"


def _row(name: str) -> dict[str, Any]:
    """What `list` shows of `name`: range, parameters, summary, docstring, and why it is
    unavailable here (None when it can be built)."""
    from rewardlab.core import registry
    from rewardlab.errors import DependencyError, SpecError

    row: dict[str, Any] = {"name": name, "range": None, "params": [], "summary": "", "doc": ""}
    try:
        missing = registry.unavailable(name)
        row.update(available=missing is None, unavailable=str(missing) if missing else None)
        info = registry.info(name)
    except DependencyError:  # its module imports the extra at the top: nothing more to show
        return row
    except SpecError as exc:  # an entry point whose module is broken
        row.update(available=False, unavailable=exc.problems[0].message)
        return row
    row["params"] = [{"name": p.name, "type": p.annotation, "default": p.default, "required": p.required} for p in info.params]
    row.update(range=info.range, summary=info.summary, doc=info.doc)
    return row


def _param(p: dict[str, Any]) -> str:
    return f"{p['name']}: {p['type']}" + (" (required)" if p["required"] else f" = {p['default']!r}")


def _short(row: dict[str, Any], width: int) -> str:
    """A few lines: name and range, the summary (at most two lines), why it is unavailable."""
    head = f"{row['name']}  {_range(row['range'])}" + ("" if row["available"] else "  (unavailable)")
    summary = textwrap.wrap(str(row["summary"]), width, initial_indent="  ", subsequent_indent="  ", max_lines=2, placeholder=" ...")
    lines = [head, *summary]
    if row["unavailable"]:
        lines.append(f"  unavailable: {row['unavailable']}")
    return "\n".join(lines)


def _detail(row: dict[str, Any], width: int) -> str:
    lines = [f"{row['name']}  range {_range(row['range'])}"]
    if row["unavailable"]:
        lines.append(f"unavailable: {row['unavailable']}")
    lines.append("")
    for paragraph in str(row["doc"] or row["summary"]).split("\n\n"):
        lines.extend(textwrap.wrap(" ".join(paragraph.split()), width) or [""])
        lines.append("")
    lines.append("parameters:" if row["params"] else "parameters: none")
    lines.extend(f"  {_param(p)}" for p in row["params"])
    return "\n".join(lines)


def list_command(
    name: str | None = typer.Argument(None, help="A reward name for its details, or text that names contain."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output (every field of every match)."),
) -> int:
    """List registered rewards (built-ins, run-time registrations and entry points); `list NAME` for one in full."""
    from rewardlab.cli._render import console
    from rewardlab.core import registry

    names = registry.names()
    exact = name is not None and name in names
    chosen = [n for n in names if n == name] if exact else [n for n in names if not name or name in n]
    rows = [_row(n) for n in chosen]
    if as_json:
        typer.echo(json.dumps(rows, indent=2, default=str))
        return 0
    width = max(40, min(console.width, 100) - 2)
    if exact:
        console.print(_detail(rows[0], width), markup=False, highlight=False)
        return 0
    if not rows:
        console.print(f"no registered reward name contains {name!r} (`rewardlab list` shows all)", markup=False)
        return 1
    available = sum(row["available"] for row in rows)
    blocks = [_short(row, width) for row in rows]
    console.print("\n".join(blocks), markup=False, highlight=False)
    console.print(
        f"\n{len(rows)} rewards, {available} available here; `rewardlab list NAME` shows one in full",
        markup=False, highlight=False,
    )
    return 0


def register(app: typer.Typer) -> None:
    app.command("list")(list_command)
