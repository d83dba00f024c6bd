"""`rewardlab init [PATH] [--use NAME...]`: write a starter spec to edit, then check it;
`rewardlab init --examples`: write the README's example files into ./examples/."""

from __future__ import annotations

from pathlib import Path

import typer


def init_command(
    path: Path = typer.Argument(Path("reward.toml"), help="Where to write the spec."),
    use: list[str] = typer.Option([], "--use", "-u", help="A registered reward to put in it (repeatable); none: the demo's maths reward."),
    force: bool = typer.Option(False, "--force", help="Overwrite PATH if it exists."),
    examples: bool = typer.Option(False, "--examples", help="Instead, write the README's examples/quickstart.toml and .jsonl here."),
) -> int:
    """Write a starter reward spec (its components' parameters as comments), then check it."""
    if examples:
        return _write_examples(Path("examples"), force=force)
    from rewardlab.cli._render import console
    from rewardlab.compose import build
    from rewardlab.compose.starter import starter_spec
    from rewardlab.errors import DependencyError, InputError

    if path.exists() and not force:
        raise InputError("exists already; pass --force to overwrite it, or name another file", source=str(path))
    text = starter_spec(use, path=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    console.print(f"wrote {path}", markup=False, highlight=False)
    try:
        build(path)
    except DependencyError as exc:  # written all the same: it runs once the extra is installed
        console.print(f"note: {exc}", markup=False, highlight=False)
    console.print(f"next: edit it, `rewardlab check {path}`, `rewardlab score {path} data.jsonl`", markup=False, highlight=False)
    return 0


EXAMPLES = ("quickstart.toml", "quickstart.jsonl")  # bundled in rewardlab.demo


def _write_examples(folder: Path, *, force: bool) -> int:
    """Copy the bundled example files the README uses into `folder`, so its commands run as
    written from a pip install too (the repository has them already)."""
    from importlib.resources import files

    from rewardlab.cli._render import console
    from rewardlab.errors import InputError

    targets = [folder / name for name in EXAMPLES]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not force:
        raise InputError("exists already; pass --force to overwrite it", source=existing[0])
    folder.mkdir(parents=True, exist_ok=True)
    for name, target in zip(EXAMPLES, targets, strict=True):
        target.write_bytes(files("rewardlab.demo").joinpath(name).read_bytes())
        console.print(f"wrote {target}", markup=False, highlight=False)
    return 0


def register(app: typer.Typer) -> None:
    app.command("init")(init_command)
