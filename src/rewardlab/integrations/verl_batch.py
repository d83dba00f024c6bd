"""A verl 0.9.1 reward-loop manager that scores the rows it is handed as one batch.

verl's reward loop (`RewardLoopWorker.compute_score_batch`) starts one `run_single` task per row
of its chunk, and its registered managers (`naive`, `dapo`, ...) score each row alone. This
manager collects the rows whose tasks start in the same turn of the event loop (all of a
chunk: `compute_score_batch` creates them together) and scores them with one
`Reward.score_batch` call, so a spec with a batched or pooled component (a reward model, code
tests in the sandbox pool) gets a batch. verl selects it through importlib; the spec and the
error policy are the `reward_kwargs` that `compute_score` takes:

    reward.reward_manager.source=importlib
    reward.reward_manager.module.path=pkg://rewardlab.integrations.verl_batch
    reward.reward_manager.name=RewardlabBatchManager
    +reward.custom_reward_function.reward_kwargs.spec=/abs/path/reward.toml
    +reward.custom_reward_function.reward_kwargs.error_score=0.0
    +reward.custom_reward_function.reward_kwargs.log=tensorboard:/abs/logdir   # optional

Each row's result is what `compute_score` returns for it (`rewardlab.integrations.verl`).

Group rewards (`rewardlab.core.group_keys`). A row's group is verl's `uid`
(`data.non_tensor_batch["uid"]`, one per prompt; without one, the decoded prompt). Without a
reward model, verl computes rewards while it generates (`AgentLoopWorker._compute_score`): each
response, as soon as it is generated, goes alone to a reward worker picked at random. So for a
group reward this manager holds a row until its group has `group_size` rows (default
`actor_rollout_ref.rollout.n`), then scores the group; a row that arrives for a group already
scored (verl's validation pads its batch with copies of the first rows) is scored against that
group. What that needs from verl's configuration is checked when the manager is built, each
failure a `GroupSplitError` naming the override:

* `reward.num_workers=1`: with more workers a group's responses reach different managers;
* validation off or `actor_rollout_ref.rollout.val_kwargs.n` equal to `group_size`: validation
  groups have `val_kwargs.n` members, and the manager cannot tell a validation row from a
  training one;
* at most 1,000 rows per step (`data.train_batch_size` x `n`, and `data.val_batch_size` x `n`
  in validation, where unset means the whole validation set) when rewards stream: a reward
  worker is a Ray async actor, which runs at most 1,000 calls at once
  (`ray._common.ray_constants.DEFAULT_MAX_CONCURRENCY_ASYNC`), and rows waiting for their
  group hold those places;
* not REMAX, whose greedy baseline is one more response under the same uid.

A group still incomplete after `group_wait` seconds (`reward_kwargs`, default 600) without a
new row fails its rows with `GroupSplitError` rather than hang the step.

This module imports verl; `rewardlab.integrations.verl` does not.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from rewardlab.errors import ConfigError, GroupSplitError, RewardLabError
from rewardlab.integrations.verl import VerlScorer

__all__ = ["GROUP_WAIT", "RewardlabBatchManager"]

#: Seconds an incomplete group may wait for a new row before its rows fail (`group_wait`).
GROUP_WAIT = 600.0
#: Ray's limit on concurrent calls of an async actor (a verl reward worker).
_RAY_ASYNC_CONCURRENCY = 1000
#: Scored groups kept so that a late row of one (a validation pad copy) meets its group.
_KEPT_GROUPS = 4096

_Row = tuple[str, str, Any, dict[str, Any]]  # data_source, solution_str, ground_truth, extra_info
_Future = asyncio.Future[dict[str, float]]
_Waiting = tuple[_Row, str | None, _Future]  # a row, its group (group rewards only), its result
_Job = tuple[list[_Row], list[str] | None, list[_Future | None]]  # rows scored together; None: context row


class RewardlabBatchManager(RewardManagerBase):
    """`run_single` per row, one `score_batch` per event-loop turn (see the module doc)."""

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any, reward_router_address: Any = None, reward_model_tokenizer: Any = None):
        super().__init__(config, tokenizer, compute_score)
        kwargs: Mapping[str, Any] = (config.reward.get("custom_reward_function") or {}).get("reward_kwargs") or {}
        if not kwargs.get("spec"):
            raise RewardLabError(
                "RewardlabBatchManager needs the spec: set +reward.custom_reward_function.reward_kwargs.spec=/abs/path/reward.toml"
            )
        error_score = kwargs.get("error_score")
        log, log_every = kwargs.get("log"), int(kwargs.get("log_every", 256))
        self.scorer = VerlScorer(str(kwargs["spec"]), error_score=None if error_score is None else float(error_score),
                                 logger=None if log is None else str(log), log_every=log_every)  # fmt: skip
        self.group_size = _checked_group_size(config, kwargs) if self.scorer.group_keys else None
        self.group_wait = float(kwargs.get("group_wait", GROUP_WAIT))
        self._pending: list[_Waiting] = []  # rows of this turn
        self._flushes: set[asyncio.Task[None]] = set()  # running batches, kept until done
        self._open: dict[str, list[_Waiting]] = {}  # group reward: groups still short of group_size
        self._scored: OrderedDict[str, list[_Row]] = OrderedDict()  # the rows of recently scored groups
        self._expiry: asyncio.TimerHandle | None = None

    async def run_single(self, data: Any) -> dict[str, Any]:
        """The row's `{"reward_score", "reward_extra_info"}`, scored with the rows queued with it."""
        item = data[-1:][0]  # verl scores the last sequence of a multi-sequence output
        row = self._row(item)
        loop = asyncio.get_running_loop()
        future: _Future = loop.create_future()
        self._pending.append((row, self._group_of(item) if self.group_size else None, future))
        if len(self._pending) == 1:  # the first row of this turn schedules the batch after the others
            loop.call_soon(self._start_flush, loop)
        result = await future
        return {"reward_score": result["score"], "reward_extra_info": result}

    def _row(self, item: Any) -> _Row:
        """What verl's `naive` manager passes to `compute_score` for one `DataProtoItem`."""
        response_ids = item.batch["responses"]
        valid_length = item.batch["attention_mask"][-response_ids.shape[-1] :].sum()
        tokenizer: Any = self.tokenizer  # verl annotates it as the AutoTokenizer factory class
        text = tokenizer.decode(response_ids[:valid_length], skip_special_tokens=True)
        extra_info = dict(item.non_tensor_batch.get("extra_info", {}) or {})
        extra_info.update(item.non_tensor_batch.get("tool_extra_fields", None) or {})
        extra_info["num_turns"] = item.non_tensor_batch.get("__num_turns__", None)
        extra_info["rollout_reward_scores"] = item.non_tensor_batch.get("reward_scores", {})
        ground_truth = item.non_tensor_batch["reward_model"]["ground_truth"]
        return str(item.non_tensor_batch["data_source"]), text, ground_truth, extra_info

    def _group_of(self, item: Any) -> str:
        """verl's `uid` of the row's prompt; without one, the prompt's tokens decoded."""
        uid = item.non_tensor_batch.get("uid")
        if uid is not None and str(uid):
            return str(uid)
        prompt_ids = item.batch["prompts"]
        mask = item.batch["attention_mask"][: prompt_ids.shape[-1]].bool()
        tokenizer: Any = self.tokenizer
        return "prompt:" + str(tokenizer.decode(prompt_ids[mask], skip_special_tokens=True))

    def _start_flush(self, loop: asyncio.AbstractEventLoop) -> None:
        waiting, self._pending = self._pending, []
        jobs = [_whole_batch(waiting)] if self.group_size is None else self._whole_groups(waiting, loop)
        for job in jobs:
            if job[0]:
                task = loop.create_task(self._flush(job))
                self._flushes.add(task)
                task.add_done_callback(self._flushes.discard)

    def _whole_groups(self, waiting: list[_Waiting], loop: asyncio.AbstractEventLoop) -> list[_Job]:
        """Two batches: the groups this turn completes, and the late rows of groups already
        scored (with the group's rows as context, whose results are dropped); the rest wait."""
        complete: _Job = ([], [], [])
        late: dict[str, list[_Waiting]] = {}
        for row, gid, future in waiting:
            gid = str(gid)  # group rewards always carry one (`run_single`)
            if gid in self._scored:
                late.setdefault(gid, []).append((row, gid, future))
                continue
            members = self._open.setdefault(gid, [])
            members.append((row, gid, future))
            if len(members) == self.group_size:
                del self._open[gid]
                self._remember(gid, [m[0] for m in members])
                _extend(complete, members, gid)
        context: _Job = ([], [], [])
        for gid, members in late.items():
            _extend(context, [(row, gid, None) for row in self._scored[gid]], gid)
            _extend(context, members, gid)
        if self._expiry is not None:
            self._expiry.cancel()
        self._expiry = loop.call_later(self.group_wait, self._expire) if self._open else None
        return [complete, context]

    def _remember(self, gid: str, rows: list[_Row]) -> None:
        self._scored[gid] = rows
        while len(self._scored) > _KEPT_GROUPS:
            self._scored.popitem(last=False)

    def _expire(self) -> None:
        """Fail the rows of every group that stopped growing `group_wait` seconds ago."""
        self._expiry = None
        open_groups, self._open = self._open, {}
        for gid, members in open_groups.items():
            error = GroupSplitError(
                f"verl sent {len(members)} of group {gid!r}'s {self.group_size} responses and no other row for "
                f"{self.group_wait:g} s, so the group reward cannot score it whole; check that every response of a "
                "prompt reaches this reward worker (reward.num_workers=1) and that group_size is the responses per "
                "prompt (actor_rollout_ref.rollout.n, val_kwargs.n in validation)"
            )
            for _, _, future in members:
                if not future.done():
                    future.set_exception(error)

    async def _flush(self, job: _Job) -> None:
        rows, groups, futures = job
        try:
            results = await asyncio.to_thread(
                self.scorer.batch, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows], groups
            )
        except Exception as exc:  # every waiting row learns why (a row without a policy raises)
            for future in futures:
                if future is not None and not future.done():
                    future.set_exception(exc)
            return
        for future, result in zip(futures, results, strict=True):
            if future is not None and not future.done():
                future.set_result(result)


