"""Running rewards over data: worker pools with killable timeouts, executors, file I/O,
resumable runs (recorded in `rewardlab.store`), run summaries.

The runner sits between `compose` (what to compute) and `cli`/`serve` (who asks for it); see
ARCHITECTURE.md for the layers.
"""

from rewardlab.runner.executors import (
    ExecutionPlan,
    Executor,
    InlineExecutor,
    PoolExecutor,
    execution_plan,
    make_executor,
)
from rewardlab.runner.io import RowWriter, iter_raw_rows, read_samples
from rewardlab.runner.options import ScoreFileOptions
from rewardlab.runner.pool import PoolStats, ProcessPool, WorkerPool, default_workers
from rewardlab.runner.run import score_file_resumable
from rewardlab.runner.score import score, score_file, score_rows
from rewardlab.runner.summary import ColumnStats, RunSummary

__all__ = [
    "ColumnStats",
    "ExecutionPlan",
    "Executor",
    "InlineExecutor",
    "PoolExecutor",
    "PoolStats",
    "ProcessPool",
    "RowWriter",
    "RunSummary",
    "ScoreFileOptions",
    "WorkerPool",
    "default_workers",
    "execution_plan",
    "iter_raw_rows",
    "make_executor",
    "read_samples",
    "score",
    "score_file",
    "score_file_resumable",
    "score_rows",
]
