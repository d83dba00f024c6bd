"""`rewardlab eval [SPEC] --data FILE`: benchmark numbers for a reward, table + HTML/JSON report."""

from __future__ import annotations

from pathlib import Path

import typer

from rewardlab.cli._columns import EVAL_COLUMNS, candidate_columns
from rewardlab.cli._options import settings_options, with_options
from rewardlab.cli._progress import progress_option
from rewardlab.errors import InputError, UsageError
from rewardlab.runner.candidate_rows import CandidateColumns


def print_report_summary(report: object, out_dir: Path) -> None:
    """The report's summary as a rich table, then where the files are."""
    from rich.table import Table

    from rewardlab.cli._render import console

    verdict = getattr(report, "verdict", "")
    if verdict:
        console.print(verdict, markup=False, highlight=False)
    table = Table(title=report.title)  # type: ignore[attr-defined]
    table.add_column("")
    table.add_column("value")
    for key, value in report.summary:  # type: ignore[attr-defined]
        table.add_row(key, value)
    console.print(table)
    for section in report.sections[:1]:  # type: ignore[attr-defined]  # the headline table (probes, selection, subsets)
        if section.columns and section.rows:
            keep = section.terminal_cols or tuple(range(len(section.columns)))
            detail = Table(title=section.title)
            for i in keep:
                detail.add_column(section.columns[i])
            for row in section.rows[:30]:
                detail.add_row(*(str(row[i]) for i in keep))
            console.print(detail)
    console.print(f"wrote {out_dir / 'report.html'} and {out_dir / 'report.json'}")


# CandidateColumns fields offered on the command line ("" turns an optional column off)
COLUMNS = EVAL_COLUMNS


@with_options(settings_options(CandidateColumns, COLUMNS), after="gold")
def eval_command(
    spec: Path | None = typer.Argument(None, help="Reward spec (TOML) to evaluate; optional for candidate files with scores."),
    data: Path = typer.Option(..., "--data", "-d", help="Candidate sets (list of responses per row) or pairs (chosen/rejected)."),
    out: Path = typer.Option(Path("rewardlab-eval"), "--out", "-o", help="Directory for report.html and report.json."),
    mode: str = typer.Option("auto", "--mode", help="auto | candidates | pairs | bestofk (RewardBench 2) | rmbench | process (ProcessBench) | prmbench | judge (JudgeBench) | rollouts (a `rewardlab score` output file)."),
    gold: Path | None = typer.Option(None, "--gold", help="Gold reward spec for candidate sets (e.g. the maths verifier); default: the labels column."),
    seed: int = typer.Option(0, "--seed", help="Seed of every bootstrap interval."),
    workers: int = typer.Option(0, "--workers", "-w", help="Worker processes (0 = in this process, or one worker process with --timeout)."),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds per sample (runs in a worker pool)."),
    threshold: float = typer.Option(0.5, "--threshold", help="ProcessBench: a step scoring below this is predicted wrong; PRMBench: a step scoring above it is predicted correct."),
    compare: list[Path] = typer.Option([], "--compare", help="Another reward spec to compare with SPEC by paired tests (repeatable)."),
    progress: bool | None = progress_option("Progress bar over the samples scored (every reward of the run), with rate and ETA (default: on when stderr is a terminal)."),
    **columns: str,
) -> None:
    """Evaluate a reward on candidate sets, preference pairs, benchmarks or scored rollouts.

    Candidate sets: best-of-N, votes, pass@k, calibration. Pairs: accuracy per subset with the
    length baseline. Also best-of-k (RewardBench 2), RM-Bench grids, ProcessBench F1 and rollout
    diagnostics. Bootstrap CIs on every number; HTML and JSON report in --out.
    """
    from rewardlab.evaluate.run_eval import MODES, run_eval

    if mode != "auto" and mode not in MODES:
        raise UsageError(f"--mode must be auto or one of {', '.join(MODES)}; got {mode!r}")
    from rewardlab._progress import progress_bar
    from rewardlab.cli._render import growing_total, print_unreadable

    unreadable: list[InputError] = []  # rows left out: printed here, listed in the report
    try:
        with progress_bar(progress, f"scoring {data.name}", unit="samples", hidden_until_total=True) as (advance, set_total):
            report = run_eval(spec, data, mode=mode, gold=gold, columns=candidate_columns(COLUMNS, columns), seed=seed, workers=workers,  # type: ignore[arg-type]
                              timeout=timeout, threshold=threshold, compare=compare, on_error=unreadable.append,
                              progress=advance, on_batch=growing_total(set_total))  # fmt: skip
    finally:  # also when no row was left: the reasons come before the error
        print_unreadable(unreadable)
    report.write(out)
    print_report_summary(report, out)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