def _whole_batch(waiting: list[_Waiting]) -> _Job:
    return [row for row, _, _ in waiting], None, [future for _, _, future in waiting]


def _extend(job: _Job, members: Sequence[tuple[_Row, str | None, _Future | None]], gid: str) -> None:
    rows, groups, futures = job
    rows.extend(m[0] for m in members)
    if groups is not None:
        groups.extend([gid] * len(members))
    futures.extend(m[2] for m in members)


def _checked_group_size(config: Any, kwargs: Mapping[str, Any]) -> int:
    """`group_size` for a group reward, after checking verl's configuration can deliver whole
    groups of it (see the module doc)."""
    from omegaconf import OmegaConf

    def get(key: str, default: Any = None) -> Any:
        return OmegaConf.select(config, key, default=default)

    n = int(kwargs.get("group_size") or get("actor_rollout_ref.rollout.n", 1))
    if n < 1:
        raise ConfigError(f"group_size must be >= 1 (the responses per prompt), got {n}")
    problems = []
    if int(get("reward.num_workers", 1) or 1) != 1:
        problems.append("reward.num_workers=1 (verl sends each response to a reward worker picked at random)")
    validates = bool(get("trainer.val_before_train", False)) or int(get("trainer.test_freq", -1) or -1) > 0
    if validates and int(get("actor_rollout_ref.rollout.val_kwargs.n", 1)) != n:
        problems.append(f"actor_rollout_ref.rollout.val_kwargs.n={n}, or trainer.val_before_train=False trainer.test_freq=-1 "
                        "(validation groups have val_kwargs.n responses)")  # fmt: skip
    streams = not get("reward.reward_model.enable", False) or bool(get("reward.reward_model.enable_resource_pool", False))
    rows = int(get("data.train_batch_size", 0) or 0) * n
    if streams and rows > _RAY_ASYNC_CONCURRENCY:
        problems.append(f"data.train_batch_size * n <= {_RAY_ASYNC_CONCURRENCY} (it is {rows}; a Ray reward worker runs at most "
                        f"{_RAY_ASYNC_CONCURRENCY} rows at once, and rows waiting for their group hold those places)")  # fmt: skip
    val_batch = get("data.val_batch_size")  # None: the whole validation set in one batch
    if streams and validates and (val_batch is None or int(val_batch) * n > _RAY_ASYNC_CONCURRENCY):
        problems.append(f"data.val_batch_size * n <= {_RAY_ASYNC_CONCURRENCY} (unset, it is the whole validation set)")
    if str(get("algorithm.adv_estimator", "")).lower() == "remax":
        problems.append("an estimator other than remax (its greedy baseline is one more response per uid)")
    if problems:
        raise GroupSplitError(
            f"the reward is a group reward, and verl as configured cannot give it whole groups of {n}; set "
            + "; ".join(problems)
        )
    return n
