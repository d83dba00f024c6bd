"""`rewardlab eval [SPEC] --data FILE`: benchmark numbers for a reward, table + HTML/JSON report."""

from __future__ import annotations

from pathlib import Path

import typer

from rewardlab.errors import UsageError


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


def eval_command(
    spec: Path | None = typer.Argument(None, help="Reward spec (TOML) to evaluate; optional for candidate files with scores."),
    data: Path = typer.Option(..., "--data", "-d", help="Candidate sets (list of responses per row) or pairs (chosen/rejected)."),
    out: Path = typer.Option(Path("rewardlab-eval"), "--out", "-o", help="Directory for report.html and report.json."),
    mode: str = typer.Option("auto", "--mode", help="auto | candidates | pairs | bestofk (RewardBench 2) | rmbench | process (ProcessBench) | prmbench | judge (JudgeBench) | rollouts (a `rewardlab score` output file)."),
    gold: Path | None = typer.Option(None, "--gold", help="Gold reward spec for candidate sets (e.g. the maths verifier); default: the labels column."),
    responses: str = typer.Option("code", "--responses", help="Candidate column: list of responses."),
    reference: str = typer.Option("gt", "--reference", help="Candidate column: gold answer."),
    labels: str = typer.Option("score", "--labels", help="Candidate column: per-response correctness labels."),
    scores: str = typer.Option("pred_score", "--scores", help="Candidate column: per-response scores shipped in the file."),
    answers: str = typer.Option("pred", "--answers", help="Candidate column: per-response extracted answers (votes)."),
    prompt: str = typer.Option("question", "--prompt", help="Candidate column: the problem."),
    seed: int = typer.Option(0, "--seed", help="Seed of every bootstrap interval."),
    workers: int = typer.Option(0, "--workers", "-w", help="Worker processes (0 = in-process)."),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds per sample (runs in a worker pool)."),
    threshold: float = typer.Option(0.5, "--threshold", help="ProcessBench: a step scoring below this is predicted wrong; PRMBench: a step scoring above it is predicted correct."),
    compare: list[Path] = typer.Option([], "--compare", help="Another reward spec to compare with SPEC by paired tests (repeatable)."),
) -> None:
    """Evaluate a reward on candidate sets, preference pairs, benchmarks or scored rollouts.

    Candidate sets: best-of-N, votes, pass@k, calibration. Pairs: accuracy per subset with the
    length baseline. Also best-of-k (RewardBench 2), RM-Bench grids, ProcessBench F1 and rollout
    diagnostics. Bootstrap CIs on every number; HTML and JSON report in --out.
    """
    from rewardlab.evaluate.datasets import CandidateColumns
    from rewardlab.evaluate.run_eval import MODES, run_eval

    if mode != "auto" and mode not in MODES:
        raise UsageError(f"--mode must be auto or one of {', '.join(MODES)}; got {mode!r}")
    columns = CandidateColumns(prompt=prompt, responses=responses, reference=reference, labels=labels or None,
                               scores=scores or None, answers=answers or None)
    report = run_eval(spec, data, mode=mode, gold=gold, columns=columns, seed=seed, workers=workers, timeout=timeout, threshold=threshold, compare=compare)  # type: ignore[arg-type]
    report.write(out)
    print_report_summary(report, out)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
