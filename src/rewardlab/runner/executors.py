"""Where batches are computed: in this process, on the worker pool, on Ray, or (with
`rewardlab.serve.remote.RemoteExecutor`) on a reward server. All have the same two methods, so
a resumable run (`rewardlab.runner.run`) and the server's batcher do not care which they have.

* ``inline`` — `reward.score_batch` in the calling thread. Fast for cheap rewards, but a reward
  that hangs or crashes the interpreter takes the caller with it. Use it for trusted, cheap
  rewards only.
* ``pool`` — `rewardlab.runner.WorkerPool`: long-lived worker processes; a sample whose worker
  hangs past the timeout or dies becomes an `error/timeout` or `error/crash` result and the
  worker is replaced, while the caller carries on.
* ``ray`` — `rewardlab.runner.ray.RayExecutor`: chunks of the batch as Ray tasks.

Which one runs is decided in one place, `execution_plan`, for every path that takes `workers` and
`timeout` (`rewardlab.score`, `score_file`, the evaluate runs, the TRL adapter, the server):

1. ``backend="ray"``: Ray tasks (a reward that `batches_in_process` is one task per batch).
2. A reward that batches a model in this process (`batches_in_process`: `model.hf`,
   `model.hf_prm`) runs ``inline``, whole batches on its one loaded copy: worker processes would
   each load the weights and score the batch in slices. The timeout does not apply to it.
3. ``backend="inline"``: this process, by the caller's explicit choice; no timeout is enforced.
4. ``backend="pool"``: ``workers=None`` is all cores; ``workers=0`` is this process when
   `timeout` is ``None``, and one worker process when a timeout is set, because a timeout the
   caller asked for is always enforced and only a killable process can enforce it
   (`rewardlab.runner.pool.pool_size`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from rewardlab.compose.observer import ComponentObserver, ComponentTimes, Observation
from rewardlab.core import (
    ErrorKind,
    GroupKey,
    Reward,
    RewardResult,
    Sample,
    batches_in_process,
    group_keys,
    observed,
    observer_of,
)
from rewardlab.core.choices import check_choice
from rewardlab.errors import ConfigError
from rewardlab.runner.groups import scatter, units_of
from rewardlab.runner.pool import PoolStats, ProcessPool, WorkerPool, pool_size

__all__ = ["Backend", "ExecutionPlan", "Executor", "InlineExecutor", "PoolExecutor", "batches_in_process",
           "execution_plan", "executor_group_keys", "make_executor"]

Backend = Literal["inline", "pool", "ray"]


@runtime_checkable
class Executor(Protocol):
    """Computes one batch: exactly one result per sample, in order.

    An executor of a group reward keeps every group of a batch together however it cuts the
    batch, and says what it groups by in a `group_keys` attribute (`executor_group_keys`), so
    whoever cuts a file or a queue into batches keeps the groups whole too.
    """

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]: ...

    def close(self) -> None: ...


def executor_group_keys(executor: object) -> frozenset[GroupKey]:
    """What the reward behind `executor` groups by (empty: samples are independent)."""
    return frozenset(getattr(executor, "group_keys", ()))


class InlineExecutor:
    """`reward.score_batch` in the calling thread (no isolation; see the module doc)."""

    def __init__(self, reward: Reward):
        self.reward = reward
        self.group_keys = group_keys(reward)

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return self.reward.score_batch(list(samples))

    def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"InlineExecutor({self.reward!r})"


class PoolExecutor:
    """Batches on the runner's `WorkerPool` (process isolation, timeouts).

    An observed reward (`core.observed`: a composite with an observer) is observed in the
    workers and the observations are handed to that observer here, in the caller's process,
    before `map` returns.

    Args:
        reward: the reward each worker process scores with (the workers are forked).
        workers: worker processes (``None``: all cores; ``0`` as in `execution_plan`).
        timeout: per-sample seconds before a worker is killed (``None``: no limit).
        chunk_size: samples per message to a worker (``None``: adapts to ~50 ms of work).
    """

    def __init__(self, reward: Reward, *, workers: int | None, timeout: float | None, chunk_size: int | None = None):
        self.reward = reward
        self.group_keys = group_keys(reward)
        self.observer = observer_of(reward)
        self.pool: WorkerPool | ProcessPool[Any, tuple[list[RewardResult], list[Observation]]]
        if self.observer is not None:
            # Observed: each item is a list (one sample, or a group reward's whole group).
            job = _ObservedScore(reward)
            self.pool = ProcessPool(job, _unobserved_failure, workers=workers, timeout=timeout, chunk_size=chunk_size,
                                    item_weight=len)  # fmt: skip
        else:
            self.pool = WorkerPool(reward, workers=workers, timeout=timeout, chunk_size=chunk_size)

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]:
        if isinstance(self.pool, WorkerPool):
            return list(self.pool.map(list(samples)))
        units = units_of(samples, self.group_keys)  # singletons unless a group reward
        outs = self.pool.map([[samples[i] for i in unit] for unit in units])
        replay(self.observer, (seen for _, seen in outs))
        return scatter(units, [results for results, _ in outs], len(samples))

    @property
    def stats(self) -> PoolStats:
        """The pool's live counts of timeouts, crashes and restarts."""
        return self.pool.stats

    def start_fork_server(self) -> None:
        """Start the process the workers are forked from now (a server: before it listens)."""
        self.pool.start_fork_server()

    def close(self) -> None:
        self.pool.close()

    def __repr__(self) -> str:
        return f"PoolExecutor({self.reward!r})"


