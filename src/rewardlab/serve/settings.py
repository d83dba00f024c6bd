"""Settings of one reward server: limits, batching, backend, auth. Each default says why."""

from __future__ import annotations

import ipaddress
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rewardlab.runner.executors import Backend

__all__ = ["RewardLimits", "ServeSettings"]

# What one reward may set differently from the server-wide defaults.
PER_REWARD = ("workers", "sample_timeout", "max_batch", "concurrency", "max_queue", "request_timeout")


class RewardLimits(BaseModel):
    """Per-reward overrides of `ServeSettings` (``None``: the server-wide value).

    A code-execution reward may need 8 workers and a 30 s timeout while a format check runs
    inline in microseconds; one server hosts both.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    workers: int | None = Field(default=None, ge=0)
    sample_timeout: float | None = Field(default=None, gt=0)
    max_batch: int | None = Field(default=None, ge=1)
    concurrency: int | None = Field(default=None, ge=1)
    max_queue: int | None = Field(default=None, ge=1)
    request_timeout: float | None = Field(default=None, gt=0)


class ServeSettings(BaseModel):
    """Everything `create_app` needs besides the rewards and the cache.

    Examples:
        >>> ServeSettings(workers=4, token="s3cret").max_batch
        256
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # -- execution ---------------------------------------------------------------------------
    backend: Backend = Field(default="pool", description="pool (worker processes), inline (server threads) or ray")
    # 2 workers: the reference machine has 2 cores; more only adds context switches.
    workers: int = Field(
        default=2, ge=0,
        description="worker processes per reward (pool backend); 0: in the server process, or one worker process when a sample_timeout is given",
    )
    # 60 s applies to worker processes; workers=0 without a sample_timeout given is the server
    # process, where nothing can be killed, so it resolves to None (`_timeout_for_workers`).
    sample_timeout: float | None = Field(default=60.0, gt=0, description="seconds per sample before its worker is killed")
    # 256 is what trainers send per micro-batch (and what the benchmark uses).
    max_batch: int = Field(default=256, ge=1, description="samples per backend batch, across clients")
    # 2 ms is below one HTTP round trip on loopback, so waiting to fill a batch costs little.
    max_wait_ms: float = Field(default=2.0, ge=0, description="wait this long for a batch to fill")
    concurrency: int = Field(default=2, ge=1, description="backend batches in flight per reward")
    # 50 ms: longer than the gap between a busy trainer's requests, so writes wait for a real
    # pause (see `rewardlab.serve.writer`); 0 writes as soon as results arrive.
    cache_write_delay_ms: float = Field(
        default=50.0, ge=0, description="write results to the cache once the reward has been idle this long (0: at once)"
    )
    # --- limits and backpressure ------------------------------------------------------------
    max_queue: int = Field(default=16384, ge=1, description="queued samples per reward before 429")
    max_samples: int = Field(default=4096, ge=1, description="samples per request before 413")
    max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=1024, description="request body bytes before 413")
    request_timeout: float = Field(default=600.0, gt=0, description="seconds a request may wait before 504")
    # 30 s: Kubernetes' default terminationGracePeriodSeconds, after which it sends SIGKILL.
    drain_timeout: float = Field(
        default=30.0, gt=0, description="on SIGTERM, seconds to finish running requests and batches before exiting"
    )
    # --- security ---------------------------------------------------------------------------
    token: str | None = Field(default=None, description="bearer token required on /v1 and /get_reward; None: open")
    # --- OpenRLHF ---------------------------------------------------------------------------
    openrlhf_reward: str | None = Field(default=None, description="reward behind POST /get_reward (default: the first)")
    # None: a batch with an error result is refused (HTTP 500 naming the rows), so a broken
    # verifier stops training loudly. A number: errors become it and are counted in extra_logs.
    per_reward: dict[str, RewardLimits] = Field(
        default_factory=dict, description="overrides by reward name (workers, sample_timeout, concurrency, ...)"
    )
    # None: /get_reward is refused until set. OpenRLHF handles only a number per row (a failed
    # request is retried, logged without its body and the sample left without a reward, which
    # fails the step later), so what an unscorable row becomes must be chosen up front.
    openrlhf_error_reward: float | None = Field(
        default=None, allow_inf_nan=False,  # a NaN or inf reward would poison the trainer's step
        description="reward sent to OpenRLHF for rows without a score (counted in extra_logs); None refuses /get_reward",
    )
    openrlhf_special_tokens: tuple[str, ...] | None = Field(
        default=None, description="removed from /get_reward queries; None: the common chat-template tokens, (): none"
    )
    # OpenRLHF sends no Authorization header: with a token set, /get_reward is reached either as
    # /openrlhf/<token>/get_reward or, without a token, from these networks only.
    openrlhf_trusted_networks: tuple[str, ...] = Field(
        default=(), description="CIDRs whose clients may POST /get_reward without the token"
    )

    @model_validator(mode="before")
    @classmethod
    def _timeout_for_workers(cls, data: Any) -> Any:
        """``workers=0`` without a `sample_timeout` computes in the server process (no timeout);
        with one it is enforced in one worker process (`rewardlab.runner.execution_plan`)."""
        if isinstance(data, dict) and data.get("workers") == 0 and data.get("backend", "pool") == "pool" and "sample_timeout" not in data:
            return {**data, "sample_timeout": None}
        return data

    @field_validator("openrlhf_trusted_networks")
    @classmethod
    def _networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for network in value:
            try:
                ipaddress.ip_network(network, strict=False)
            except ValueError as exc:
                raise ValueError(f"{network!r} is not a network; write it as CIDR, e.g. 10.0.0.0/8") from exc
        return value

    def for_reward(self, name: str) -> ServeSettings:
        """These settings with `name`'s overrides applied."""
        limits = self.per_reward.get(name)
        if limits is None:
            return self
        update = {k: v for k in PER_REWARD if (v := getattr(limits, k)) is not None}
        if (update.get("workers") == 0 and self.backend == "pool" and "sample_timeout" not in update
                and "sample_timeout" not in self.model_fields_set):
            update["sample_timeout"] = None  # as `_timeout_for_workers`: the default is for worker processes
        return self.model_copy(update=update)
