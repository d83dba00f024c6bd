"""Scale-out on Ray: a batch is cut into chunks, each scored by a Ray task on any node.

    ray.init(address="auto")                      # or nothing: a local Ray is started
    executor = RayExecutor(reward)
    results = executor.map(samples)               # same results as reward.score_batch(samples)

The reward object is put in Ray's object store once (``ray.put``) and every task scores a
chunk with ``reward.score_batch`` — the same code path as the local backend, so results are
identical. A chunk whose task runs past `timeout` seconds is cancelled and its samples get
`error/timeout`; a chunk whose task fails (its worker died, the node was lost) after Ray's
retries (``max_retries``) is scored again one sample per task, so that only the sample whose
task fails gets `error/crash` (a group reward's chunk, whole groups, fails as one): a batch
never loses a row.

Running on a cluster: start Ray on every node (``ray start --head`` on one,
``ray start --address=HEAD:6379`` on the others), make rewardlab importable on every node,
then ``rewardlab serve spec.toml --backend ray --ray-address auto`` or
``rewardlab score spec.toml data.jsonl --backend ray --ray-address auto``.
"""

from __future__ import annotations

import math
import pickle
import time
from collections.abc import Sequence
from typing import Any

from rewardlab._lazy import require
from rewardlab.compose.observer import ComponentTimes, Observation
from rewardlab.core import (
    ErrorKind,
    Reward,
    RewardResult,
    Sample,
    group_keys,
    observed,
)
from rewardlab.core.reward import observer_of
from rewardlab.runner.executors import BaseExecutor, replay
from rewardlab.runner.groups import scatter, split_at_units

__all__ = ["RayExecutor", "ensure_ray"]

# A submitted chunk: its task's ref (None: nothing sent), the samples sent, each position's
# refusal (a sample that could not be serialised) or None.
_Submitted = tuple[Any, list[Sample], list[RewardResult | None]]


def ensure_ray(address: str | None = None, *, num_cpus: int | None = None) -> Any:
    """Connect to Ray (``address``) or start a local one; returns the `ray` module.

    Raises:
        DependencyError: Ray is not installed (the `ray` extra).
    """
    ray = require("ray", needed_by="the Ray backend")

    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kwargs["address"] = address
        elif num_cpus is not None:
            kwargs["num_cpus"] = num_cpus
        ray.init(**kwargs)
    return ray


def _refused(exc: BaseException) -> RewardResult:
    why = "nested too deep" if isinstance(exc, RecursionError) or "recursion" in str(exc).lower() else "not serialisable"
    return RewardResult.failure(
        ErrorKind.INVALID_INPUT, f"the input cannot be sent to a Ray task: {why} ({type(exc).__name__}: {str(exc)[:300]})"
    )


def _score_chunk(reward: Reward, samples: list[Sample]) -> tuple[list[dict[str, Any]], list[Observation]]:
    # Results travel as dicts: plain data pickles across Ray versions and nodes. An observed
    # composite is observed here, on the node, and the observations travel back with them.
    times = None
    if observer_of(reward) is not None:
        times = ComponentTimes()
        reward = observed(reward, times)
    rows = [r.to_dict() for r in reward.score_batch(samples)]
    return rows, times.drain() if times is not None else []


