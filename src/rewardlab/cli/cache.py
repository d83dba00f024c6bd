"""`rewardlab cache stats|clear`: inspect or empty the result cache and run store."""

from __future__ import annotations

import json
from pathlib import Path

import typer

cache_app = typer.Typer(help="Inspect or clear the result cache and run store.", no_args_is_help=True)

_PATH = typer.Option(None, "--cache", help="Cache file (default: $REWARDLAB_CACHE or ~/.cache/rewardlab/results.sqlite).")


def _open(path: Path | None):  # type: ignore[no-untyped-def]
    """The store at `path`, which must exist: opening it would create an empty one, so a
    mistyped path would report an empty cache (and leave a new file behind)."""
    from rewardlab.errors import InputError
    from rewardlab.store import ResultStore
    from rewardlab.store.sqlite import default_cache_path

    path = path or default_cache_path()
    if not Path(path).is_file():
        raise InputError("no cache file here (one is made by `rewardlab score --cache` or `rewardlab serve --cache`)",
                         source=str(path))  # fmt: skip
    return ResultStore(path)


@cache_app.command("stats")
def stats(
    cache: Path | None = _PATH,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Rows, distinct specs, recorded runs and file size."""
    with _open(cache) as store:
        info = store.stats().to_dict()
    if as_json:
        typer.echo(json.dumps(info))
        return
    for key, value in info.items():
        typer.echo(f"{key:>9}: {value}")


@cache_app.command("clear")
def clear(
    cache: Path | None = _PATH,
    spec_hash: str | None = typer.Option(None, "--spec-hash", help="Only results of this spec hash (runs are kept)."),
) -> None:
    """Delete cached results (and recorded runs, unless --spec-hash is given)."""
    with _open(cache) as store:
        deleted = store.clear(spec_hash)
    typer.echo(f"deleted {deleted} cached results" + ("" if spec_hash else " and every recorded run"))
