"""Start a server from spec files (what ``rewardlab serve`` calls)."""

from __future__ import annotations

import ctypes
import gc
import math
import os
from collections.abc import Sequence
from pathlib import Path

from rewardlab._lazy import require
from rewardlab.core import Reward
from rewardlab.errors import UsageError
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore
from rewardlab.store.cache import DEFAULT_MAX_ROWS

__all__ = ["load_rewards", "run_server"]


def load_rewards(specs: Sequence[str]) -> dict[str, Reward]:
    """Build each spec; served under the spec's ``[reward] name`` or an explicit ``NAME=PATH``.

    Raises:
        SpecError: a spec cannot be built.
        UsageError: two specs would be served under the same name.
    """
    from rewardlab.compose import build

    rewards: dict[str, Reward] = {}
    for item in specs:
        name, sep, path = item.partition("=")
        if not sep or Path(item).exists():
            name, path = "", item
        reward = build(Path(path))
        name = name or reward.name
        if name in rewards:
            raise UsageError(f"two specs are named {name!r}; serve one as OTHER={path}")
        rewards[name] = reward
    return rewards


def run_server(
    specs: Sequence[str],
    settings: ServeSettings,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    cache_path: str | Path | None = None,
    cache_max_rows: int = DEFAULT_MAX_ROWS,
    ray_address: str | None = None,
    log_level: str = "info",
    forwarded_allow_ips: str | None = None,
    log: str | None = None,
) -> None:
    """Build the rewards and the cache, then run uvicorn until interrupted.

    Args:
        specs: spec files, each served under its `[reward] name` or as ``NAME=PATH``.
        settings: batching, limits and backends of the server.
        host: interface to bind (0.0.0.0 for every interface).
        port: TCP port.
        cache_path: result cache file; None: no cache.
        cache_max_rows: cached results kept (the least recently used are evicted).
        ray_address: Ray cluster to join with the ray backend; None: start a local one.
        log_level: uvicorn's log level.
        forwarded_allow_ips: comma-separated addresses of the reverse proxies whose
            X-Forwarded-For and X-Forwarded-Proto headers are believed; None: no proxy, the
            socket peer is the client (what --openrlhf-trusted-network checks).
        log: log reward statistics per computed batch to tensorboard:DIR or wandb:PROJECT
            (`rewardlab.runner.reward_log`; pip install 'rewardlab[log]').
    """
    if not 0 <= port <= 65535:  # uvicorn would fail with a traceback from socket.bind
        raise UsageError(f"--port must be 0-65535, got {port}")
    require("uvicorn", needed_by="rewardlab serve")
    import uvicorn

    _limit_malloc_arenas()

    from rewardlab.serve._draining import DrainingServer
    from rewardlab.serve.app import create_app

    rewards = load_rewards(specs)
    if settings.backend == "ray":
        from rewardlab.runner.ray import ensure_ray

        ensure_ray(ray_address)
    from rewardlab.runner.reward_log import open_logger

    logger = open_logger(log) if log is not None else None
    cache = ResultStore(cache_path, max_rows=cache_max_rows) if cache_path is not None else None
    app = create_app(rewards, cache, settings, logger=logger)
    # Everything loaded so far (modules, the app, the rewards) lives as long as the server:
    # move it out of the cyclic GC's reach, so full collections triggered by the short-lived
    # request objects do not walk it again and again (bench/RESULTS.md, "Result-cache layout
    # and server start-up").
    gc.collect()
    gc.freeze()
    # On SIGTERM/SIGINT: readiness fails at once and new work is refused (`RewardService.drain`);
    # running requests get `drain_timeout` seconds, then are cancelled; running batches get what
    # is left of it, then the executors are closed. uvicorn then re-raises the signal, so the
    # process ends even if a reward's thread never returns.
    # uvicorn believes X-Forwarded-For from 127.0.0.1 unless told otherwise: any local process
    # could then claim a trusted network's address. Only named proxies are believed.
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=math.ceil(settings.drain_timeout),
        proxy_headers=forwarded_allow_ips is not None, forwarded_allow_ips=forwarded_allow_ips,
    )  # fmt: skip
    try:
        DrainingServer(config, app.state.service).run()
    finally:
        if cache is not None:
            cache.close()
        if logger is not None:
            logger.close()


# glibc's mallopt parameter for the most arenas malloc makes (malloc.h: M_ARENA_MAX).
_M_ARENA_MAX = -8
_SERVER_ARENAS = 2


def _limit_malloc_arenas() -> None:
    """At most two malloc arenas in the server process and the workers it forks, as
    ``MALLOC_ARENA_MAX=2`` would set (an explicit ``MALLOC_ARENA_MAX`` is left to rule).

    glibc gives a thread that meets contention an arena of its own, up to 8 per core, and
    memory freed in one arena serves only that arena's threads. The server's threads (event
    loop, pool dispatchers, cache writer) each allocate and free request-sized buffers, so under
    sustained load its resident memory crept up arena by arena while Python's own allocations
    stayed flat (bench/RESULTS.md, the soak). Called before the server starts a thread. Not on
    glibc (musl, macOS): nothing to do.
    """
    if os.environ.get("MALLOC_ARENA_MAX"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    mallopt(_M_ARENA_MAX, _SERVER_ARENAS)
