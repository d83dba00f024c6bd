"""`rewardlab import-grader GRADER.json`: an OpenAI grader config as a rewardlab spec."""

from __future__ import annotations

from pathlib import Path

import typer


def import_grader_command(
    grader: Path = typer.Argument(..., help="OpenAI grader JSON (string_check, text_similarity, score_model, python, multi)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the TOML spec here (default: stdout)."),
    judge_base_url: str = typer.Option(
        "https://api.openai.com/v1", "--judge-base-url", help="OpenAI-compatible endpoint for score_model graders."
    ),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the judge's API key."),
) -> int:
    """Convert an OpenAI grader to a rewardlab TOML spec (checked by building it)."""
    from rewardlab.cli._render import console
    from rewardlab.integrations.openai_graders import import_grader

    _, text = import_grader(grader, judge_base_url=judge_base_url, api_key_env=api_key_env)
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        console.print(f"[green]✓[/] wrote {output}")
    return 0


def register(app: typer.Typer) -> None:
    app.command("import-grader")(import_grader_command)
