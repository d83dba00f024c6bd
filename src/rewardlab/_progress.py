"""The one progress bar: a rich bar on stderr with count, rate (`unit`/s), elapsed time and ETA.

The CLI drives it for every command that reads a data file; library calls that run long
(`train_reward_model`, `train_prm`) draw it when asked with `progress=True`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import ProgressColumn

__all__ = ["Advance", "SetTotal", "progress_bar", "progress_enabled"]

Advance = Callable[[int], None]
SetTotal = Callable[[int | None], None]


def progress_enabled(enabled: bool | None) -> bool:
    """`True`/`False` as asked, or, for None, whether stderr is a terminal now (decided at run
    time, not when the caller's module was imported)."""
    return sys.stderr.isatty() if enabled is None else enabled


def _rate_column(unit: str) -> ProgressColumn:
    """A column of `unit`s per second (rich's own speed columns count bytes or iterations)."""
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"— {unit}/s" if speed is None else f"{speed:,.0f} {unit}/s", style="progress.data.speed")

    return RateColumn()


@contextmanager
def progress_bar(
    enabled: bool | None, description: str, unit: str = "rows", *, hidden_until_total: bool = False
) -> Iterator[tuple[Advance, SetTotal]]:
    """(advance, set_total) callbacks driving the bar (no-ops if disabled); `enabled=None` means
    on when stderr is a terminal. With `hidden_until_total`, the bar shows from the first
    `set_total` (a run that may do nothing, such as `eval` on a file of verdicts, shows no empty
    bar)."""
    if not progress_enabled(enabled):
        yield (lambda n: None), (lambda total: None)
        return
    # imported when a bar is drawn, not when the CLI starts
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns: tuple[Any, ...] = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _rate_column(unit),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        task = progress.add_task(description, total=None, visible=not hidden_until_total)
        yield (lambda n: progress.advance(task, n)), (lambda total: progress.update(task, total=total, visible=True))