class RayExecutor(BaseExecutor):
    """Scores batches as Ray tasks (see the module doc).

    Args:
        reward: the reward (must pickle with cloudpickle, which closures and lambdas do).
        timeout: seconds a chunk may take before it is cancelled (``None``: no limit).
        chunk_size: samples per task; default splits a batch over the cluster's CPUs. A group
            reward's tasks hold whole groups (a group larger than this is one task).
        address: Ray address to connect to when Ray is not initialised yet.
        max_retries: Ray's retries of a task whose worker process died.
    """

    def __init__(
        self,
        reward: Reward,
        *,
        timeout: float | None = None,
        chunk_size: int | None = None,
        address: str | None = None,
        max_retries: int = 1,
    ):
        self._ray = ensure_ray(address)
        self.reward = reward
        self.group_keys = group_keys(reward)
        self.timeout = timeout
        self.chunk_size = chunk_size
        self._ref = self._ray.put(reward)
        self._task = self._ray.remote(max_retries=max_retries)(_score_chunk)

    def _size(self, n: int) -> int:
        if self.chunk_size:
            return self.chunk_size
        cpus = max(1, int(self._ray.cluster_resources().get("CPU", 1)))
        return max(1, math.ceil(n / (2 * cpus)))  # two chunks per CPU balances uneven chunks

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]:
        """One result per sample, in order."""
        samples = list(samples)
        if not samples:
            return []
        size = self._size(len(samples))
        if self.group_keys:  # a group reward: a task gets whole groups (`runner.groups`)
            pieces = split_at_units(samples, self.group_keys, size)
        else:
            pieces = [list(range(i, min(i + size, len(samples)))) for i in range(0, len(samples), size)]
        chunks = [[samples[i] for i in piece] for piece in pieces]
        submitted = [self._submit(chunk) for chunk in chunks]
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        return scatter(pieces, self._collect_all(submitted, deadline), len(samples))

    def _collect_all(self, submitted: list[_Submitted], deadline: float | None) -> list[list[RewardResult]]:
        """Each chunk's results, taken as the chunks finish: a failed chunk is scored again at
        once (`_one_by_one`), not after a slow chunk before it has used up the time left."""
        outs: list[list[RewardResult] | None] = [None] * len(submitted)
        waiting = {ref: k for k, (ref, _, _) in enumerate(submitted) if ref is not None}
        while waiting:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _ = self._ray.wait(list(waiting), num_returns=1, timeout=remaining)
            if not ready:
                break  # the time is up: what is left is cancelled below, as timeouts
            k = waiting.pop(ready[0])
            outs[k] = self._merge(*submitted[k], deadline)
        return [out if out is not None else self._merge(*entry, deadline) for out, entry in zip(outs, submitted, strict=True)]

    def _submit(self, chunk: list[Sample]) -> _Submitted:
        """Start the task of `chunk`: (its ref or None, the samples sent, each position's refusal
        or None). A sample Ray cannot serialise (nested too deep, a lock in `meta`) is that row's
        `error/invalid_input` and the rest are sent; for a group reward, its whole chunk (a vote
        without a member would be wrong)."""
        try:
            return self._task.remote(self._ref, chunk), chunk, [None] * len(chunk)
        except Exception as exc:  # any serialisation failure; found per sample below
            if self.group_keys:
                return None, [], [_refused(exc)] * len(chunk)
            failure = exc
        refused: list[RewardResult | None] = []
        for sample in chunk:
            try:
                pickle.dumps(sample)
            except Exception as exc:  # what Ray's serialiser would hit too
                refused.append(_refused(exc))
            else:
                refused.append(None)
        sent = [s for s, r in zip(chunk, refused, strict=True) if r is None]
        if len(sent) == len(chunk):  # each pickles alone: nothing to single out
            return None, [], [_refused(failure)] * len(chunk)
        if not sent:
            return None, [], refused
        ref, sent, again = self._submit(sent)
        results = iter(again)
        return ref, sent, [r if r is not None else next(results) for r in refused]

    def _merge(self, ref: Any, sent: list[Sample], refused: list[RewardResult | None], deadline: float | None) -> list[RewardResult]:
        computed = iter(self._collect(ref, sent, deadline) if ref is not None else ())
        return [r if r is not None else next(computed) for r in refused]

    def _collect(self, ref: Any, chunk: list[Sample], deadline: float | None) -> list[RewardResult]:
        ray = self._ray
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            rows, seen = ray.get(ref, timeout=remaining)
        except ray.exceptions.GetTimeoutError:
            ray.cancel(ref, force=True)
            msg = f"Ray task exceeded the timeout of {self.timeout:g}s; cancelled"
            return [RewardResult.failure(ErrorKind.TIMEOUT, msg)] * len(chunk)
        except ray.exceptions.RayError as exc:
            if len(chunk) > 1 and not self.group_keys:
                return self._one_by_one(chunk, deadline)
            msg = f"Ray task failed: {type(exc).__name__}: {str(exc)[:500]}"
            return [RewardResult.failure(ErrorKind.CRASH, msg)] * len(chunk)
        replay(observer_of(self.reward), [seen])
        return [RewardResult.from_dict(r) for r in rows]

    def _one_by_one(self, chunk: list[Sample], deadline: float | None) -> list[RewardResult]:
        """A failed chunk of a per-sample reward again, each sample in a task of its own: the
        sample whose task fails (one that kills its worker) gets `error/crash`, and the others
        are scored, not blamed with it. A group reward's chunk is whole groups: not split."""
        submitted = [self._submit([sample]) for sample in chunk]
        return [r for ref, sent, refused in submitted for r in self._merge(ref, sent, refused, deadline)]

    def close(self) -> None:
        """Drop the reward from the object store (Ray itself is left running)."""
        self._ref = None

    def __repr__(self) -> str:
        return f"RayExecutor({self.reward!r})"