class _ObservedScore:
    """The workers' job for an observed reward: the results of one unit (a sample, or a
    group reward's whole group), and what the workers' own copy of the observer saw."""

    def __init__(self, reward: Reward):
        self.times = ComponentTimes()
        self.reward = observed(reward, self.times)

    def __call__(self, unit: list[Sample]) -> tuple[list[RewardResult], list[Observation]]:
        results = [self.reward.score(unit[0])] if len(unit) == 1 else self.reward.score_batch(unit)
        return results, self.times.drain()


def _unobserved_failure(unit: list[Sample], kind: ErrorKind, message: str) -> tuple[list[RewardResult], list[Observation]]:
    return [RewardResult.failure(kind, message)] * len(unit), []


def replay(observer: ComponentObserver | None, observations: Iterable[Sequence[Observation]]) -> None:
    """Hand observations made in other processes to `observer` (no-op without one)."""
    if observer is None:
        return
    for seen in observations:
        for component, seconds, samples in seen:
            observer.observe(component, seconds, samples)


@dataclass(frozen=True)
class ExecutionPlan:
    """Where a reward's batches run: ``inline`` (this process), ``pool`` (`workers` processes,
    each sample killed after `timeout` seconds) or ``ray``."""

    where: Backend
    workers: int  # processes of the pool (0 unless ``where == "pool"``)
    timeout: float | None  # what is enforced (None: nothing)


def execution_plan(
    reward: Reward, *, backend: Backend = "pool", workers: int | None = 2, timeout: float | None = None
) -> ExecutionPlan:
    """The one rule of where `reward` runs for `backend`, `workers` and `timeout` (see the module
    doc): ``workers=0`` is this process without a timeout and one worker process with one; a
    reward that `batches_in_process` runs here; ``inline`` and ``ray`` are what they say.

    Raises:
        ConfigError: unknown backend, negative workers, or a timeout that is not positive.
    """
    check_choice("backend", backend, Backend)
    if workers is not None and workers < 0:
        raise ConfigError(f"workers must be >= 0 (0: in this process), got {workers}")
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"timeout must be > 0 seconds or None (no limit), got {timeout}")
    if backend == "ray":
        return ExecutionPlan("ray", 0, timeout)
    if backend == "inline" or batches_in_process(reward):
        return ExecutionPlan("inline", 0, None)
    processes = pool_size(workers, timeout)
    if processes == 0:
        return ExecutionPlan("inline", 0, None)
    return ExecutionPlan("pool", processes, timeout)


def make_executor(
    reward: Reward,
    *,
    backend: Backend = "pool",
    workers: int | None = 2,
    timeout: float | None = None,
    ray_address: str | None = None,
    chunk_size: int | None = None,
) -> Executor:
    """The executor `execution_plan` chooses for `backend`, `workers` and `timeout`.

    `ray_address` is the Ray cluster to join when Ray is not initialised yet (default: a local
    Ray); `chunk_size` is samples per message to a pool worker (default: adaptive).

    Raises:
        ConfigError: unknown backend, negative workers, or a timeout that is not positive.
    """
    plan = execution_plan(reward, backend=backend, workers=workers, timeout=timeout)
    if plan.where == "inline":
        return InlineExecutor(reward)
    if plan.where == "pool":
        return PoolExecutor(reward, workers=plan.workers, timeout=plan.timeout, chunk_size=chunk_size)
    from rewardlab.runner.ray import RayExecutor

    whole = sys.maxsize if batches_in_process(reward) else None  # one task, one loaded copy per batch
    return RayExecutor(reward, timeout=timeout, address=ray_address, chunk_size=whole)
