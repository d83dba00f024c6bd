"""verl adapter: a rewardlab spec as a `custom_reward_function`.

verl 0.9.1 scores rewards in its reward loop (`verl.experimental.reward_loop.RewardLoopWorker`):
`load_reward_manager` wraps the function named by `reward.custom_reward_function.path/name`
(`get_custom_reward_fn`, with `reward_kwargs` merged into every call) and the registered
manager (`reward.reward_manager.name`, default `naive`) calls it once per response,
`compute_score(data_source=, solution_str=, ground_truth=, extra_info=)`, rows running
concurrently on threads. A returned dict must carry `score`; verl appends *every* key of it to
`reward_extra_info` and stacks them into columns, so each row returns the same keys:

    {"score": total, "<component>": score or 0.0, "<component>/scored": 1.0 or 0.0,
     "objective/<name>": value or 0.0, "objective/<name>/scored": 1.0 or 0.0,
     "rewardlab_error": 0/1, "rewardlab_skipped": 0/1}

(the `objective/` pair for each `[[reward.objectives]]` of the spec; verl averages every column
into its metrics, so an objective's mean is `objective/<name>`'s sum over its `/scored` sum).

A component without a score is 0.0 with `<component>/scored` = 0.0, never NaN: verl averages
these columns into its validation metrics and one NaN makes the mean `nan`.

Two ways to point verl at a spec (the keys `main_ppo` reads are under `reward.`; the legacy
top-level `custom_reward_function.*` is only migrated by the fully-async trainer, so under
`main_ppo` it is silently ignored and verl's default scorer runs instead):

    # reward.py, next to your spec
    from rewardlab.integrations.verl import make_compute_score
    compute_score = make_compute_score("reward.toml", error_score=0.0)

    # or with no file of your own (verl passes reward_kwargs to compute_score):
    reward.custom_reward_function.path=pkg://rewardlab.integrations.verl
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.spec=/abs/path/reward.toml
    +reward.custom_reward_function.reward_kwargs.error_score=0.0

verl 0.9.1's reward loop has no batch manager (its registry: naive, dapo, gdpo, rate_limited,
remote), so `compute_score` is the entry point; `rewardlab.integrations.verl_batch` is a manager
that scores the rows of a reward worker's chunk in one batch. `compute_score_batch` serves the
legacy `verl.workers.reward_manager.BatchRewardManager` for code that builds one itself.

verl needs a number for every response, so an `error` result needs a policy: `error_score`
(a number, counted in `rewardlab_error`) or `None` (the default: raise, naming the row's error).

Group rewards (majority vote, consensus: `rewardlab.core.group_keys`) score a response against
the other responses to its prompt. verl's trainer gives each prompt a `uid`
(`RayPPOTrainer.fit`: one `uuid4` per prompt before `repeat(rollout.n, interleave=True)`), which
reaches the reward loop in `data.non_tensor_batch["uid"]` but not `compute_score`'s arguments.
So `compute_score` (one response per call) refuses a group reward with `GroupSplitError`,
`RewardlabBatchManager` (`verl_batch`) waits for each uid's whole group, and the batched form
(`compute_score_batch`, `VerlScorer.batch`) takes each row's group from `groups=` when given,
else `extra_info["uid"]`, else the row's prompt (`extra_info["prompt"]` / `["question"]`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from rewardlab.core import JSON, Reward, RewardResult, Sample, Status, group_keys
from rewardlab.core.columns import (
    component_columns,
    component_names,
    objective_columns,
    objective_names,
)
from rewardlab.errors import ConfigError, GroupSplitError, MappingError, RewardLabError
from rewardlab.integrations._common import SpecLike, build_reward, row_log, with_groups
from rewardlab.runner.reward_log import RewardLogger

__all__ = ["VerlScorer", "compute_score", "compute_score_batch", "make_compute_score"]


def sample_from_verl(data_source: str, solution_str: Any, ground_truth: JSON, extra_info: Mapping[str, JSON] | None) -> Sample:
    """The `Sample` for one verl call: response = the decoded solution, reference = the ground
    truth, meta = `extra_info` plus `data_source`. A prompt in `extra_info["prompt"]` (or
    `question`) becomes the sample's prompt."""
    meta: dict[str, JSON] = dict(extra_info or {})
    meta["data_source"] = data_source
    prompt = meta.get("prompt", meta.get("question", ""))
    return Sample(prompt=prompt if isinstance(prompt, str | list) else str(prompt), response=solution_str, reference=ground_truth, meta=meta)


