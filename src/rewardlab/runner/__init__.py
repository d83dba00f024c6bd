"""Running rewards over data: worker pools with killable timeouts, file I/O, run summaries.

DESIGN.md's table has no home for the runner (the foundation issue asks for it); it lives
here, between `compose` (what to compute) and `cli`/`serve` (who asks for it).
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
