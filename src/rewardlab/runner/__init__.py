"""Running rewards over data: worker pools with killable timeouts, executors, file I/O,
resumable runs (recorded in `rewardlab.store`), run summaries.

The runner sits between `compose` (what to compute) and `cli`/`serve` (who asks for it); see
ARCHITECTURE.md for the layers.
"""

from rewardlab.runner.executors import (
    ExecutionPlan,
    Executor,
    InlineExecutor,
    execution_plan,
    make_executor,
)
from rewardlab.runner.options import ScoreFileOptions
from rewardlab.runner.pool import PoolStats, WorkerPool
from rewardlab.runner.run import score_file_resumable
from rewardlab.runner.score import score, score_file
from rewardlab.runner.summary import ColumnStats, RunSummary

__all__ = [
    "ColumnStats",
    "ExecutionPlan",
    "Executor",
    "InlineExecutor",
    "PoolStats",
    "RunSummary",
    "ScoreFileOptions",
    "WorkerPool",
    "execution_plan",
    "make_executor",
    "score",
    "score_file",
    "score_file_resumable",
]
