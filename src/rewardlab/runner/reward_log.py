"""Reward statistics where people look: TensorBoard event files and Weights & Biases runs.

Every logged step is one batch of results (a chunk of a scored file, a batch the server
computed, a trainer's call of an adapter). For the total and for each component it logs

    <prefix>/mean                 mean of the `ok` scores (absent when the batch has none)
    <prefix>/hist                 histogram of the `ok` scores
    <prefix>/error_rate           errors / results that carry the column
    <prefix>/errors/<kind>        error count by kind (timeout, parse, crash, ...)
    <prefix>/skipped              skipped count

with ``<prefix>`` = ``reward`` for the total and ``reward/<component>`` for a component (the
names of `rewardlab score`'s output columns), plus ``reward/rows``, the rows of the batch.
An error is counted, never averaged in as 0: a batch of 1.0, 0.0 and a timeout has mean 0.5
and error rate 1/3. A row that could not be read has no components, so a component's rates
are over the rows that reached it. The server puts the served name first
(``<name>/reward/mean``), since one server hosts several rewards.

Backends: `TensorBoardLogger` (the `tensorboard` package's own event-file writer and summary
protobufs; no TensorFlow or torch needed) and `WandbLogger` (`wandb.init`; ``WANDB_MODE`` and
``WANDB_DIR`` are read when its run starts, so ``WANDB_MODE=offline`` is honoured). `open_logger("tensorboard:DIR")` and
`open_logger("wandb:PROJECT")` are the `--log` option of `rewardlab score` and
`rewardlab serve`. Both backends are the `log` extra: ``pip install 'rewardlab[log]'``.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast, runtime_checkable

from rewardlab._lazy import require
from rewardlab.core import RewardResult
from rewardlab.errors import ConfigError, UsageError

if TYPE_CHECKING:
    import numpy as np

    from rewardlab.runner.io import RowStats

__all__ = [
    "BatchStats",
    "ColumnBatch",
    "RewardLogger",
    "RowBuffer",
    "TensorBoardLogger",
    "WandbLogger",
    "open_logger",
]



@dataclass
class ColumnBatch:
    """One score column (the total or a component) in one batch."""

    scores: list[float] = field(default_factory=list)  # the ok scores only
    errors: Counter[str] = field(default_factory=Counter)
    skipped: int = 0

    def add(self, status: str, score: float | None, error_kind: str | None) -> None:
        if status == "ok" and score is not None:
            self.scores.append(score)
        elif status == "error":
            self.errors[error_kind or "unknown"] += 1
        else:
            self.skipped += 1

    @property
    def count(self) -> int:
        """Results that carry this column: ok, error or skipped."""
        return len(self.scores) + sum(self.errors.values()) + self.skipped

    @property
    def mean(self) -> float | None:
        """Mean of the ok scores; None without any (never an error read as 0)."""
        return math.fsum(self.scores) / len(self.scores) if self.scores else None

    @property
    def error_rate(self) -> float:
        return sum(self.errors.values()) / self.count if self.count else 0.0


@dataclass
class BatchStats:
    """What one logged step holds: the total's and each component's `ColumnBatch`.

    Args:
        prefix: the first part of every key (``reward``; the server uses ``<name>/reward``).

    Examples:
        >>> from rewardlab import RewardResult
        >>> stats = BatchStats.of([RewardResult.ok(1.0), RewardResult.ok(0.0), RewardResult.failure("timeout", "slow")])
        >>> stats.scalars()["reward/mean"], round(stats.scalars()["reward/error_rate"], 3)
        (0.5, 0.333)
    """

    prefix: str = "reward"
    rows: int = 0
    total: ColumnBatch = field(default_factory=ColumnBatch)
    components: dict[str, ColumnBatch] = field(default_factory=dict)

    @classmethod
    def of(cls, results: Iterable[RewardResult], *, prefix: str = "reward") -> BatchStats:
        """The statistics of `results` (the server's and the adapters' batches)."""
        stats = cls(prefix)
        for result in results:
            stats.add(result)
        return stats

    def add(self, result: RewardResult) -> None:
        """Count one result."""
        error = result.error
        parts = [
            (name, part.status.value, part.score, part.error.kind.value if part.error else None)
            for name, part in result.components.items()
        ]
        self._add(result.status.value, result.score, error.kind.value if error else None, parts)

    def add_row(self, row: RowStats) -> None:
        """Count one scored file row (a `rewardlab.runner.io.RowStats` tuple)."""
        _, status, score, error_kind, _, components, *_ = row
        self._add(status, score, error_kind, components)

    def _add(
        self, status: str, score: float | None, error_kind: str | None, parts: Iterable[tuple[str, str, float | None, str | None]]
    ) -> None:
        self.rows += 1
        self.total.add(status, score, error_kind)
        for name, part_status, part_score, part_kind in parts:
            self.components.setdefault(name, ColumnBatch()).add(part_status, part_score, part_kind)

    def columns(self) -> dict[str, ColumnBatch]:
        """Key prefix -> column: the total first, then the components in order."""
        return {self.prefix: self.total, **{f"{self.prefix}/{name}": c for name, c in self.components.items()}}

    def scalars(self) -> dict[str, float]:
        """Every scalar of this step by key (see the module doc)."""
        out: dict[str, float] = {f"{self.prefix}/rows": float(self.rows)}
        for key, column in self.columns().items():
            if column.mean is not None:
                out[f"{key}/mean"] = column.mean
            out[f"{key}/error_rate"] = column.error_rate
            out[f"{key}/skipped"] = float(column.skipped)
            for kind, count in sorted(column.errors.items()):
                out[f"{key}/errors/{kind}"] = float(count)
        return out

    def histograms(self) -> dict[str, np.ndarray]:
        """The ok scores of each column that has any, by ``<key>/hist``."""
        import numpy as np  # not at import: `rewardlab --help` loads the runner without numpy

        return {f"{key}/hist": np.asarray(c.scores, dtype=np.float64) for key, c in self.columns().items() if c.scores}


@runtime_checkable
class RewardLogger(Protocol):
    """Where batch statistics go. `step` None: the logger's own count of logged steps.

    Implementations are called from several threads (the server's batches) and must lock.
    `flush` makes what was logged visible (written to the file); `close` flushes too.
    """

    def log(self, stats: BatchStats, *, step: int | None = None) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class _Steps:
    """The step counter and lock the backends share."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.next_step = 0

    def take(self, step: int | None) -> int:
        """The step to log at (call with the lock held): `step`, or one past the last."""
        chosen = self.next_step if step is None else int(step)
        self.next_step = max(self.next_step, chosen + 1)
        return chosen


class TensorBoardLogger:
    """Batch statistics as TensorBoard event files in `logdir` (scalars and histograms).

    Written with the `tensorboard` package's `EventFileWriter` and its framework-free summary
    builders (`scalar_pb`, `histogram_pb`), the format ``tensorboard --logdir`` and its
    `EventAccumulator` read; no TensorFlow or torch is involved.

    Args:
        logdir: the directory of the event files (created).
        flush_secs: how often buffered events reach the file (also on `close`).
        buckets: histogram buckets.

    Raises:
        DependencyError: the `tensorboard` package is not installed (names the extra).
    """

    def __init__(self, logdir: str | Path, *, flush_secs: float = 5.0, buckets: int = 30):
        writers = require("tensorboard.summary.writer.event_file_writer", needed_by="logging to TensorBoard")
        self.logdir = Path(logdir)
        self.buckets = buckets
        self._writer = writers.EventFileWriter(str(self.logdir), flush_secs=flush_secs)
        self._steps = _Steps()
        self._closed = False

    def log(self, stats: BatchStats, *, step: int | None = None) -> None:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.plugins.histogram.summary_v2 import histogram_pb
        from tensorboard.plugins.scalar.summary_v2 import scalar_pb

        summary = summary_pb2.Summary()
        for key, value in stats.scalars().items():
            summary.value.extend(scalar_pb(key, value).value)
        for key, scores in stats.histograms().items():
            summary.value.extend(histogram_pb(key, scores, buckets=self.buckets).value)
        with self._steps.lock:
            if self._closed:
                raise ConfigError(f"{self!r} is closed; open a new logger to log more steps")
            event = event_pb2.Event(wall_time=time.time(), step=self._steps.take(step), summary=summary)
            self._writer.add_event(event)

    def flush(self) -> None:
        with self._steps.lock:
            if not self._closed:
                self._writer.flush()

    def close(self) -> None:
        """Flush and close the event file (idempotent)."""
        with self._steps.lock:
            if not self._closed:
                self._closed = True
                self._writer.close()

    def __repr__(self) -> str:
        return f"TensorBoardLogger({str(self.logdir)!r})"


class WandbLogger:
    """Batch statistics as a Weights & Biases run (scalars and `wandb.Histogram`s).

    Args:
        project: the W&B project.
        dir: where wandb keeps its files (None: ``WANDB_DIR``, else wandb's default ``./wandb``).
        mode: ``online``, ``offline`` or ``disabled``; None: ``WANDB_MODE`` (wandb's default without).
        name: the run's name.
        config: recorded as the run's config (e.g. the spec hash).
        run: log into this run instead of starting one (a trainer's own); it is not finished
            on `close`, and the step goes in ``rewardlab/step`` so the trainer's steps stay its own.

    The run is started with ``reinit="create_new"``: a trainer's run in the same process is
    neither finished nor replaced.

    Raises:
        DependencyError: the `wandb` package is not installed (names the extra).
    """

    def __init__(
        self,
        project: str | None = None,
        *,
        dir: str | Path | None = None,
        mode: Literal["online", "offline", "disabled"] | None = None,
        name: str | None = None,
        config: Mapping[str, Any] | None = None,
        run: Any = None,
    ):
        wandb = require("wandb", needed_by="logging to Weights & Biases")
        self._wandb = wandb
        self._own = run is None
        if run is None:
            # WANDB_MODE and WANDB_DIR as they are now: wandb reads the environment once per
            # process, when it first sets itself up, so a value set later would be ignored.
            mode = mode or cast(Any, os.environ.get("WANDB_MODE") or None)
            dir = dir or os.environ.get("WANDB_DIR") or None
            if dir is not None:
                Path(dir).mkdir(parents=True, exist_ok=True)
            run = wandb.init(project=project, dir=None if dir is None else str(dir), mode=mode, name=name,
                             config=dict(config or {}), reinit="create_new")  # fmt: skip
        self.run = run
        self._steps = _Steps()
        self._closed = False

    def log(self, stats: BatchStats, *, step: int | None = None) -> None:
        data: dict[str, Any] = dict(stats.scalars())
        for key, scores in stats.histograms().items():
            data[key] = self._wandb.Histogram(scores.tolist())
        with self._steps.lock:
            if self._closed:
                raise ConfigError(f"{self!r} is closed; open a new logger to log more steps")
            chosen = self._steps.take(step)
            if self._own:
                self.run.log(data, step=chosen)
            else:
                self.run.log({**data, "rewardlab/step": chosen})

    def flush(self) -> None:
        """Nothing to do: `run.log` hands each step to wandb's own service at once."""

    def close(self) -> None:
        """Finish the run this logger started (idempotent); a borrowed run stays open."""
        with self._steps.lock:
            if not self._closed:
                self._closed = True
                if self._own:
                    self.run.finish()

    def __repr__(self) -> str:
        return f"WandbLogger({getattr(self.run, 'project', None)!r})"


class RowBuffer:
    """Rows gathered until `every` are there, then logged as one step.

    A scored file logs a step per `every` rows; callers that score a row at a time (verl's
    `compute_score`, OpenRLHF's `reward_func`) log a step per `every` calls, since a step of
    one row says little. With `every` None, each `add` call is one step (a trainer's batch).
    Thread-safe; `flush` logs what is left.

    Raises:
        ConfigError: `every` < 1.
    """

    def __init__(self, logger: RewardLogger, *, every: int | None = 1, prefix: str = "reward"):
        if every is not None and every < 1:
            raise ConfigError(f"log_every must be >= 1 row (or None: a step per call), got {every}")
        self.logger, self.every, self.prefix = logger, every, prefix
        self._lock = threading.Lock()
        self._stats = BatchStats(prefix)

    def add(self, results: Iterable[RewardResult]) -> None:
        """Count results; log a step each time `every` rows are gathered (or this call's rows)."""
        full = []
        with self._lock:
            for result in results:
                self._stats.add(result)
                if self.every is not None and (step := self._take(self.every)) is not None:
                    full.append(step)
            if self.every is None and (step := self._take(1)) is not None:
                full.append(step)
        for step in full:
            self.logger.log(step)

    def add_row(self, row: RowStats) -> None:
        """Count one scored file row; log a step once `every` rows are gathered."""
        with self._lock:
            self._stats.add_row(row)
            full = self._take(self.every or 1)
        if full is not None:
            self.logger.log(full)

    def flush(self) -> None:
        """Log the rows gathered so far, if any, and flush the logger."""
        with self._lock:
            rest = self._take(1)
        if rest is not None:
            self.logger.log(rest)
        self.logger.flush()

    def _take(self, at_least: int) -> BatchStats | None:
        if self._stats.rows < at_least:
            return None
        full, self._stats = self._stats, BatchStats(self.prefix)
        return full


def open_logger(target: str | RewardLogger) -> RewardLogger:
    """The logger a ``--log`` value names: ``tensorboard:DIR`` or ``wandb:PROJECT``.

    A `RewardLogger` is returned as it is.

    Raises:
        UsageError: another form.
        ConfigError: the backend's package is not installed (names the extra).
    """
    if not isinstance(target, str):
        return target
    kind, sep, where = target.partition(":")
    if not sep or not where or kind not in ("tensorboard", "wandb"):
        raise UsageError(f"--log expects tensorboard:DIR or wandb:PROJECT, got {target!r}")
    if kind == "tensorboard":
        return TensorBoardLogger(where)
    return WandbLogger(where)
