"""Running rewards over data: worker pools with killable timeouts, file I/O, run summaries.

The runner sits between `compose` (what to compute) and `cli`/`serve` (who asks for it); see
ARCHITECTURE.md for the layers.
"""

from rewardlab.runner.io import RowWriter, iter_raw_rows, read_samples
from rewardlab.runner.pool import PoolStats, ProcessPool, WorkerPool, default_workers
from rewardlab.runner.score import ScoreFileOptions, score, score_file, score_rows
from rewardlab.runner.summary import ColumnStats, RunSummary

__all__ = [
    "ColumnStats",
    "PoolStats",
    "ProcessPool",
    "RowWriter",
    "RunSummary",
    "ScoreFileOptions",
    "WorkerPool",
    "default_workers",
    "iter_raw_rows",
    "read_samples",
    "score",
    "score_file",
    "score_rows",
]
