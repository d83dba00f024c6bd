"""`rewardlab demo`: the product's main job in miniature, on bundled data.

Scores a small bundled RLVR dataset (with a few damaged rows, as real data has) with the
bundled spec, prints the summary and writes the scored rows.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

import typer

from rewardlab.cli._progress import progress_option


def demo_command(
    output: Path = typer.Option(Path("demo-output/scored.jsonl"), "--output", "-o", help="Where to write the scored rows."),
    workers: int | None = typer.Option(None, "--workers", "-w", help="Worker processes (default: all cores; 0 = in this process, no timeout)."),
    progress: bool | None = progress_option(),
) -> None:
    """Score the bundled demo dataset with the bundled spec and print the summary."""
    from rewardlab._progress import progress_bar
    from rewardlab.cli._render import console, print_summary
    from rewardlab.compose import build
    from rewardlab.core import spec_hash
    from rewardlab.runner import ScoreFileOptions, score_file

    demo = files("rewardlab.demo")
    with as_file(demo / "rlvr.toml") as spec_path, as_file(demo / "rlvr_sample.jsonl") as data_path:
        reward = build(spec_path)
        console.print(f"[bold]spec[/] {spec_path.name} (spec_hash {spec_hash(reward)}):")
        console.print(repr(reward), highlight=False, markup=False)
        with progress_bar(progress, f"scoring {data_path.name}") as (advance, set_total):
            summary = score_file(reward, data_path, output, ScoreFileOptions(workers=workers, timeout=None if workers == 0 else 30),
                                 progress=advance, on_total=set_total)  # fmt: skip
    print_summary(summary, title="rewardlab demo")
    console.print(f"wrote {summary.rows} rows to {output} — every input row has an output row;")
    console.print("rows that could not be scored say why in reward_status / reward_error.")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
