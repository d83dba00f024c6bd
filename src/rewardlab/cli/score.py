"""`rewardlab score SPEC INPUT`: score a dataset, write one row per input row, print a summary."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from rewardlab.errors import UsageError


def _field_mapping(prompt: str | None, response: str | None, reference: str | None, extra: list[str]) -> dict[str, str]:
    mapping = {k: v for k, v in (("prompt", prompt), ("response", response), ("reference", reference)) if v}
    for item in extra:
        name, sep, column = item.partition("=")
        if not sep or name not in ("prompt", "response", "reference", "steps", "id", "group", "meta"):
            raise UsageError(f"--field expects NAME=COLUMN with NAME in prompt, response, reference, steps, id, group, meta; got {item!r}")
        mapping[name] = column
    return mapping


def default_output(input_path: Path) -> Path:
    """`data.jsonl` -> `data.scored.jsonl` next to it."""
    suffix = ".parquet" if input_path.suffix in (".parquet", ".pq") else ".jsonl"
    stem = input_path.name if input_path.is_dir() else input_path.stem
    return input_path.with_name(f"{stem}.scored{suffix}")


def score_command(
    spec: Path = typer.Argument(..., help="Reward spec (TOML)."),
    input: Path = typer.Argument(..., help="Data: .jsonl, .parquet, or a saved `datasets` folder."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Where to write (.jsonl or .parquet). Default: INPUT.scored.jsonl"),
    workers: int | None = typer.Option(None, "--workers", "-w", help="Worker processes (default: all cores; 0 = in-process, no timeouts)."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds one sample may take before it becomes error/timeout."),
    prompt_field: str | None = typer.Option(None, "--prompt-field", help="Column holding the prompt."),
    response_field: str | None = typer.Option(None, "--response-field", help="Column holding the response."),
    reference_field: str | None = typer.Option(None, "--reference-field", help="Column holding the reference."),
    field: list[str] = typer.Option([], "--field", help="Other mappings, NAME=COLUMN (e.g. steps=trace)."),
    strict: bool = typer.Option(False, "--strict", help="Stop with exit code 1 at the first malformed row."),
    keep_input: bool = typer.Option(True, "--keep-input/--no-keep-input", help="Copy the input fields into each output row."),
    limit: int | None = typer.Option(None, "--limit", help="Score only the first N rows."),
    explode: list[str] = typer.Option([], "--explode", help="List field(s) to score element by element (one output row per element, with explode_index)."),
    progress: bool = typer.Option(sys.stderr.isatty(), "--progress/--no-progress", help="Progress bar with rate and ETA."),
    summary_json: Path | None = typer.Option(None, "--summary-json", help="Also write the summary as JSON."),
    resume: bool = typer.Option(False, "--resume", help="Resume an interrupted run: rows in the run store are not scored again."),
    remote: str | None = typer.Option(None, "--remote", help="Score on a reward server at URL; SPEC is then the served name or its spec file."),
    backend: str = typer.Option("local", "--backend", help="local (worker processes) or ray."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Ray cluster for --backend ray (default: start a local Ray)."),
    token: str | None = typer.Option(None, "--token", envvar="REWARDLAB_TOKEN", help="Bearer token for --remote."),
    run_store: Path | None = typer.Option(None, "--cache", help="Run store for --resume/--remote/--backend ray (default: $REWARDLAB_CACHE)."),
) -> None:
    """Score every row of INPUT with SPEC; every input row gets exactly one output row."""
    from rewardlab.cli._render import console, print_summary, progress_bar
    from rewardlab.runner import ScoreFileOptions, score_file

    if workers is not None and workers < 0:
        raise UsageError("--workers must be >= 0")
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    out = output or default_output(input)
    if backend not in ("local", "ray"):
        raise UsageError(f"unknown --backend {backend!r}; use 'local' or 'ray'")
    options = ScoreFileOptions(
        workers=workers,
        timeout=timeout,
        fields=_field_mapping(prompt_field, response_field, reference_field, field) or None,
        keep_input=keep_input,
        strict=strict,
        limit=limit,
        explode=tuple(f for item in explode for f in item.split(",") if f),
        resume=resume,
        backend="ray" if backend == "ray" else "local",
        ray_address=ray_address,
        run_store=run_store,
    )
    executor, served_hash = None, None
    if remote is not None:  # the server computes; this process records the run
        from rewardlab.serve.remote import RemoteExecutor

        executor, served_hash = RemoteExecutor.for_spec(remote, spec, token=token)
    try:
        with progress_bar(progress, f"scoring {input.name}") as (advance, set_total):
            summary = score_file(
                spec, input, out, options, executor=executor, spec_hash=served_hash, progress=advance, on_total=set_total
            )
    finally:
        if executor is not None:
            executor.close()
    print_summary(summary)
    console.print(f"wrote {summary.rows} rows to {out}")
    if summary_json is not None:
        summary_json.write_text(json.dumps(summary.to_dict(), indent=2))


def register(app: typer.Typer) -> None:
    app.command("score")(score_command)
