"""How the evaluate runs score samples: in-process, or in a killable worker pool with timeouts,
with an optional progress hook.

Progress: `scorer(..., progress=fn)` calls `fn(n)` as `n` more samples finish, and
`on_batch(n)` before a batch of `n` samples is scored (so a bar can grow its total). The public
runs (`run_eval`, `audit_reward`) take the same two callbacks and hand them to every `scorer` they
open through `reporting_progress`, so a run with several phases (gold, reward, comparisons,
probes) reports on one bar without each mode threading the callbacks by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from rewardlab.core import JSON, Reward, RewardResult, Sample, group_keys

ScoreFn = Callable[[list[Sample]], list[RewardResult]]
Progress = Callable[[int], None]

#: samples per in-process `score_batch` call: small enough for a bar to move, large enough that
#: a model reward still batches. Scoring is cut the same way with or without a progress hook, so
#: turning a bar on cannot change a result.
CHUNK_SAMPLES = 256

_REPORTING: ContextVar[tuple[Progress | None, Progress | None]] = ContextVar("rewardlab_scoring_progress", default=(None, None))


def load_reward(spec: str | Path | dict[str, JSON] | Reward) -> Reward:
    """A built Reward from a spec path, TOML text, dict or Reward (`rewardlab.compose.build`)."""
    from rewardlab.compose import build

    return build(spec)


@contextmanager
def reporting_progress(progress: Progress | None, on_batch: Progress | None = None) -> Iterator[None]:
    """Within the block, every `scorer` opened without callbacks of its own reports to these."""
    token = _REPORTING.set((progress, on_batch))
    try:
        yield
    finally:
        _REPORTING.reset(token)


@contextmanager
def scorer(
    reward: Reward, *, workers: int = 0, timeout: float | None = None,
    progress: Progress | None = None, on_batch: Progress | None = None, chunk_size: int = CHUNK_SAMPLES,
) -> Iterator[ScoreFn]:
    """A function scoring a list of samples, on the executor `rewardlab.runner.make_executor`
    chooses: worker processes (hung or crashed samples become `error/timeout` or `error/crash`
    results) when `workers` > 0 or a `timeout` is set, otherwise this process, `chunk_size`
    samples per `score_batch` call.

    `progress(n)` is called as `n` more samples are scored, `on_batch(n)` before a list of `n`
    is (default: the callbacks of an enclosing `reporting_progress`). A group reward
    (`core.group_keys`) gets each group whole in one `score_batch` call: chunks are cut only
    between groups (`runner.groups.split_at_units`), so a group larger than `chunk_size` is one
    chunk.
    """
    from rewardlab.runner import InlineExecutor, WorkerPool, make_executor
    from rewardlab.runner.executors import PoolExecutor

    if progress is None and on_batch is None:
        progress, on_batch = _REPORTING.get()
    done = progress or (lambda n: None)
    announce = on_batch or (lambda n: None)
    executor = make_executor(reward, workers=workers, timeout=timeout)

    def scored(batch: list[Sample]) -> list[RewardResult]:
        announce(len(batch))
        if isinstance(executor, InlineExecutor):
            return _chunked(reward, batch, chunk_size, done)
        if isinstance(executor, PoolExecutor) and isinstance(executor.pool, WorkerPool):
            return executor.pool.map(batch, progress=progress)  # as each result comes back
        results = executor.map(batch)
        done(len(batch))
        return results

    try:
        yield scored
    finally:
        executor.close()


def _chunked(reward: Reward, batch: list[Sample], size: int, done: Progress) -> list[RewardResult]:
    """`reward.score_batch(batch)`, in pieces of about `size` that never cut a group."""
    from rewardlab.runner.groups import scatter, split_at_units

    pieces = split_at_units(batch, group_keys(reward), size)
    outputs = []
    for piece in pieces:
        results = reward.score_batch([batch[i] for i in piece])
        outputs.append(results)
        done(len(piece))
    return scatter(pieces, outputs, len(batch))


def error_counts(results: Sequence[RewardResult]) -> dict[str, int]:
    """Error results by kind (skips under "skipped")."""
    out: dict[str, int] = {}
    for r in results:
        key = r.error.kind.value if r.error is not None else ("skipped" if r.score is None else None)
        if key:
            out[key] = out.get(key, 0) + 1
    return out
