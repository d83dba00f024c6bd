"""The `--progress/--no-progress` option every command that reads a data file offers (cheap to
import at start-up; the bar itself is `rewardlab._progress.progress_bar`)."""

from __future__ import annotations

from typing import Any

import typer

__all__ = ["progress_option"]

PROGRESS_HELP = "Progress bar with rate and ETA on stderr (default: on when stderr is a terminal)."


def progress_option(help: str = PROGRESS_HELP) -> Any:
    """The option; its default None means "on when stderr is a terminal", decided when the command
    runs (`rewardlab._progress.progress_enabled`), not when the module is imported."""
    return typer.Option(None, "--progress/--no-progress", help=help, show_default=False)
