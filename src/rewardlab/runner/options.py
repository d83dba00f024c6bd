"""`ScoreFileOptions`: how `score_file` reads, scores and records a data file (the flags of
`rewardlab score`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["ScoreFileOptions"]


@dataclass
class ScoreFileOptions:
    """Options of `score_file` (the CLI flags of `rewardlab score`).

    A run is *recorded* (rows kept in the run store as they finish, so it can resume) with
    `resume`, with the Ray backend, or when `score_file` is given an executor (a reward
    server); otherwise rows stream through the local worker pool straight to the output.
    """

    workers: int | None = None  # None: all cores
    timeout: float | None = 60.0
    fields: Mapping[str, str] | None = None
    # Text encoding of a JSONL input; None: UTF-8, or what a byte-order mark at its start names
    encoding: str | None = None
    keep_input: bool = True
    strict: bool = False
    chunk_size: int | None = None  # rows per message to a worker; None adapts to ~50 ms of work
    limit: int | None = None
    explode: tuple[str, ...] = ()  # list fields to turn into one row per element (streaming only)
    resume: bool = False  # keep the rows an interrupted run with the same run id recorded
    backend: Literal["local", "ray"] = "local"
    ray_address: str | None = None  # Ray cluster for backend "ray" (None: start a local Ray)
    run_store: Path | None = None  # the run store file of a recorded run (None: the default cache)
    run_id: str | None = None  # None: derived from spec, input, output and limit (`run_id_for`)
    # One record is one transaction and, remotely, one request: 256 rows keep a request well
    # under the server's body limit and lose at most 256 rows of work to a crash.
    record_every: int = 256
    # With a logger (`--log`): one TensorBoard/W&B step per this many rows.
    log_every: int = 256
