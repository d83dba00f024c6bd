"""TRL adapter: a rewardlab spec as a `GRPOTrainer` reward function.

    from trl import GRPOTrainer
    from rewardlab.integrations.trl import as_trl_reward

    trainer = GRPOTrainer(model=..., reward_funcs=as_trl_reward("reward.toml"), ...)

TRL calls a reward function as `f(prompts=..., completions=..., completion_ids=..., **columns)`
where `columns` are the dataset's other columns (one value per completion) plus the trainer's
hooks `trainer_state`, `log_extra` and `log_metric` (TRL >= 0.24, `GRPOTrainer._calculate_rewards`),
and expects one `float | None` per completion; `None` means "no reward for this one" and TRL
leaves it out of the weighted sum (it becomes NaN, summed with `nansum`).

Mapping: `prompt` <- prompts[i], `response` <- completions[i] (a string, or the assistant
message list of a conversational dataset), `reference` <- the first of `reference`,
`solution`, `answer`, `ground_truth`, `label` present among the columns (or the column named
by `reference_column`); every other column goes to `sample.meta`, with `num_tokens` (the
completion's token count, for `unit="tokens"` length terms) and, with `token_ids=True`, the
`completion_ids` themselves (for token n-gram repetition).

Logging: with TRL's `log_metric` hook, each batch logs `rewardlab/error_rate`,
`rewardlab/skipped_rate`, and `rewardlab/<component>/mean` and `/error_rate`; with
`log_extra`, the completions table gets `rewardlab/<component>` and `rewardlab/status` columns.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from rewardlab.core import JSON, Reward, RewardResult, Sample, Status, spec_hash
from rewardlab.errors import RewardLabError
from rewardlab.integrations._common import (
    SpecLike,
    batch_metrics,
    build_reward,
    component_names,
    first_key,
)

__all__ = ["REFERENCE_COLUMNS", "AsyncTRLReward", "TRLReward", "as_trl_reward", "samples_from_trl"]

#: Dataset columns taken as the reference, in order of preference.
REFERENCE_COLUMNS = ("reference", "solution", "answer", "ground_truth", "label")
#: Keyword arguments TRL adds that are not dataset columns.
_TRAINER_KWARGS = frozenset({"trainer_state", "log_extra", "log_metric", "environments"})
OnError = float | Literal["skip", "raise"]


def samples_from_trl(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    completion_ids: Sequence[Sequence[int]] | None = None,
    *,
    columns: Mapping[str, Sequence[JSON]] | None = None,
    reference_column: str | None = None,
    token_ids: bool = False,
) -> list[Sample]:
    """One `Sample` per completion from TRL's reward-function arguments (see the module doc).

    Raises:
        RewardLabError: columns of a length other than the number of completions, or a
            `reference_column` that is not among the columns.
    """
    n = len(completions)
    columns = {k: v for k, v in (columns or {}).items() if k not in _TRAINER_KWARGS}
    for name, values in {"prompts": prompts, **columns}.items():
        if len(values) != n:
            raise RewardLabError(f"TRL column {name!r} has {len(values)} values for {n} completions")
    if completion_ids is not None and len(completion_ids) != n:
        raise RewardLabError(f"completion_ids has {len(completion_ids)} entries for {n} completions")
    if reference_column is not None and reference_column not in columns:
        raise RewardLabError(
            f"reference column {reference_column!r} is not in the dataset columns {sorted(columns)}; "
            "add it to the dataset or pass reference_column=None"
        )
    ref_key = reference_column or first_key(columns, REFERENCE_COLUMNS)
    samples = []
    for i in range(n):
        meta: dict[str, JSON] = {k: v[i] for k, v in columns.items() if k != ref_key}
        if completion_ids is not None:
            meta["num_tokens"] = len(completion_ids[i])
            if token_ids:
                meta["completion_ids"] = list(completion_ids[i])
        response = completions[i]
        if isinstance(response, tuple):
            response = list(response)
        samples.append(
            Sample(
                prompt=prompts[i] if isinstance(prompts[i], str | list) else str(prompts[i]),
                response=response,
                reference=columns[ref_key][i] if ref_key else None,
                meta=meta,
            )
        )
    return samples


class TRLReward:
    """A reward function with TRL's signature, backed by a rewardlab Reward.

    Args:
        spec: a TOML spec path or text, a dict, or a built Reward.
        on_error: what an `error` or `skipped` result becomes: `"skip"` (None, TRL leaves the
            completion out of this reward; the default), a number (an explicit, logged
            policy), or `"raise"` (stop training with the row's error).
        reference_column: the dataset column holding the reference (default: the first of
            `REFERENCE_COLUMNS` present).
        token_ids: also pass `completion_ids` in `meta` (for token n-gram terms).
        log_components: log component means and error rates through TRL's hooks.
        workers: score in a long-lived pool of this many worker processes (0: in process).
        timeout: per-sample seconds in the pool (a hung sample becomes `error/timeout`).
        name: the name TRL logs this reward under (default: the spec's reward name).
    """

    def __init__(
        self,
        spec: SpecLike,
        *,
        on_error: OnError = "skip",
        reference_column: str | None = None,
        token_ids: bool = False,
        log_components: bool = True,
        workers: int = 0,
        timeout: float | None = None,
        name: str | None = None,
    ):
        if not (on_error in ("skip", "raise") or isinstance(on_error, int | float)):
            raise RewardLabError(f"on_error must be 'skip', 'raise' or a number, got {on_error!r}")
        self.reward: Reward = build_reward(spec)
        self.on_error = on_error
        self.reference_column = reference_column
        self.token_ids = token_ids
        self.log_components = log_components
        self.workers, self.timeout = workers, timeout
        self.components = component_names(self.reward)
        self.spec_hash = spec_hash(self.reward)  # what the scores can be traced back to
        # TRL logs rewards/<__name__>/mean; keep it a valid metric key.
        self.__name__ = name or str(getattr(self.reward, "name", "rewardlab")).replace(" ", "_")
        self._pool: Any = None
        self.last_results: list[RewardResult] = []

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None = None,
        **columns: Any,
    ) -> list[float | None]:
        samples = self._samples(prompts, completions, completion_ids, columns)
        return self._finish(self._score(samples), columns)

    def _samples(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None,
        columns: dict[str, Any],
    ) -> list[Sample]:
        return samples_from_trl(
            prompts,
            completions,
            completion_ids,
            columns=columns,
            reference_column=self.reference_column,
            token_ids=self.token_ids,
        )

    def _finish(self, results: list[RewardResult], columns: dict[str, Any]) -> list[float | None]:
        self.last_results = results
        if self.log_components:
            self._log(results, columns.get("log_metric"), columns.get("log_extra"))
        return [self._value(r) for r in results]

    def _score(self, samples: list[Sample]) -> list[RewardResult]:
        if self.workers <= 0 and self.timeout is None:
            return self.reward.score_batch(samples)
        if self._pool is None:
            from rewardlab.runner import WorkerPool

            self._pool = WorkerPool(self.reward, workers=max(1, self.workers), timeout=self.timeout)
            self._pool.__enter__()
            atexit.register(self.close)
        return list(self._pool.map(samples))

    def _value(self, result: RewardResult) -> float | None:
        if result.status is Status.OK:
            return result.score
        if self.on_error == "raise":
            reason = result.error or result.info.get("skip_reason", "skipped")
            raise RewardLabError(f"reward {self.__name__!r} could not score a completion: {reason}")
        return None if self.on_error == "skip" else float(self.on_error)

    def _log(
        self,
        results: list[RewardResult],
        log_metric: Callable[[str, float], None] | None,
        log_extra: Callable[[str, list[Any]], None] | None,
    ) -> None:
        if log_metric is not None:
            for key, value in batch_metrics(results, self.components).items():
                log_metric(key, value)
        if log_extra is not None:
            log_extra("rewardlab/status", [r.status.value for r in results])
            for name in self.components:
                log_extra(f"rewardlab/{name}", [_component_score(r, name) for r in results])

    def close(self) -> None:
        """Stop the worker pool, if one was started."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __getstate__(self) -> dict[str, Any]:
        # Picklable for TRL's async rollout workers: the pool stays with its owner.
        state = dict(self.__dict__)
        state["_pool"] = None
        state["last_results"] = []
        return state

    def __repr__(self) -> str:
        return f"TRLReward({self.__name__!r}, on_error={self.on_error!r})"


class AsyncTRLReward(TRLReward):
    """The same adapter as an `async` reward function.

    GRPOTrainer awaits async reward functions concurrently (`asyncio.gather` on its event loop),
    so a spec with slow, I/O-bound components (an LLM judge) does not hold up the other rewards.
    Scoring runs in a worker thread (`Reward.ascore_batch`), or in the process pool with `workers`.
    """

    async def __call__(  # type: ignore[override]
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None = None,
        **columns: Any,
    ) -> list[float | None]:
        import asyncio

        samples = self._samples(prompts, completions, completion_ids, columns)
        if self.workers <= 0 and self.timeout is None:
            results = await self.reward.ascore_batch(samples)
        else:
            results = await asyncio.to_thread(self._score, samples)
        return self._finish(results, columns)


def _component_score(result: RewardResult, name: str) -> float | None:
    sub = result.components.get(name)
    return sub.score if sub is not None else None


def as_trl_reward(spec: SpecLike, *, asynchronous: bool = False, **options: Any) -> TRLReward:
    """A rewardlab spec as a `trl.GRPOTrainer` reward function; see `TRLReward` for options.

    With `asynchronous=True` it is an `async` function (`AsyncTRLReward`), which TRL awaits
    concurrently with its other async rewards: use it for specs with LLM judges.

    Example:
        >>> from rewardlab.integrations.trl import as_trl_reward
        >>> spec = '''
        ... [reward]
        ... name = "exact"
        ... [[reward.components]]
        ... name = "exact"
        ... use = "text.exact"
        ... '''
        >>> f = as_trl_reward(spec)
        >>> f(prompts=["Capital of France?"] * 2, completions=["Paris", "Rome"], solution=["paris"] * 2)
        [1.0, 0.0]
    """
    return AsyncTRLReward(spec, **options) if asynchronous else TRLReward(spec, **options)