def verl_groups(samples: Sequence[Sample], extra_infos: Sequence[Mapping[str, JSON] | None], groups: Sequence[Any] | None = None) -> list[str]:
    """Each row's group id: `groups[i]` when given (verl's `uid`), else `extra_info["uid"]`,
    else the row's prompt text (see the module doc).

    Raises:
        GroupSplitError: a row with neither a uid nor a prompt (its group cannot be told).
    """
    if groups is not None and len(groups) != len(samples):
        raise MappingError(f"groups has {len(groups)} ids for {len(samples)} rows; send one per row")
    ids = []
    for i, (sample, info) in enumerate(zip(samples, extra_infos, strict=True)):
        gid = groups[i] if groups is not None else (info or {}).get("uid")
        if gid is None or gid == "":
            gid = sample.prompt_text
        if not gid:
            raise GroupSplitError(
                f"verl row {i} has no uid and no prompt, so a group reward cannot tell its group; use "
                "RewardlabBatchManager (it reads verl's uid), or put the prompt in extra_info['prompt']"
            )
        ids.append(str(gid))
    return ids


class VerlScorer:
    """`compute_score` for verl backed by a rewardlab Reward (see the module doc).

    Args:
        spec: a TOML spec path or text, a dict, or a built Reward.
        error_score: what an `error`/`skipped` result becomes (None: raise).
        logger: also log reward statistics (component means, histograms, error rates) to
            TensorBoard or W&B, without verl's own logging: a `RewardLogger`, or
            ``"tensorboard:DIR"`` / ``"wandb:PROJECT"`` (`rewardlab.runner.reward_log`).
        log_every: responses per logged step (verl calls `compute_score` once per response).
    """

    def __init__(self, spec: SpecLike, *, error_score: float | None = None, logger: RewardLogger | str | None = None,
                 log_every: int = 256):  # fmt: skip
        self.reward: Reward = build_reward(spec)
        self.log = row_log(logger, log_every)
        self.error_score = error_score
        self.components = component_names(self.reward)
        self.objectives = objective_names(self.reward)
        self.group_keys = group_keys(self.reward)
        self.__name__ = "compute_score"

    def row(self, result: RewardResult) -> dict[str, float]:
        """The dict verl receives for one result."""
        if result.status is Status.OK and result.score is not None:
            score = result.score
        elif self.error_score is None:
            reason = result.error or result.info.get("skip_reason", "skipped")
            raise RewardLabError(
                f"rewardlab could not score this response ({reason}); pass error_score=<number> "
                "to make_compute_score to train through such rows (they are counted in rewardlab_error)"
            )
        else:
            score = float(self.error_score)
        out = {"score": float(score), **component_columns(result, self.components), **objective_columns(result, self.objectives)}
        out["rewardlab_error"] = float(result.status is Status.ERROR)
        out["rewardlab_skipped"] = float(result.status is Status.SKIPPED)
        return out

    def __call__(
        self,
        data_source: str,
        solution_str: Any,
        ground_truth: JSON,
        extra_info: Mapping[str, JSON] | None = None,
        **_: Any,
    ) -> dict[str, float]:
        if self.group_keys:
            raise GroupSplitError(
                f"{getattr(self.reward, 'name', 'this reward')!r} is a group reward, and verl calls compute_score with one "
                "response, so it would vote on one member of its group; score with RewardlabBatchManager "
                "(reward.reward_manager.source=importlib, module.path=pkg://rewardlab.integrations.verl_batch, "
                "name=RewardlabBatchManager), which waits for each prompt's whole group"
            )
        sample = sample_from_verl(data_source, solution_str, ground_truth, extra_info)
        return self._rows(self.reward.score_batch([sample]))[0]

    def batch(
        self,
        data_sources: Sequence[str],
        solution_strs: Sequence[Any],
        ground_truths: Sequence[JSON],
        extra_infos: Sequence[Mapping[str, JSON] | None] | None = None,
        groups: Sequence[Any] | None = None,
        **_: Any,
    ) -> list[dict[str, float]]:
        """The batched form verl's `BatchRewardManager` calls: one dict per response.

        For a group reward, `groups` (verl's uid per row) or `verl_groups`' fallbacks give each
        row its group; the call must hold whole groups (verl's batch reward manager passes the
        whole batch).
        """
        n = len(solution_strs)
        infos = list(extra_infos) if extra_infos is not None else [None] * n
        if not len(data_sources) == len(ground_truths) == len(infos) == n:
            raise MappingError(f"verl batch columns differ in length (expected {n} each)")
        samples = [sample_from_verl(*args) for args in zip(data_sources, solution_strs, ground_truths, infos, strict=True)]
        if self.group_keys:
            samples = with_groups(samples, verl_groups(samples, infos, groups))
            unprompted = next((i for i, s in enumerate(samples) if not s.prompt_text), None)
            if "prompt" in self.group_keys and unprompted is not None:
                raise GroupSplitError(
                    f"the reward groups by prompt and verl row {unprompted} has none; put the prompt in "
                    "extra_info['prompt'], or group by 'group' (group_by='group', filled from verl's uid)"
                )
        return self._rows(self.reward.score_batch(samples))

    def _rows(self, results: list[RewardResult]) -> list[dict[str, float]]:
        if self.log is not None:  # logged before `row` may raise: an error is counted, not lost
            self.log.add(results)
        return [self.row(r) for r in results]

    def flush_log(self) -> None:
        """Log the responses not logged yet (fewer than `log_every`)."""
        if self.log is not None:
            self.log.flush()


