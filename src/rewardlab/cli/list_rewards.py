"""`rewardlab list`: every registered reward with its range and parameters."""

from __future__ import annotations

import json
import math
from typing import Any

import typer


def _range(r: tuple[float, float] | None) -> str:
    if r is None:
        return "?"
    lo, hi = (("-inf" if math.isinf(v) and v < 0 else "inf" if math.isinf(v) else f"{v:g}") for v in r)
    return f"[{lo}, {hi}]"


def list_command(
    pattern: str | None = typer.Argument(None, help="Only names containing this text."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> int:
    """List registered rewards (built-ins, run-time registrations and entry points)."""
    from rich.table import Table

    from rewardlab.cli._render import console
    from rewardlab.core import registry
    from rewardlab.errors import SpecError

    rows: list[dict[str, Any]] = []
    for name in registry.names():
        if pattern and pattern not in name:
            continue
        try:
            info = registry.info(name)
        except SpecError as exc:  # a built-in whose extra is not installed
            rows.append({"name": name, "range": None, "params": [], "summary": f"unavailable: {exc.problems[0].message}"})
            continue
        params = [{"name": p.name, "type": p.annotation, "default": p.default, "required": p.required} for p in info.params]
        rows.append({"name": name, "range": info.range, "params": params, "summary": info.summary})
    if as_json:
        typer.echo(json.dumps(rows, indent=2, default=str))
        return 0
    table = Table(title=f"{len(rows)} registered rewards")
    for column in ("name", "range", "parameters", "summary"):
        table.add_column(column, overflow="fold")
    for row in rows:
        described = "\n".join(
            f"{p['name']}: {p['type']}" + (" (required)" if p["required"] else f" = {p['default']!r}") for p in row["params"]
        )
        table.add_row(str(row["name"]), _range(row["range"]), described, str(row["summary"]))
    console.print(table)
    return 0


def register(app: typer.Typer) -> None:
    app.command("list")(list_command)
