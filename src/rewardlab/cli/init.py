"""`rewardlab init [PATH] [--use NAME...]`: write a starter spec to edit, then check it."""

from __future__ import annotations

from pathlib import Path

import typer


def init_command(
    path: Path = typer.Argument(Path("reward.toml"), help="Where to write the spec."),
    use: list[str] = typer.Option([], "--use", "-u", help="A registered reward to put in it (repeatable); none: the demo's maths reward."),
    force: bool = typer.Option(False, "--force", help="Overwrite PATH if it exists."),
) -> int:
    """Write a starter reward spec (its components' parameters as comments), then check it."""
    from rewardlab.cli._render import console
    from rewardlab.compose import build
    from rewardlab.compose.starter import starter_spec
    from rewardlab.errors import DependencyError, InputError

    if path.exists() and not force:
        raise InputError("exists already; pass --force to overwrite it, or name another file", source=str(path))
    text = starter_spec(use, path=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    console.print(f"wrote {path}", markup=False, highlight=False)
    try:
        build(path)
    except DependencyError as exc:  # written all the same: it runs once the extra is installed
        console.print(f"note: {exc}", markup=False, highlight=False)
    console.print(f"next: edit it, `rewardlab check {path}`, `rewardlab score {path} data.jsonl`", markup=False, highlight=False)
    return 0


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)
