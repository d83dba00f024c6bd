"""`ScoreFileOptions`: how `score_file` reads, scores and records a data file (the flags of
`rewardlab score`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from rewardlab.core.choices import check_choice
from rewardlab.errors import ConfigError

__all__ = ["DEFAULT_TIMEOUT", "FileBackend", "ScoreFileOptions"]

#: where `score_file` computes without an executor: worker processes here, or Ray
FileBackend = Literal["local", "ray"]


class _DefaultTimeout(float):
    """The default `timeout`, told apart from the same number passed by the caller (by identity):
    it is 60 s for worker processes and Ray, and no timeout for ``workers=0`` on the local
    backend, so ``ScoreFileOptions(workers=0)`` scores in this process as ``rewardlab.score``
    does. A float, so the type and the CLI's shown default stay the plain number."""


#: `ScoreFileOptions.timeout` when none is given (see `_DefaultTimeout`)
DEFAULT_TIMEOUT: Final[float] = _DefaultTimeout(60.0)


@dataclass
class ScoreFileOptions:
    """Options of `score_file` (the CLI flags of `rewardlab score`).

    A run is *recorded* (rows kept in the run store as they finish, so it can resume) with
    `resume`, with the Ray backend, or when `score_file` is given an executor (a reward
    server); otherwise rows stream through the local worker pool straight to the output.

    `workers` and `timeout` follow the one rule of `rewardlab.runner.executors.execution_plan`:
    ``workers=0`` scores in this process unless a timeout is given; a given timeout is always
    enforced (``workers=0`` then runs one worker process). The 60 s default (`DEFAULT_TIMEOUT`)
    is for worker processes and Ray: ``workers=0`` on the local backend without a `timeout`
    gets ``timeout=None``, as ``rewardlab.score`` does. A reward that batches a model in this
    process (`model.hf`) is scored here, in whole batches.

    Raises:
        ConfigError: at construction, for a value no run could use (naming the field).
    """

    workers: int | None = None  # None: all cores
    timeout: float | None = DEFAULT_TIMEOUT  # seconds per sample in a worker; None: no limit
    fields: Mapping[str, str] | None = None
    # Text encoding of a JSONL input; None: UTF-8, or what a byte-order mark at its start names
    encoding: str | None = None
    keep_input: bool = True
    strict: bool = False
    chunk_size: int | None = None  # rows per message to a worker; None adapts to ~50 ms of work
    limit: int | None = None
    explode: tuple[str, ...] = ()  # list fields to turn into one row per element
    resume: bool = False  # keep the rows an interrupted run with the same run id recorded
    backend: FileBackend = "local"
    ray_address: str | None = None  # Ray cluster for backend "ray" (None: start a local Ray)
    run_store: Path | None = None  # the run store file of a recorded run (None: the default cache)
    run_id: str | None = None  # None: derived from spec, input, output and limit (`run_id_for`)
    # One record is one transaction and, remotely, one request: 256 rows keep a request well
    # under the server's body limit and lose at most 256 rows of work to a crash.
    record_every: int = 256
    # With a logger (`--log`): one TensorBoard/W&B step per this many rows.
    log_every: int = 256

    def __post_init__(self) -> None:
        check_choice("backend", self.backend, FileBackend)
        if self.timeout is DEFAULT_TIMEOUT and self.workers == 0 and self.backend == "local":
            self.timeout = None  # the default is for worker processes; 0 is this process
        if self.workers is not None and self.workers < 0:
            raise ConfigError(f"workers must be >= 0 (0: in this process) or None (all cores), got {self.workers}")
        if self.timeout is not None and not self.timeout > 0:
            raise ConfigError(f"timeout must be > 0 seconds or None (no limit), got {self.timeout}")
        for name in ("chunk_size", "record_every", "log_every"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be >= 1, got {value}")
        if self.limit is not None and self.limit < 0:
            raise ConfigError(f"limit must be >= 0, got {self.limit}")
