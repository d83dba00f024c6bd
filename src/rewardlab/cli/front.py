"""`rewardlab front SCORED`: the front report of a scored file's objective columns (HTML + JSON)."""

from __future__ import annotations

from pathlib import Path

import typer

from rewardlab.errors import UsageError


def _reference(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(part) for part in text.split(",")]
    except ValueError as exc:
        raise UsageError(f"--ref must be numbers separated by commas (one per objective), got {text!r}") from exc


_REF_HELP = "Hypervolume reference point, one number per objective, comma-separated (default: each objective's minimum)."


def front_command(
    scored: Path = typer.Argument(..., help="A file written by `rewardlab score` with a spec that declares objectives."),
    out: Path = typer.Option(Path("front-report"), "--out", "-o", help="Directory for front.html and front.json."),
    ref: str | None = typer.Option(None, "--ref", help=_REF_HELP),
) -> int:
    """Report where the reward vectors of SCORED sit: per-objective stats, the non-dominated
    vectors, the hypervolume and a plot of the front."""
    from rewardlab.cli._render import console
    from rewardlab.evaluate.front import front_report, read_scored_vectors, write_front

    report = front_report(read_scored_vectors(scored), ref=_reference(ref))
    html, js = write_front(report, out)
    for key, value in report.summary:
        console.print(f"{key}: {value}", markup=False, highlight=False)
    console.print(f"wrote {html} and {js}", markup=False, highlight=False)
    return 0


def register(app: typer.Typer) -> None:
    app.command("front")(front_command)
