"""`rewardlab check SPEC...`: validate specs and report every problem before anything runs."""

from __future__ import annotations

from pathlib import Path

import typer


def check_command(
    specs: list[Path] = typer.Argument(..., help="Reward spec files (TOML), or registered reward names."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only report problems."),
) -> int:
    """Validate SPEC files: TOML syntax, keys, types, reward names, parameters, gates, formulas."""
    from rich.markup import escape

    from rewardlab.cli._render import console
    from rewardlab.compose import build
    from rewardlab.core import spec_hash
    from rewardlab.errors import DependencyError, SpecError

    failed = 0
    for path in specs:
        shown = escape(str(path))  # a path is text, not markup
        try:
            reward = build(path)
        except SpecError as exc:
            failed += 1
            console.print(f"[red]✗[/] {shown}: {len(exc.problems)} problem(s)")
            for problem in exc.problems:
                console.print(f"  {problem}", highlight=False, markup=False)
            continue
        except DependencyError as exc:  # a sound spec this installation cannot run
            failed += 1
            console.print(f"[red]✗[/] {shown}: unavailable here")
            console.print(f"  {exc}", highlight=False, markup=False)
            continue
        console.print(f"[green]✓[/] {shown}  spec_hash={spec_hash(reward)}")
        if not quiet:
            console.print(repr(reward), highlight=False, markup=False)
    return 1 if failed else 0


def register(app: typer.Typer) -> None:
    app.command("check")(check_command)
