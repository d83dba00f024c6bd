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

Each row's result is what `compute_score` returns for it (`rewardlab.integrations.verl`).
This module imports verl; `rewardlab.integrations.verl` does not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from rewardlab.errors import RewardLabError
from rewardlab.integrations.verl import VerlScorer

__all__ = ["RewardlabBatchManager"]

_Row = tuple[str, str, Any, dict[str, Any]]  # data_source, solution_str, ground_truth, extra_info


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
        self.scorer = VerlScorer(str(kwargs["spec"]), error_score=None if error_score is None else float(error_score))
        self._pending: list[tuple[_Row, asyncio.Future[dict[str, float]]]] = []
        self._flushes: set[asyncio.Task[None]] = set()  # running batches, kept until done

    async def run_single(self, data: Any) -> dict[str, Any]:
        """The row's `{"reward_score", "reward_extra_info"}`, scored with the rows queued with it."""
        row = self._row(data[-1:][0])  # verl scores the last sequence of a multi-sequence output
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, float]] = loop.create_future()
        self._pending.append((row, future))
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

    def _start_flush(self, loop: asyncio.AbstractEventLoop) -> None:
        task = loop.create_task(self._flush())
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(self) -> None:
        batch, self._pending = self._pending, []
        rows = [row for row, _ in batch]
        try:
            results = await asyncio.to_thread(
                self.scorer.batch, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows]
            )
        except Exception as exc:  # every waiting row learns why (a row without a policy raises)
            for _, future in batch:
                future.set_exception(exc)
            return
        for (_, future), result in zip(batch, results, strict=True):
            future.set_result(result)
