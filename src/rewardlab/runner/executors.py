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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, Protocol, runtime_checkable

from rewardlab.compose.combinators import Composite
from rewardlab.compose.observer import ComponentObserver, ComponentTimes, Observation
from rewardlab.core import ErrorKind, Reward, RewardResult, Sample
from rewardlab.errors import UsageError
from rewardlab.runner.pool import ProcessPool, WorkerPool

__all__ = ["Backend", "Executor", "InlineExecutor", "PoolExecutor", "make_executor"]

Backend = Literal["inline", "pool", "ray"]


@runtime_checkable
class Executor(Protocol):
    """Computes one batch: exactly one result per sample, in order."""

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]: ...

    def close(self) -> None: ...


class InlineExecutor:
    """`reward.score_batch` in the calling thread (no isolation; see the module doc)."""

    def __init__(self, reward: Reward):
        self.reward = reward

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return self.reward.score_batch(list(samples))

    def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"InlineExecutor({self.reward!r})"


class PoolExecutor:
    """Batches on the runner's `WorkerPool` (process isolation, timeouts).

    A composite with an observer (`Composite.observed`) is observed in the workers and the
    observations are handed to that observer here, in the caller's process, before `map`
    returns.

    Args:
        reward: the reward each worker process scores with (the workers are forked).
        workers: worker processes.
        timeout: per-sample seconds before a worker is killed (``None``: no limit).
    """

    def __init__(self, reward: Reward, *, workers: int, timeout: float | None):
        self.reward = reward
        self.observer = reward.observer if isinstance(reward, Composite) else None
        self.pool: WorkerPool | ProcessPool[Sample, tuple[RewardResult, list[Observation]]]
        if isinstance(reward, Composite) and self.observer is not None:
            self.pool = ProcessPool(_ObservedScore(reward), _unobserved_failure, workers=workers, timeout=timeout)
        else:
            self.pool = WorkerPool(reward, workers=workers, timeout=timeout)

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]:
        if isinstance(self.pool, WorkerPool):
            return list(self.pool.map(list(samples)))
        outs = self.pool.map(list(samples))
        replay(self.observer, (seen for _, seen in outs))
        return [result for result, _ in outs]

    def close(self) -> None:
        self.pool.close()

    def __repr__(self) -> str:
        return f"PoolExecutor({self.reward!r})"


class _ObservedScore:
    """The workers' job for an observed composite: the result, and what the workers' own
    copy of the observer saw while computing it."""

    def __init__(self, reward: Composite):
        self.times = ComponentTimes()
        self.reward = reward.observed(self.times)

    def __call__(self, sample: Sample) -> tuple[RewardResult, list[Observation]]:
        result = self.reward.score(sample)
        return result, self.times.drain()


def _unobserved_failure(sample: Sample, kind: ErrorKind, message: str) -> tuple[RewardResult, list[Observation]]:
    return RewardResult.failure(kind, message), []


def replay(observer: ComponentObserver | None, observations: Iterable[Sequence[Observation]]) -> None:
    """Hand observations made in other processes to `observer` (no-op without one)."""
    if observer is None:
        return
    for seen in observations:
        for component, seconds, samples in seen:
            observer.observe(component, seconds, samples)


def make_executor(
    reward: Reward,
    *,
    backend: Backend = "pool",
    workers: int = 2,
    timeout: float | None = None,
    ray_address: str | None = None,
) -> Executor:
    """Build the executor for `backend` (``pool`` with ``workers=0`` is ``inline``).

    `ray_address` is the Ray cluster to join when Ray is not initialised yet (default: a local Ray).

    Raises:
        UsageError: unknown backend name.
    """
    if backend == "inline" or (backend == "pool" and workers <= 0):
        return InlineExecutor(reward)
    if backend == "pool":
        return PoolExecutor(reward, workers=workers, timeout=timeout)
    if backend == "ray":
        from rewardlab.runner.ray import RayExecutor

        return RayExecutor(reward, timeout=timeout, address=ray_address)
    raise UsageError(f"unknown backend {backend!r}; use 'inline', 'pool' or 'ray'")