def make_compute_score(
    spec: SpecLike, *, error_score: float | None = None, logger: RewardLogger | str | None = None, log_every: int = 256
) -> VerlScorer:
    """A verl `compute_score` for `spec`; its `.batch` method is the batched form."""
    return VerlScorer(spec, error_score=error_score, logger=logger, log_every=log_every)


_BUILDING = threading.Lock()


def _cached(spec: str, error_score: float | None, log: str | None = None, log_every: int = 256) -> VerlScorer:
    """One scorer per configuration and process. verl calls `compute_score` from several threads
    at once, and `lru_cache` does not hold the others back while the first builds: without the
    lock each would build its own scorer, each with its own log file or W&B run."""
    with _BUILDING:
        return _build(spec, error_score, log, log_every)


@lru_cache(maxsize=8)
def _build(spec: str, error_score: float | None, log: str | None, log_every: int) -> VerlScorer:
    return VerlScorer(spec, error_score=error_score, logger=log, log_every=log_every)


def compute_score(
    data_source: str,
    solution_str: Any,
    ground_truth: JSON,
    extra_info: Mapping[str, JSON] | None = None,
    *,
    spec: str | None = None,
    error_score: float | None = None,
    log: str | None = None,
    log_every: int = 256,
    **kwargs: Any,
) -> dict[str, float]:
    """verl's `compute_score` with the spec given by `reward_kwargs` (`spec=/path/reward.toml`).

    The spec is built once per process and cached. `log` (``tensorboard:DIR`` or
    ``wandb:PROJECT``, also a `reward_kwargs` entry) logs reward statistics every `log_every`
    responses (`rewardlab.runner.reward_log`).
    """
    if spec is None:
        raise ConfigError(
            "rewardlab.integrations.verl.compute_score needs the spec: set "
            "+reward.custom_reward_function.reward_kwargs.spec=/abs/path/reward.toml"
        )
    return _cached(spec, error_score, log, log_every)(data_source, solution_str, ground_truth, extra_info)


def compute_score_batch(
    data_sources: Sequence[str] = (),
    solution_strs: Sequence[Any] = (),
    ground_truths: Sequence[JSON] = (),
    extra_infos: Sequence[Mapping[str, JSON] | None] | None = None,
    *,
    spec: str | None = None,
    error_score: float | None = None,
    log: str | None = None,
    log_every: int = 256,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """Batched `compute_score`, the signature of the legacy `BatchRewardManager`.

    verl 0.9.1's reward loop never calls it (see the module doc); named as the custom reward
    function there, it would get one row's keyword arguments, so that call is refused naming
    the function to use instead.
    """
    if "solution_str" in kwargs or "data_source" in kwargs:
        raise RewardLabError(
            "verl's reward loop calls the custom reward function once per response; set "
            "reward.custom_reward_function.name=compute_score (verl 0.9.1 has no batch reward manager)"
        )
    if spec is None:
        raise ConfigError("compute_score_batch needs spec=/abs/path/reward.toml")
    return _cached(spec, error_score, log, log_every).batch(data_sources, solution_strs, ground_truths, extra_infos)


