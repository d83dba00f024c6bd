"""Rich rendering shared by commands: summary tables and progress bars."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from rich.console import Console
from rich.table import Table

from rewardlab.runner.summary import ColumnStats, RunSummary

console = Console(soft_wrap=True)

T = TypeVar("T")


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _errors(stats: ColumnStats) -> str:
    if not stats.errors:
        return "0"
    return ", ".join(f"{kind} {n}" for kind, n in stats.errors.most_common())


def summary_table(summary: RunSummary, title: str = "rewardlab score") -> Table:
    """Mean/min/max per column, ok/errors (by kind)/skipped counts."""
    table = Table(title=f"{title}: {summary.rows} rows in {summary.seconds:.2f}s ({summary.rate:,.0f} rows/s)")
    for column in ("", "mean", "min", "max", "ok", "errors", "skipped"):
        table.add_column(column, justify="left" if column in ("", "errors") else "right")
    rows = [("total", summary.total)] + [(f"  {name}", s) for name, s in summary.components.items()]
    rows += [(f"objective {name}", s) for name, s in summary.objectives.items()]
    for name, s in rows:
        low = s.low if s.ok else None
        high = s.high if s.ok else None
        table.add_row(name, _fmt(s.mean), _fmt(low), _fmt(high), str(s.ok), _errors(s), str(s.skipped))
    return table


def print_summary(summary: RunSummary, title: str = "rewardlab score") -> None:
    console.print(summary_table(summary, title))
    if summary.errors_as_zero:
        counts = ", ".join(f"{k} {v}" for k, v in summary.errors_as_zero.items())
        console.print(f"errors counted as 0 by on_error=\"zero\": {counts}")
    if summary.errors_skipped:
        counts = ", ".join(f"{k} {v}" for k, v in summary.errors_skipped.items())
        console.print(f"errors left out by on_error=\"skip\": {counts}")
    if summary.error_examples:
        console.print(f"first errors (of {sum(summary.total.errors.values())}):")
        for line, kind, message in summary.error_examples:
            console.print(f"  row {line}: {kind}: {message}", highlight=False, markup=False)


def growing_total(set_total: Callable[[int | None], None]) -> Callable[[int], None]:
    """A callback adding `n` to the bar's total, for work whose size is learnt batch by batch
    (the evaluate runs: `evaluate._scoring.scorer`'s `on_batch`); the ETA is then that of the
    work known so far."""
    total = 0

    def add(n: int) -> None:
        nonlocal total
        total += n
        set_total(total)

    return add


def counting(items: Iterable[T], advance: Callable[[int], None], every: int = 256) -> Iterator[T]:
    """`items`, advancing a bar by one per item as they are consumed (in steps of `every`, so a
    bar costs nothing per row), and by the rest at the end."""
    pending = 0
    for item in items:
        yield item
        pending += 1
        if pending == every:
            advance(pending)
            pending = 0
    if pending:
        advance(pending)


def print_unreadable(errors: list[Any], *, shown: int = 5) -> None:
    """Say how many rows of a data file were left out as unreadable, and the first few errors
    (sorted by line), so that no row is dropped without a word."""
    if errors:
        errors.sort(key=lambda exc: exc.line or 0)
        console.print(f"[yellow]{len(errors)} rows could not be read and are left out; first errors:[/yellow]")
        for exc in errors[:shown]:
            console.print(f"  {exc}", markup=False, highlight=False)
