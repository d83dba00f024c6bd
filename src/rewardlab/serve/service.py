"""The server's logic without HTTP: hosted rewards, their batchers, limits and error mapping.

`create_app` wraps a `RewardService` in FastAPI routes; keeping the logic here means it can be
tested and reused (the CLI, a notebook) without an ASGI stack.
"""

from __future__ import annotations

import asyncio
import difflib
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardlab.compose.observer import ComponentTimes
from rewardlab.core import (
    Reward,
    Sample,
    group_keys,
    observed,
    spec_hash,
)
from rewardlab.core.reward import observer_of
from rewardlab.errors import ApiError, BackendError, GroupSplitError, Overloaded, UsageError
from rewardlab.runner.executors import Executor, PoolExecutor, make_executor
from rewardlab.runner.reward_log import RewardLogger
from rewardlab.serve.batching import Batcher, ScoreOutcome
from rewardlab.serve.metrics import ServerMetrics
from rewardlab.serve.schemas import ResultOut, SampleIn
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore

__all__ = ["Hosted", "RewardService"]

_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")

ExecutorFactory = Callable[[str, Reward], Executor]




def _group_reward_problem(name: str, reward: Reward) -> str | None:
    """Why OpenRLHF's ``POST /get_reward`` cannot serve `reward` under `name`, or None.

    A group reward scores a sample against the other samples of its group, and the server's
    groups are those of one request; OpenRLHF's remote client posts whatever batch it has (0.11.2:
    each sample in a request of its own, as soon as it is generated, and no group id), so the
    groups never arrive whole and every answer would be wrong or an error.
    """
    keys = group_keys(reward)
    if not keys:
        return None
    return (
        f"{name!r} is a group reward (grouped by {', '.join(sorted(keys))}), and OpenRLHF's /get_reward requests do "
        "not hold whole groups (OpenRLHF 0.11.2 posts each sample alone), so it cannot be scored there; put a "
        "per-sample reward behind /get_reward (--openrlhf-reward NAME), and score the group reward on "
        f"POST /v1/rewards/{name}:score with each group in one request (rewardlab.serve.Client, "
        "RemoteReward(group_keys=...)), or in a trainer that holds whole groups (TRL, verl)"
    )


# A reward parameter that makes a reward run code from the data in the host process (see
# `code.tests`): a server takes that data from requests, so it never hosts such a reward.
IN_PROCESS_PARAMS = ("trusted_tests",)


def _refuse_in_process_judging(rewards: Mapping[str, Reward]) -> None:
    """UsageError for a reward anywhere in whose tree an in-process opt-in is on."""

    def on(node: Any) -> bool:
        if isinstance(node, Mapping):
            return any(node.get(p) is True for p in IN_PROCESS_PARAMS) or any(on(v) for v in node.values())
        return isinstance(node, list) and any(on(v) for v in node)

    bad = sorted(name for name, reward in rewards.items() if on(reward.describe()))
    if bad:
        raise UsageError(f"rewards {bad} set {' / '.join(IN_PROCESS_PARAMS)}=true, which runs test code from "
                         "the request in the server process; a server never does: remove it from the spec")


def _refuse_group_reward_on_get_reward(rewards: Mapping[str, Reward], settings: ServeSettings) -> None:
    """At start-up: a server configured for OpenRLHF (an error reward, or a named reward for
    ``/get_reward``) whose ``/get_reward`` reward is a group reward cannot answer it right.
    Without either, ``/get_reward`` is not in use and refuses each request instead (`create_app`)."""
    if settings.openrlhf_error_reward is None and settings.openrlhf_reward is None:
        return
    name = settings.openrlhf_reward or next(iter(rewards))
    problem = _group_reward_problem(name, rewards[name])
    if problem is not None:
        raise GroupSplitError(f"{problem}. Started without --openrlhf-error-reward and --openrlhf-reward, the server "
                              "serves it on the batch endpoint alone")  # fmt: skip


@dataclass
class Hosted:
    """One reward the server hosts."""

    name: str
    reward: Reward
    spec_hash: str
    batcher: Batcher


