"""`rewardlab audit SPEC --data FILE`: hacking probes, cross-checks and diagnostics of a reward."""

from __future__ import annotations

from pathlib import Path

import typer

from rewardlab.cli._options import Flag, settings_options, settings_values, with_options
from rewardlab.cli._progress import progress_option
from rewardlab.errors import InputError, UsageError
from rewardlab.evaluate.audit.options import ProbeOptions  # no numpy: cheap to import at start-up

_FIELDS = ("prompt", "response", "reference", "steps", "id", "group", "meta")


def field_mapping(items: list[str]) -> dict[str, str] | None:
    """`["response=completion", ...]` as `{"response": "completion"}` (Sample field -> column)."""
    mapping = {}
    for item in items:
        name, sep, column = item.partition("=")
        if not sep or name not in _FIELDS or not column:
            raise UsageError(f"--field expects NAME=COLUMN with NAME in {', '.join(_FIELDS)}; got {item!r}")
        mapping[name] = column
    return mapping or None


# ProbeOptions fields offered on the command line; defaults and help come from the dataclass
PROBE_OPTIONS = (Flag("counterfactuals"), Flag("alpha"), Flag("min_effect"))


@with_options(settings_options(ProbeOptions, PROBE_OPTIONS), after="fail_on_flag")
def audit_command(
    spec: Path = typer.Argument(..., help="Reward spec (TOML) to audit."),
    data: Path = typer.Option(..., "--data", "-d", help="Samples (.jsonl/.parquet/saved dataset)."),
    out: Path = typer.Option(Path("rewardlab-audit"), "--out", "-o", help="Directory for report.html and report.json."),
    probe: list[str] = typer.Option([], "--probe", help="Run only these probes (repeatable); default all."),
    against: Path | None = typer.Option(None, "--against", help="A second reward spec to cross-check against."),
    label_field: str | None = typer.Option(None, "--label-field", help="Sample meta field with true/false labels to cross-check against."),
    group_by: str | None = typer.Option(None, "--group-by", help="Meta field to group disagreements by (e.g. level)."),
    field: list[str] = typer.Option([], "--field", help="Map a Sample field to a column, NAME=COLUMN (e.g. response=completion)."),
    candidates: bool = typer.Option(False, "--candidates", help="DATA is a candidate-set file (list of responses per row, Qwen eval format); labels become meta 'label'."),
    limit: int | None = typer.Option(None, "--limit", help="Audit a seeded random subset of N samples."),
    seed: int = typer.Option(0, "--seed", help="Seed of the subset."),
    workers: int = typer.Option(0, "--workers", "-w", help="Worker processes (0 = in this process, or one worker process with --timeout)."),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds per sample (runs in a worker pool)."),
    fail_on_flag: bool = typer.Option(False, "--fail-on-flag", help="Exit 1 when any probe is flagged (for CI)."),
    progress: bool | None = progress_option("Progress bar over the samples scored (counterfactuals included), with rate and ETA (default: on when stderr is a terminal)."),
    **options: float | bool,
) -> int:
    """Probe a reward for hacks (hedging, padding, grader injection, format changes...).

    Probes run on the data and on wrong-answer counterfactuals of it; prints a one-line verdict,
    which probes are hacks and by how much, with examples; optionally cross-checks the reward
    against another one or the data's labels. HTML and JSON report in --out.
    """
    from rewardlab._progress import progress_bar
    from rewardlab.cli._render import growing_total, print_unreadable
    from rewardlab.cli.eval import print_report_summary
    from rewardlab.evaluate.audit.probes import probe_by_name
    from rewardlab.evaluate.audit.run_audit import audit_reward
    from rewardlab.runner.candidate_rows import CandidateColumns

    unreadable: list[InputError] = []  # rows left out: printed here, listed in the report
    try:
        with progress_bar(progress, f"auditing on {data.name}", unit="samples", hidden_until_total=True) as (advance, set_total):
            report = audit_reward(
                spec, data, probes=probe_by_name(probe or None), fields=field_mapping(field), candidates=CandidateColumns() if candidates else None,
                limit=limit, seed=seed, against=against, label_field=label_field, group_by=group_by,
                workers=workers, timeout=timeout, probe_options=ProbeOptions(**settings_values(PROBE_OPTIONS, options)),
                on_error=unreadable.append, progress=advance, on_batch=growing_total(set_total),
            )
    finally:  # also when no row was left: the reasons come before the error
        print_unreadable(unreadable)
    report.write(out)
    print_report_summary(report, out)
    return 1 if fail_on_flag and report.numbers["flagged_probes"] else 0


def register(app: typer.Typer) -> None:
    app.command("audit")(audit_command)
