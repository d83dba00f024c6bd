"""`rewardlab advantages SCORED`: group-relative advantages of a scored file, and what was wasted.

A thin shell over `rewardlab.credit.grouping.advantages_by_group`: reads rows (the output of `rewardlab
score`, or any JSONL/Parquet with a score and a group column), adds an `advantage` column (null
for rows without a score: errors and skips move no baseline), and prints how many groups carried
no signal (zero variance). A row that cannot be read (bad JSON, no group, a score that is not a
finite number) is reported with its line and left out of the output; its group's advantages are
computed over the readable rows, and the exit code stays 0, as for `score`, `eval` and `select`.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from rewardlab._progress import progress_enabled
from rewardlab.cli._progress import progress_option
from rewardlab.core.numbers import json_float
from rewardlab.errors import InputError, UsageError

T = TypeVar("T")


def default_output(input_path: Path) -> Path:
    """`data.scored.jsonl` -> `data.scored.advantages.jsonl` next to it."""
    suffix = ".parquet" if input_path.suffix in (".parquet", ".pq") else ".jsonl"
    return input_path.with_name(f"{input_path.stem}.advantages{suffix}")


def _score_of(row: dict[str, object], column: str, source: str, line: int) -> float | None:
    """The row's score, or None when it has none (status not ok, or a null score)."""
    status = row.get("reward_status", "ok")
    value = row.get(column)
    if status != "ok" or value is None:
        return None
    score = json_float(value)
    if score is None:
        raise InputError(f"column {column!r} holds {type(value).__name__}, not a number", source=source, line=line)
    if not math.isfinite(score):
        raise InputError(f"column {column!r} is {score} on an ok row; fix the reward or mark the row", source=source, line=line)
    return score


def _read(input: Path, parse: Callable[[int, Any], T], on_error: Callable[[InputError], None], progress: bool | None) -> list[T]:
    """`parse(line, raw)` of every row of `input`, with a bar over the rows read."""
    from rewardlab._progress import progress_bar
    from rewardlab.cli._render import counting
    from rewardlab.runner.io import count_rows, iter_raw_rows, parse_each

    with progress_bar(progress, f"reading {input.name}") as (advance, set_total):
        if progress_enabled(progress):
            set_total(count_rows(input))
        parsed, _ = parse_each(counting(iter_raw_rows(input), advance), parse, on_error)
    return parsed


def advantages_command(
    input: Path = typer.Argument(..., help="Scored rows (.jsonl or .parquet), e.g. from `rewardlab score`."),
    group_by: str = typer.Option("group", "--group-by", "-g", help="Column holding the prompt (group) id."),
    estimator: str | None = typer.Option(
        None, "--estimator", "-e",
        help="Outcome estimator, one of rewardlab.credit.grouping.OUTCOME_ESTIMATORS (default: that of rewardlab.credit.grouping.advantages_by_group).",
    ),
    score_column: str = typer.Option("reward", "--score-column", help="Column holding the score."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Where to write. Default: INPUT.advantages.jsonl"),
    progress: bool | None = progress_option("Progress bar over the rows read, with rate and ETA (default: on when stderr is a terminal)."),
) -> None:
    """Add an `advantage` column computed per group; report zero-variance groups."""
    import numpy as np

    from rewardlab.cli._render import console, print_unreadable
    from rewardlab.credit.grouping import OUTCOME_ESTIMATORS, advantages_by_group
    from rewardlab.runner.io import RowWriter, decode_row

    if estimator is None:  # the library's default, declared by `advantages_by_group`
        estimator = str(inspect.signature(advantages_by_group).parameters["estimator"].default)
    if estimator not in OUTCOME_ESTIMATORS:
        raise UsageError(f"--estimator must be one of {', '.join(OUTCOME_ESTIMATORS)}; got {estimator!r}")
    source = str(input)

    def parse(line: int, raw: object) -> tuple[dict[str, object], float | None, str | None]:
        row = decode_row(raw, source, line)  # type: ignore[arg-type]
        score = _score_of(row, score_column, source, line)
        group = row.get(group_by)
        if group is None and score is not None:
            raise InputError(f"no {group_by!r} column; choose the group column with --group-by", source=source, line=line)
        return row, score, None if group is None else str(group)

    # A bad row is reported and left out (the one keep-going loop, `parse_each`); each group's
    # advantages are then computed over its readable rows only.
    unreadable: list[InputError] = []
    parsed = _read(input, parse, unreadable.append, progress)
    print_unreadable(unreadable)
    if not parsed:
        bad = f" ({len(unreadable)} could not be read)" if unreadable else ""
        raise InputError(f"no rows to read{bad}; the file needs at least one readable row", source=source)
    rows = [r for r, _, _ in parsed]
    scores = [s for _, s, _ in parsed]
    groups = [g for _, _, g in parsed]
    if all(s is None for s in scores):
        raise InputError(
            f"no row has an ok score in column {score_column!r}; score the file first (`rewardlab score`) "
            "or name the score column with --score-column", source=source,
        )
    placed = np.array([g is not None for g in groups])
    ok = np.array([s is not None for s in scores])[placed]
    values = np.array([np.nan if s is None else s for s in scores], dtype=np.float64)[placed]
    ids = np.array([g for g in groups if g is not None], dtype=object)
    result = advantages_by_group(values, ids, ok, estimator=estimator)
    advantages = np.full(len(rows), np.nan)
    advantages[placed] = result.advantages
    unscored = int((~placed).sum()) + result.unscored_rows
    out = output or default_output(input)
    with RowWriter(out) as writer:
        for row, adv in zip(rows, advantages, strict=True):
            writer.write({**row, "advantage": None if np.isnan(adv) else float(adv)})
    share = result.zero_variance_groups / result.groups
    console.print(
        f"{len(rows)} rows in {result.groups} groups ({estimator}): "
        f"{result.zero_variance_groups} zero-variance groups ({share:.0%}) give no signal; "
        f"{unscored} rows had no score"
    )
    console.print(f"wrote {len(rows)} rows to {out}")


def register(app: typer.Typer) -> None:
    app.command("advantages")(advantages_command)
