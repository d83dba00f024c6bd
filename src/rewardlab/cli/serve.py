"""`rewardlab serve SPEC... --port N`: host reward specs over HTTP (see docs/serve.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rewardlab.errors import UsageError

if TYPE_CHECKING:
    from rewardlab.serve.settings import RewardLimits


def serve_command(
    specs: list[str] = typer.Argument(..., help="Reward specs (TOML); NAME=PATH serves a spec under NAME."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (0.0.0.0 for every interface)."),
    port: int = typer.Option(8000, "--port", "-p", help="TCP port."),
    backend: str = typer.Option("pool", "--backend", help="pool (worker processes), inline (server threads) or ray."),
    workers: int = typer.Option(2, "--workers", "-w", help="Worker processes per reward (pool backend)."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds per sample before its worker is killed."),
    cache: Path | None = typer.Option(None, "--cache", help="Result cache file (default: $REWARDLAB_CACHE or ~/.cache/rewardlab/results.sqlite)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not cache results."),
    cache_max_rows: int = typer.Option(1_000_000, "--cache-max-rows", help="Cached results kept (least recently used are evicted)."),
    token: str | None = typer.Option(None, "--token", envvar="REWARDLAB_TOKEN", help="Require 'Authorization: Bearer TOKEN' (or set REWARDLAB_TOKEN)."),
    max_batch: int = typer.Option(256, "--max-batch", help="Samples per backend batch, across clients."),
    max_queue: int = typer.Option(16384, "--max-queue", help="Queued samples per reward before 429."),
    max_samples: int = typer.Option(4096, "--max-samples", help="Samples per request before 413."),
    max_body_mb: float = typer.Option(32.0, "--max-body-mb", help="Request body limit in MiB (413 above)."),
    concurrency: int = typer.Option(2, "--concurrency", help="Backend batches in flight per reward."),
    cache_write_delay_ms: float = typer.Option(50.0, "--cache-write-delay-ms", help="Write results to the cache once a reward has been idle this long (0: at once)."),
    request_timeout: float = typer.Option(600.0, "--request-timeout", help="Seconds a request may wait before 504."),
    openrlhf_reward: str | None = typer.Option(None, "--openrlhf-reward", help="Reward behind POST /get_reward (default: the first)."),
    openrlhf_error_reward: float | None = typer.Option(None, "--openrlhf-error-reward", help="Send this for error rows to OpenRLHF (default: refuse the batch)."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Ray cluster to join with --backend ray (default: start a local one)."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn log level."),
    per_reward: list[str] = typer.Option([], "--set", help="Per-reward override NAME.KEY=VALUE, KEY in workers, timeout, max-batch, concurrency, max-queue, request-timeout."),
) -> None:
    """Serve SPECs: POST /v1/rewards/{name}:score, POST /get_reward (OpenRLHF), /metrics."""
    from pydantic import ValidationError

    from rewardlab.serve.launch import run_server
    from rewardlab.serve.settings import ServeSettings
    from rewardlab.store import default_cache_path

    try:
        settings = ServeSettings(
            backend=backend,  # type: ignore[arg-type]  # a str: pydantic checks it against Backend
            workers=workers, max_wait_ms=2.0, sample_timeout=timeout, max_batch=max_batch, max_queue=max_queue,
            max_samples=max_samples, max_body_bytes=int(max_body_mb * 1024 * 1024), concurrency=concurrency,
            cache_write_delay_ms=cache_write_delay_ms,
            request_timeout=request_timeout, token=token or None, openrlhf_reward=openrlhf_reward,
            openrlhf_error_reward=openrlhf_error_reward, per_reward=_overrides(per_reward),
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"invalid server option: {problems}") from exc
    if token is None and host not in ("127.0.0.1", "localhost", "::1") and not os.environ.get("REWARDLAB_ALLOW_OPEN"):
        typer.echo(f"warning: serving on {host} without --token; anyone who can reach it can use it", err=True)
    cache_path = None if no_cache else (cache or default_cache_path())
    run_server(
        specs, settings, host=host, port=port, cache_path=cache_path, cache_max_rows=cache_max_rows,
        ray_address=ray_address, log_level=log_level,
    )


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
