"""The `--progress/--no-progress` option every command that reads a data file offers (cheap to
import at start-up; the bar itself is `_render.progress_bar`)."""

from __future__ import annotations

import sys
from typing import Any

import typer

PROGRESS_HELP = "Progress bar with rate and ETA on stderr (default: on when stderr is a terminal)."


def progress_option(help: str = PROGRESS_HELP) -> Any:
    """The option; its default None means "on when stderr is a terminal", decided when the command
    runs (`_render.progress_enabled`), not when the module is imported."""
    return typer.Option(None, "--progress/--no-progress", help=help, show_default=False)


def progress_enabled(enabled: bool | None) -> bool:
    """`--progress` / `--no-progress`, or without either whether stderr is a terminal now (decided
    at run time, not when the command's module was imported)."""
    return sys.stderr.isatty() if enabled is None else enabled
