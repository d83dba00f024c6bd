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
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

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
)
from rewardlab.core.choices import check_choice
from rewardlab.core.reward import observer_of
from rewardlab.errors import ConfigError
from rewardlab.runner.groups import scatter, units_of
from rewardlab.runner.io import PreparedRow, RawRow, score_prepared
from rewardlab.runner.pool import PoolStats, ProcessPool, WorkerPool, pool_size

__all__ = ["Backend", "BaseExecutor", "ExecutionPlan", "Executor", "InlineExecutor", "PoolExecutor", "RowJob", "WorkerJob",
           "batches_in_process", "execution_plan", "executor_group_keys", "make_executor", "rows_executor"]

Backend = Literal["inline", "pool", "ray"]
Out = TypeVar("Out")
Out_co = TypeVar("Out_co", covariant=True)


@runtime_checkable
class Executor(Protocol):
    """Computes one batch: exactly one result per sample, in order.

    An executor of a group reward keeps every group of a batch together however it cuts the
    batch, and says what it groups by in a `group_keys` attribute (`executor_group_keys`), so
    whoever cuts a file or a queue into batches keeps the groups whole too. What an executor
    can do beyond these two methods is declared by subclassing `BaseExecutor`, which holds the
    defaults (the executors of this package do; `rows_executor` gives any other the defaults).
    """

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]: ...

    def close(self) -> None: ...


def executor_group_keys(executor: object) -> frozenset[GroupKey]:
    """What the reward behind `executor` groups by (empty: samples are independent)."""
    return frozenset(getattr(executor, "group_keys", ()))


class WorkerJob(Protocol[Out_co]):
    """A raw file row to its output in one call, run where the rows are scored (a pool worker):
    decoding and encoding run in parallel with the scoring, and only raw rows and finished
    output rows cross the process boundary, never pickled `Sample`s and results."""

    def __call__(self, raw_row: RawRow) -> Out_co: ...

    def on_error(self, raw_row: RawRow, kind: ErrorKind, message: str) -> Out_co:
        """The output of a row whose worker timed out or died."""
        ...


class RowJob(Protocol[Out]):
    """What the file engine (`runner.run.score_chunks`) makes of the raw rows of a file.

    `prepare` decodes and checks a row (its Sample, or the `invalid_input` result saying why
    not), `output` turns a scored row into what the engine keeps (a written row, a recorded
    one), `error_of` reads an output's error kind and message back (for `--strict`), and
    `for_workers` is the same job bound to a reward, for an executor that scores whole raw
    rows in its workers (None: the job is not meant to leave this process).
    """

    def prepare(self, raw_row: RawRow) -> PreparedRow: ...

    def output(self, row: Mapping[str, Any], number: int, result: RewardResult) -> Out: ...

    def error_of(self, out: Out) -> tuple[str | None, str | None]: ...

    def for_workers(self, reward: Reward) -> WorkerJob[Out] | None: ...


class BaseExecutor:
    """The defaults of what an executor can do beyond `map`: subclass it to declare them.

    `group_keys`: what the reward behind it groups by (none). `score_rows`: a file's raw rows,
    chunk by chunk, to a `RowJob`'s outputs; by default each chunk is decoded here and its
    samples go out as one `map` call, so the executor decides where they run. The worker pool
    overrides it to send the raw rows themselves to its workers (`PoolExecutor.score_rows`).
    An `Executor` that is not a `BaseExecutor` (a caller's own) gets these defaults through
    `rows_executor`.
    """

    group_keys: frozenset[GroupKey] = frozenset()

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]:
        raise NotImplementedError

    def close(self) -> None:
        return None

    def score_rows(self, chunks: Iterable[Sequence[RawRow]], job: RowJob[Out]) -> Generator[list[Out], None, None]:
        """Each chunk's outputs, in order, one list per chunk (every row has one output)."""
        for chunk in chunks:
            prepared = [job.prepare(raw_row) for raw_row in chunk]
            results = score_prepared([item for _, _, item in prepared], self.map)
            yield [job.output(row, number, result) for (number, row, _), result in zip(prepared, results, strict=True)]


class _Wrapped(BaseExecutor):
    """A caller's `Executor` with the defaults of `BaseExecutor`."""

    def __init__(self, executor: Executor):
        self.executor = executor
        self.group_keys = executor_group_keys(executor)

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return self.executor.map(samples)

    def close(self) -> None:
        self.executor.close()


def rows_executor(executor: Executor) -> BaseExecutor:
    """`executor` with every capability of `BaseExecutor`: itself, if it declares them."""
    return executor if isinstance(executor, BaseExecutor) else _Wrapped(executor)


class InlineExecutor(BaseExecutor):
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


class PoolExecutor(BaseExecutor):
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
        self.workers, self.timeout, self.chunk_size = workers, timeout, chunk_size
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

    def score_rows(self, chunks: Iterable[Sequence[RawRow]], job: RowJob[Out]) -> Generator[list[Out], None, None]:
        """Each chunk's outputs, in order; the raw rows themselves go to worker processes running
        `job.for_workers(reward)`, one stream over every chunk, so the pool's chunks adapt and
        its workers stay busy across the file. A group reward, an observed one or a job that
        stays in this process go through `map` a chunk at a time (`BaseExecutor.score_rows`).
        """
        worker = None if self.group_keys or self.observer is not None else job.for_workers(self.reward)
        if worker is None:
            yield from super().score_rows(chunks, job)
            return
        sizes: deque[int] = deque()

        def rows() -> Iterator[RawRow]:
            for chunk in chunks:
                sizes.append(len(chunk))
                yield from chunk

        pool: ProcessPool[RawRow, Out] = ProcessPool(worker, worker.on_error, workers=self.workers, timeout=self.timeout,
                                                     chunk_size=self.chunk_size)  # fmt: skip
        with pool:
            done: list[Out] = []
            for out in pool.imap(rows()):
                done.append(out)
                while sizes and len(done) >= sizes[0]:
                    size = sizes.popleft()
                    yield done[:size]
                    done = done[size:]
            while sizes:  # empty chunks at the end
                yield done[: sizes.popleft()]

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