class RewardService:
    """Hosted rewards, each with its batcher and executor, sharing one cache and metrics.

    Args:
        rewards: served name -> built reward (names: letters, digits, ``_.-``).
        cache: result store shared by all rewards, or ``None``.
        settings: limits, batching and backend.
        executor_factory: ``(name, reward) -> Executor``; default from `settings`.
        logger: gets every computed batch's statistics, under ``<name>/reward``
            (`rewardlab.runner.reward_log`); the caller closes it.

    Raises:
        UsageError: no rewards, or a name that cannot be part of a URL.
    """

    def __init__(
        self,
        rewards: Mapping[str, Reward],
        cache: ResultStore | None,
        settings: ServeSettings,
        *,
        executor_factory: ExecutorFactory | None = None,
        logger: RewardLogger | None = None,
    ):
        if not rewards:
            raise UsageError("no rewards to serve; pass at least one spec")
        bad = [n for n in rewards if not _NAME.match(n)]
        if bad:
            raise UsageError(f"reward names {bad} cannot be used in a URL; use letters, digits and '_.-'")
        if settings.openrlhf_reward is not None and settings.openrlhf_reward not in rewards:
            raise UsageError(f"openrlhf_reward {settings.openrlhf_reward!r} is not served; served: {sorted(rewards)}")
        unknown = sorted(set(settings.per_reward) - set(rewards))
        if unknown:
            raise UsageError(f"per-reward settings for {unknown}, which are not served; served: {sorted(rewards)}")
        _refuse_group_reward_on_get_reward(rewards, settings)
        _refuse_in_process_judging(rewards)
        self.settings = settings
        self.cache = cache
        self.metrics = ServerMetrics()
        factory = executor_factory or self._default_executor
        self.hosted: dict[str, Hosted] = {}
        for name, reward in rewards.items():
            reward_hash = spec_hash(reward)
            own = settings.for_reward(name)
            # A reward is served observed (a composite as an observed copy; the caller's object
            # is not changed): its parts' times feed the ``rewardlab_component_seconds`` histograms.
            times: ComponentTimes | None = ComponentTimes()
            computed = observed(reward, times)
            if observer_of(computed) is None:  # nothing to observe (no parts)
                times = None
            batcher = Batcher(
                name,
                computed,
                factory(name, computed),
                spec_hash=reward_hash,
                cache=cache,
                metrics=self.metrics,
                max_batch=own.max_batch,
                max_wait=own.max_wait_ms / 1000.0,
                max_queue=own.max_queue,
                concurrency=own.concurrency,
                cache_write_delay=own.cache_write_delay_ms / 1000.0,
                component_times=times,
                reward_logger=logger,
            )
            self.hosted[name] = Hosted(name, reward, reward_hash, batcher)
            if isinstance(batcher.executor, PoolExecutor):
                self.metrics.worker_restarts.watch(name, batcher.executor.stats)
        self.closing = False
        self._drain_deadline: float | None = None
        #: Why ``POST /get_reward`` cannot serve its reward (a group reward), or None.
        self.openrlhf_group_problem = _group_reward_problem(self.openrlhf_name, rewards[self.openrlhf_name])

    def _default_executor(self, name: str, reward: Reward) -> Executor:
        s = self.settings.for_reward(name)
        # `make_executor` keeps a reward that batches a model in this process (`batches_in_process`)
        # on its one loaded copy: worker processes would each hold the weights.
        return make_executor(reward, backend=s.backend, workers=s.workers, timeout=s.sample_timeout)

    # -- lookups -----------------------------------------------------------------------------
    def get(self, name: str) -> Hosted:
        """The hosted reward `name`; `ApiError` 404 with suggestions when there is none."""
        hosted = self.hosted.get(name)
        if hosted is None:
            close = difflib.get_close_matches(name, list(self.hosted), n=3, cutoff=0.5)
            hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
            raise ApiError(
                404, "unknown_reward", f"no reward named {name!r}{hint}; GET /v1/rewards lists them",
                details=sorted(self.hosted),
            )
        return hosted

    @property
    def openrlhf_name(self) -> str:
        """The reward behind ``POST /get_reward``."""
        return self.settings.openrlhf_reward or next(iter(self.hosted))

    def describe(self) -> list[dict[str, Any]]:
        """Every hosted reward with its spec and schemas (``GET /v1/rewards``)."""
        sample_schema = SampleIn.model_json_schema()
        result_schema = ResultOut.model_json_schema()
        out = []
        for h in self.hosted.values():
            lo, hi = h.reward.range
            out.append(
                {
                    "name": h.name,
                    "spec_hash": h.spec_hash,
                    # a group reward's groups must reach the server whole, in one request
                    "group_keys": sorted(group_keys(h.reward)),
                    "range": [lo if math.isfinite(lo) else None, hi if math.isfinite(hi) else None],
                    "tree": repr(h.reward),
                    "spec": h.reward.describe(),
                    "sample_schema": sample_schema,
                    "result_schema": result_schema,
                }
            )
        return out

    # -- scoring -----------------------------------------------------------------------------
    async def score(
        self, name: str, samples: Sequence[Sample], *, use_cache: bool = True, reply: str = "results"
    ) -> ScoreOutcome:
        """Score `samples` with reward `name`, mapping every failure to an `ApiError`.

        ``reply="scores"``: only totals are wanted (see `Batcher.score`)."""
        hosted = self.get(name)
        if self.closing:
            raise ApiError(503, "shutting_down", "the server is shutting down; retry on another replica")
        limits = self.settings.for_reward(name)
        if len(samples) > self.settings.max_samples:
            raise ApiError(
                413, "too_many_samples",
                f"{len(samples)} samples in one request; the limit is {self.settings.max_samples}, split the batch",
            )
        if len(samples) > limits.max_queue:
            # Never 429: a request larger than the whole queue would be refused forever.
            raise ApiError(
                413, "exceeds_queue",
                f"{len(samples)} samples in one request can never fit the queue of reward {name!r} "
                f"({limits.max_queue} samples); split the batch into requests of at most {limits.max_queue}",
                details=[{"max_queue": limits.max_queue}],
            )
        try:
            # `asyncio.timeout`, not `wait_for`: no extra task (and loop turn) per request.
            async with asyncio.timeout(limits.request_timeout):
                return await hosted.batcher.score(samples, use_cache=use_cache, reply=reply)
        except Overloaded as exc:
            raise ApiError(
                429, "overloaded", str(exc), headers={"Retry-After": str(math.ceil(exc.retry_after))}
            ) from exc
        except BackendError as exc:
            raise ApiError(503, "backend_unavailable", f"{exc}; retry, and check the server log") from exc
        except TimeoutError as exc:
            raise ApiError(
                504, "timeout",
                f"the request waited more than {limits.request_timeout}s; send smaller batches or raise "
                "--request-timeout (results computed meanwhile are cached)",
            ) from exc

    # -- health and shutdown ------------------------------------------------------------------
    def health(self) -> dict[str, dict[str, Any]]:
        """Each hosted reward's state: ``queued`` and ``running`` batches, ``stuck`` ones (running
        for longer than the reward's request timeout: every request waiting on them got a 504),
        ``ready`` (it can take work now: not shutting down, no stuck batch, room in the queue)
        and ``alive`` (it can ever take work again without a restart: a batch slot is not stuck)."""
        states = {}
        for name, hosted in self.hosted.items():
            limits = self.settings.for_reward(name)
            batcher = hosted.batcher
            stuck = batcher.stuck(limits.request_timeout)
            states[name] = {
                "queued": batcher.queued,
                "running": batcher.running,
                "stuck": stuck,
                "ready": not self.closing and stuck == 0 and batcher.queued < limits.max_queue,
                "alive": stuck < limits.concurrency,
            }
        return states

    def start(self) -> None:
        """Start each worker pool's fork server, before the server listens: the workers, first
        and replacement alike, are then forked from a process that holds no socket of the
        server's and none of the memory it dirties while it serves."""
        for hosted in self.hosted.values():
            if isinstance(hosted.batcher.executor, PoolExecutor):
                hosted.batcher.executor.start_fork_server()

    def drain(self) -> None:
        """Begin a graceful stop (SIGTERM): refuse new work; `aclose` waits for running work
        until `drain_timeout` seconds after this call."""
        if self._drain_deadline is None:
            self._drain_deadline = time.monotonic() + self.settings.drain_timeout
        self.closing = True

    async def aclose(self) -> None:
        """Stop accepting work, let running batches finish within the drain bound (`drain`;
        `drain_timeout` from now if it was not called), and close every executor."""
        self.drain()
        assert self._drain_deadline is not None
        left = max(0.0, self._drain_deadline - time.monotonic())
        await asyncio.gather(*(h.batcher.aclose(left) for h in self.hosted.values()), return_exceptions=True)
