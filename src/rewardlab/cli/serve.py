"""`rewardlab serve SPEC... --port N`: host reward specs over HTTP (see docs/serve.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from rewardlab.cli._options import Flag, defaulted, settings_options, settings_values, with_options
from rewardlab.errors import UsageError
from rewardlab.serve.launch import run_server  # uvicorn and the app are imported when it runs
from rewardlab.serve.settings import ServeSettings  # pydantic only: cheap to import at start-up

if TYPE_CHECKING:
    from rewardlab.serve.settings import RewardLimits


# run_server's keyword arguments offered on the command line; defaults and help from its signature and docstring
SERVER = (
    Flag("host"),
    Flag("port", ("--port", "-p")),
    Flag("cache_max_rows"),
    Flag("ray_address", help="Ray cluster to join with --backend ray (default: start a local one)."),
    Flag("log_level"),
    Flag("forwarded_allow_ips", help="Comma-separated reverse-proxy addresses whose X-Forwarded-For is believed (default: none; the socket peer is the client)."),
    Flag("log", help="Log reward statistics per computed batch to tensorboard:DIR or wandb:PROJECT (needs the log extra)."),
)

# ServeSettings fields offered on the command line; defaults and help come from the fields.
SETTINGS = (
    Flag("backend"),
    Flag("workers", ("--workers", "-w")),
    Flag("sample_timeout", ("--timeout",)),
    Flag("token", help="Require 'Authorization: Bearer TOKEN' (or set REWARDLAB_TOKEN).", envvar="REWARDLAB_TOKEN"),
    Flag("max_batch"),
    Flag("max_queue"),
    Flag("max_samples"),
    Flag("max_body_bytes", ("--max-body-mb",), help="Request body limit in MiB (413 above).", scale=1024 * 1024),
    Flag("concurrency"),
    Flag("cache_write_delay_ms"),
    Flag("request_timeout"),
    Flag("drain_timeout"),
    Flag("openrlhf_reward"),
    Flag("openrlhf_error_reward"),
    Flag(
        "openrlhf_trusted_networks", ("--openrlhf-trusted-network",),
        help="CIDR whose clients may POST /get_reward without --token (OpenRLHF sends no header); repeatable.",
    ),
)


@with_options([*settings_options(run_server, SERVER), *settings_options(ServeSettings, SETTINGS)], after="specs")
def serve_command(
    ctx: typer.Context,
    specs: list[str] = typer.Argument(..., help="Reward specs (TOML); NAME=PATH serves a spec under NAME."),
    cache: Path | None = typer.Option(None, "--cache", help="Result cache file (default: $REWARDLAB_CACHE or ~/.cache/rewardlab/results.sqlite)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not cache results."),
    openrlhf_tokenizer: str | None = typer.Option(None, "--openrlhf-tokenizer", help="Local tokenizer whose special tokens are removed from /get_reward queries (default: the common chat-template tokens)."),
    openrlhf_keep_special_tokens: bool = typer.Option(False, "--openrlhf-keep-special-tokens", help="Score /get_reward queries with their special tokens."),
    per_reward: list[str] = typer.Option([], "--set", help="Per-reward override NAME.KEY=VALUE, KEY in workers, timeout, max-batch, concurrency, max-queue, request-timeout."),
    **settings: Any,
) -> None:
    """Serve SPECs: POST /v1/rewards/{name}:score, POST /get_reward (OpenRLHF), /metrics."""
    from pydantic import ValidationError

    from rewardlab.store.sqlite import default_cache_path

    values = settings_values(SETTINGS, settings)
    values["token"] = values["token"] or None
    if values["workers"] == 0 and values["backend"] == "pool" and defaulted(ctx, "sample_timeout"):
        del values["sample_timeout"]  # `-w 0` alone is the server process; a given --timeout is enforced
    values["openrlhf_special_tokens"] = _special_tokens(openrlhf_tokenizer, openrlhf_keep_special_tokens)
    try:
        server_settings = ServeSettings(**values, per_reward=_overrides(per_reward))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"invalid server option: {problems}") from exc
    server = settings_values(SERVER, settings)
    if values["token"] is None and server["host"] not in ("127.0.0.1", "localhost", "::1") and not os.environ.get("REWARDLAB_ALLOW_OPEN"):
        typer.echo(f"warning: serving on {server['host']} without --token; anyone who can reach it can use it", err=True)
    cache_path = None if no_cache else (cache or default_cache_path())
    run_server(specs, server_settings, cache_path=cache_path, **server)


def _special_tokens(tokenizer: str | None, keep: bool) -> tuple[str, ...] | None:
    """What `/get_reward` removes from queries: none, a tokenizer's own list, or the default."""
    if keep and tokenizer:
        raise UsageError("--openrlhf-keep-special-tokens and --openrlhf-tokenizer contradict each other; pass one")
    if keep:
        return ()
    if tokenizer:
        from rewardlab.integrations.openrlhf import special_tokens_of

        return special_tokens_of(tokenizer)
    return None


_KEYS = {"timeout": "sample_timeout", "max-batch": "max_batch", "max-queue": "max_queue", "request-timeout": "request_timeout"}


def _overrides(items: list[str]) -> dict[str, RewardLimits]:
    """``["code.workers=8", "code.timeout=30"]`` -> ``{"code": RewardLimits(workers=8, sample_timeout=30)}``."""
    from rewardlab.serve.settings import RewardLimits

    out: dict[str, dict[str, str]] = {}
    for item in items:
        target, sep, value = item.partition("=")
        name, dot, key = target.rpartition(".")
        if not sep or not dot or not name:
            raise UsageError(f"--set expects NAME.KEY=VALUE (e.g. code.workers=8), got {item!r}")
        out.setdefault(name, {})[_KEYS.get(key, key.replace("-", "_"))] = value
    return {name: RewardLimits.model_validate(values) for name, values in out.items()}


def register(app: typer.Typer) -> None:
    from rewardlab.cli.cache import cache_app

    app.command("serve")(serve_command)
    app.add_typer(cache_app, name="cache")
