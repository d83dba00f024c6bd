"""`rewardlab score SPEC INPUT`: score a dataset, write one row per input row, print a summary."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import typer

from rewardlab.cli._options import Flag, defaulted, settings_options, settings_values, with_options
from rewardlab.cli._progress import progress_option
from rewardlab.core.sample import Sample
from rewardlab.errors import ConfigError, InputError, RewardLabError, UsageError
from rewardlab.runner.options import (  # dataclasses only: cheap to import at start-up
    ScoreFileOptions,
)


def _field_mapping(prompt: str | None, response: str | None, reference: str | None, extra: list[str]) -> dict[str, str]:
    mapping = {k: v for k, v in (("prompt", prompt), ("response", response), ("reference", reference)) if v}
    names = [f.name for f in dataclasses.fields(Sample)]  # what `Sample.from_dict(fields=...)` maps
    for item in extra:
        name, sep, column = item.partition("=")
        if not sep or name not in names:
            raise UsageError(f"--field expects NAME=COLUMN with NAME in {', '.join(names)}; got {item!r}")
        mapping[name] = column
    return mapping


def default_output(input_path: Path) -> Path:
    """`data.jsonl` -> `data.scored.jsonl` next to it."""
    suffix = ".parquet" if input_path.suffix in (".parquet", ".pq") else ".jsonl"
    stem = input_path.name if input_path.is_dir() else input_path.stem
    return input_path.with_name(f"{stem}.scored{suffix}")


# ScoreFileOptions fields offered on the command line; the defaults come from the dataclass.
OPTIONS = (
    Flag("workers", ("--workers", "-w"), help=(
        "Worker processes (default: all cores). 0 scores in this process, with no timeout, unless --timeout is "
        "given: then one worker process, so the timeout is enforced.")),
    Flag("timeout", help="Seconds one sample may take in a worker process before it becomes error/timeout (a given --timeout is always enforced)."),
    Flag("strict", help="Stop with exit code 1 at the first malformed row."),
    Flag("keep_input", help="Copy the input fields into each output row."),
    Flag("encoding", help="Text encoding of a JSONL input (default: UTF-8, or what a byte-order mark says)."),
    Flag("limit", help="Score only the first N rows (a group reward scores the whole groups of the first N rows)."),
    Flag("resume", help="Resume an interrupted run: rows in the run store are not scored again."),
    Flag("backend", help="local (worker processes) or ray."),
    Flag("ray_address", help="Ray cluster for --backend ray (default: start a local Ray)."),
    Flag("run_store", ("--cache",), help="Run store for --resume/--remote/--backend ray (default: $REWARDLAB_CACHE)."),
    Flag("log_every", help="Rows per logged step with --log."),
)


@with_options(settings_options(ScoreFileOptions, OPTIONS), after="output")
def score_command(
    ctx: typer.Context,
    spec: Path = typer.Argument(..., help="Reward spec (TOML), or a registered reward name (`math.answer`)."),
    input: Path = typer.Argument(..., help="Data: .jsonl, .parquet, or a saved `datasets` folder."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Where to write (.jsonl or .parquet). Default: INPUT.scored.jsonl"),
    prompt_field: str | None = typer.Option(None, "--prompt-field", help="Column holding the prompt."),
    response_field: str | None = typer.Option(None, "--response-field", help="Column holding the response."),
    reference_field: str | None = typer.Option(None, "--reference-field", help="Column holding the reference."),
    field: list[str] = typer.Option([], "--field", help="Other mappings, NAME=COLUMN (e.g. steps=trace)."),
    explode: list[str] = typer.Option([], "--explode", help="List field(s) to score element by element (one output row per element, with explode_index)."),
    progress: bool | None = progress_option(),
    summary_json: Path | None = typer.Option(None, "--summary-json", help="Also write the summary as JSON."),
    max_error_rate: float | None = typer.Option(
        None, "--max-error-rate", min=0.0, max=1.0,
        help="Exit with code 1 when more than this fraction of rows are errors (the output is still written).",
    ),
    remote: str | None = typer.Option(None, "--remote", help="Score on a reward server at URL; SPEC is then the served name or its spec file."),
    token: str | None = typer.Option(None, "--token", envvar="REWARDLAB_TOKEN", help="Bearer token for --remote."),
    log: str | None = typer.Option(None, "--log", help="Log reward statistics every --log-every rows to tensorboard:DIR or wandb:PROJECT (needs the log extra)."),
    **settings: Any,
) -> None:
    """Score every row of INPUT with SPEC; every input row gets exactly one output row."""
    from rewardlab._progress import progress_bar
    from rewardlab.cli._render import console, print_summary
    from rewardlab.runner import score_file

    values = settings_values(OPTIONS, settings)
    if defaulted(ctx, "timeout"):
        # ScoreFileOptions' own default: 60 s for worker processes, none for `-w 0` alone; a
        # --timeout given on the command line is enforced (with -w 0, in one worker process).
        del values["timeout"]
    out = output or default_output(input)
    try:  # the options check their own values; on the command line a bad one is a usage error
        options = ScoreFileOptions(
            **values,
            fields=_field_mapping(prompt_field, response_field, reference_field, field) or None,
            explode=tuple(f for item in explode for f in item.split(",") if f),
        )
    except ConfigError as exc:
        raise UsageError(f"invalid option: {exc}") from exc
    executor, served_hash, logger = None, None, None
    if remote is not None:  # the server computes; this process records the run
        from rewardlab.serve.remote import RemoteExecutor

        executor, served_hash = RemoteExecutor.for_spec(remote, spec, token=token)
    try:
        if log is not None:
            from rewardlab.runner.reward_log import open_logger

            logger = open_logger(log)
        with progress_bar(progress, f"scoring {input.name}") as (advance, set_total):
            summary = score_file(
                spec, input, out, options, executor=executor, spec_hash=served_hash, progress=advance,
                on_total=set_total, logger=logger,
            )
    finally:
        if executor is not None:
            executor.close()
        if logger is not None:
            logger.close()
    print_summary(summary)
    console.print(f"wrote {summary.rows} rows to {out}", markup=False, highlight=False)
    if summary_json is not None:
        summary_json.write_text(json.dumps(summary.to_dict(), indent=2))
    _check_outcome(summary, input, max_error_rate, values["limit"])


def _check_outcome(summary: Any, input: Path, max_error_rate: float | None, limit: int | None) -> None:
    """Exit code 1 for a run that scored nothing (as `eval` does: an empty file is a mistake
    more often than a plan) or whose error rate is above `--max-error-rate`."""
    if summary.rows == 0 and limit != 0:
        raise InputError("no rows; the file needs at least one (blank lines are not rows)", source=str(input))
    errors = sum(summary.total.errors.values())
    if max_error_rate is not None and summary.rows and errors / summary.rows > max_error_rate:
        raise RewardLabError(
            f"{errors} of {summary.rows} rows are errors ({errors / summary.rows:.1%}), above --max-error-rate "
            f"{max_error_rate:g}; the rows are written, with each error's kind and message"
        )


def register(app: typer.Typer) -> None:
    app.command("score")(score_command)
