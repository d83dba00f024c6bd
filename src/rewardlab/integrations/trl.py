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
`rewardlab/skipped_rate`, `rewardlab/missing_reference_rate`, `rewardlab/<component>/mean`
and `/error_rate`, and `rewardlab/objective/<name>/mean` for a spec's objectives; with
`log_extra`, the completions table gets `rewardlab/<component>` and `rewardlab/status` columns.

Groups: TRL computes advantages over `num_generations` consecutive completions of one prompt
(`rewards.view(-1, num_generations)`), and it calls a reward function with the completions of
one process. A group reward (majority vote, consensus: `rewardlab.core.group_keys`) gets each
sample's `group` from that layout: the i-th run of consecutive identical prompts is group `i`,
or, with `num_generations`, completions `[k*G, (k+1)*G)` are group `k` and a call whose
completions are not whole groups (a group split across processes, when the per-process batch
is not a multiple of `num_generations`) raises `GroupSplitError` instead of voting on a part.

A completion whose sample has no reference (a dataset row with an empty answer, or no reference
column at all) cannot be compared; when the spec lets that component's error pass
(`on_error = "skip"` / `"zero"`), the total is `ok` and reads like a wrong answer. The adapter
says so with a `MissingReferenceWarning` the first time it happens, and with
`on_missing_reference="skip"` returns None for such completions (TRL leaves them out).
"""

from __future__ import annotations

import atexit
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from rewardlab.core import JSON, Reward, RewardResult, Sample, Status, group_keys, spec_hash
from rewardlab.core.choices import check_choice
from rewardlab.core.columns import component_names
from rewardlab.errors import (
    ConfigError,
    MappingError,
    MissingReferenceWarning,
    RewardLabError,
)
from rewardlab.integrations._common import (
    SpecLike,
    batch_metrics,
    build_reward,
    first_key,
    layout_groups,
    row_log,
    unreferenced_components,
    with_groups,
)
from rewardlab.runner.reward_log import RewardLogger

__all__ = [
    "AsyncTRLReward",
    "MissingReferenceWarning",
    "TRLReward",
    "as_trl_reward",
    "samples_from_trl",
]

#: Dataset columns taken as the reference, in order of preference.
REFERENCE_COLUMNS = ("reference", "solution", "answer", "ground_truth", "label")
#: Keyword arguments TRL adds that are not dataset columns.
_TRAINER_KWARGS = frozenset({"trainer_state", "log_extra", "log_metric", "environments"})
OnError = float | Literal["skip", "raise"]
OnMissingReference = Literal["score", "skip"]


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
            raise MappingError(f"TRL column {name!r} has {len(values)} values for {n} completions")
    if completion_ids is not None and len(completion_ids) != n:
        raise MappingError(f"completion_ids has {len(completion_ids)} entries for {n} completions")
    if reference_column is not None and reference_column not in columns:
        raise ConfigError(
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


def trl_groups(samples: Sequence[Sample], num_generations: int | None = None) -> list[str]:
    """Each completion's group id in TRL's layout (see the module doc).

    Raises:
        GroupSplitError: with `num_generations`, the call does not hold whole groups.
    """
    return layout_groups(
        samples, num_generations, trainer="TRL", size_option="num_generations",
        fix="make the per-process generation batch (per_device_train_batch_size * steps_per_generation) a multiple "
        "of num_generations",
    )  # fmt: skip


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
        on_missing_reference: for a completion without a reference whose total is still `ok`
            (see the module doc): `"score"` returns that total (the default), `"skip"` returns
            None. Either way the first one raises a `MissingReferenceWarning`.
        workers: score in a long-lived pool of this many worker processes (0: in process, or
            one worker process when `timeout` is set; `rewardlab.runner.execution_plan`).
        timeout: per-sample seconds in the pool (a hung sample becomes `error/timeout`).
        name: the name TRL logs this reward under (default: the spec's reward name).
        num_generations: `GRPOConfig.num_generations`, for group rewards (see the module doc);
            None groups runs of identical prompts. TRL's evaluation groups by
            `num_generations_eval`: leave this None if the two differ.
        logger: also log each call's reward statistics (component means, histograms, error
            rates) to TensorBoard or W&B without TRL's own logging: a `RewardLogger`, or
            ``"tensorboard:DIR"`` / ``"wandb:PROJECT"`` (`rewardlab.runner.reward_log`).
        log_every: completions per logged step (None: each call is a step).
    """

    def __init__(
        self,
        spec: SpecLike,
        *,
        on_error: OnError = "skip",
        reference_column: str | None = None,
        token_ids: bool = False,
        log_components: bool = True,
        on_missing_reference: OnMissingReference = "score",
        workers: int = 0,
        timeout: float | None = None,
        name: str | None = None,
        num_generations: int | None = None,
        logger: RewardLogger | str | None = None,
        log_every: int | None = None,
    ):
        if not (on_error in ("skip", "raise") or isinstance(on_error, int | float)):
            raise ConfigError(f"on_error must be 'skip', 'raise' or a number, got {on_error!r}")
        check_choice("on_missing_reference", on_missing_reference, OnMissingReference)
        if num_generations is not None and num_generations < 1:
            raise ConfigError(f"num_generations must be >= 1 (GRPOConfig.num_generations), got {num_generations}")
        self.num_generations = num_generations
        self.reward: Reward = build_reward(spec)
        self.on_error = on_error
        self.reference_column = reference_column
        self.token_ids = token_ids
        self.log_components = log_components
        self.on_missing_reference = on_missing_reference
        self._warned_missing_reference = False
        self.workers, self.timeout = workers, timeout
        self.components = component_names(self.reward)
        self.spec_hash = spec_hash(self.reward)  # what the scores can be traced back to
        # TRL logs rewards/<__name__>/mean; keep it a valid metric key.
        self.__name__ = name or str(getattr(self.reward, "name", "rewardlab")).replace(" ", "_")
        self._pool: Any = None
        self.last_results: list[RewardResult] = []
        self.log = row_log(logger, log_every)

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None = None,
        **columns: Any,
    ) -> list[float | None]:
        samples = self._samples(prompts, completions, completion_ids, columns)
        return self._finish(samples, self._score(samples), columns)

    def _samples(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None,
        columns: dict[str, Any],
    ) -> list[Sample]:
        samples = samples_from_trl(
            prompts,
            completions,
            completion_ids,
            columns=columns,
            reference_column=self.reference_column,
            token_ids=self.token_ids,
        )
        if not group_keys(self.reward):
            return samples
        return with_groups(samples, trl_groups(samples, self.num_generations))

    def _finish(self, samples: list[Sample], results: list[RewardResult], columns: dict[str, Any]) -> list[float | None]:
        self.last_results = results
        if self.log is not None:
            self.log.add(results)
        unreferenced = [unreferenced_components(s, r) if r.status is Status.OK else [] for s, r in zip(samples, results, strict=True)]
        if any(unreferenced):
            self._warn_missing_reference(unreferenced)
        if self.log_components:
            self._log(results, columns.get("log_metric"), columns.get("log_extra"))
            log_metric = columns.get("log_metric")
            if log_metric is not None:
                log_metric("rewardlab/missing_reference_rate", sum(map(bool, unreferenced)) / max(1, len(results)))
        values = [self._value(r) for r in results]
        if self.on_missing_reference == "skip":
            values = [None if names else v for v, names in zip(values, unreferenced, strict=True)]
        return values

    def _warn_missing_reference(self, unreferenced: list[list[str]]) -> None:
        if self._warned_missing_reference:
            return
        self._warned_missing_reference = True
        names = sorted({n for row in unreferenced for n in row})
        count = sum(map(bool, unreferenced))
        what = (
            "they get None (on_missing_reference='skip')" if self.on_missing_reference == "skip"
            else "they keep a total that reads like a wrong answer; pass on_missing_reference='skip' to leave them out"
        )  # fmt: skip
        warnings.warn(
            MissingReferenceWarning(
                f"reward {self.__name__!r}: {count} of {len(unreferenced)} completions have no reference, so "
                f"{', '.join(map(repr, names))} could not compare and {what}; check the dataset's reference column "
                f"({', '.join(REFERENCE_COLUMNS)}, or reference_column=). Warned once; "
                "rewardlab/missing_reference_rate counts them per batch"
            ),
            stacklevel=4,  # the trainer's call of this reward function
        )

    def _score(self, samples: list[Sample]) -> list[RewardResult]:
        if self._pool is None:  # the executor `make_executor` chooses, made on first use
            from rewardlab.runner import InlineExecutor, make_executor

            self._pool = make_executor(self.reward, workers=self.workers, timeout=self.timeout)
            if not isinstance(self._pool, InlineExecutor):
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
        """Stop the worker pool, if one was started, and log the completions not logged yet."""
        if self.log is not None:
            self.log.flush()
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __getstate__(self) -> dict[str, Any]:
        # Picklable for TRL's async rollout workers: the pool stays with its owner.
        state = dict(self.__dict__)
        state["_pool"] = None
        state["last_results"] = []
        state["log"] = None  # a log file or run belongs to one process
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
        return self._finish(samples, results, columns)


def _component_score(result: RewardResult, name: str) -> float | None:
    sub = result.components.get(name)
    return sub.score if sub is not None else None


def as_trl_reward(spec: SpecLike, *, asynchronous: bool = False, **options: Any) -> TRLReward:
    """A rewardlab spec as a `trl.GRPOTrainer` reward function; see `TRLReward` for options.

    With `asynchronous=True` it is an `async` function (`AsyncTRLReward`), which TRL awaits
    concurrently with its other async rewards: use it for specs with LLM judges.

    Examples:
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
