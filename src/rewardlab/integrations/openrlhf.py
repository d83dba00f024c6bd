"""OpenRLHF adapter: a reward-function module and the `/get_reward` request/response mapping.

OpenRLHF (0.11.2, `SingleTurnAgentExecutor` in `openrlhf/utils/agent.py`) takes a Python file as
`--reward.remote_url reward_func.py` and calls its `reward_func(queries, prompts, labels)` once per
generated sample, expecting `{"rewards": Tensor, "scores": Tensor, "extra_logs": {name: Tensor}}`;
`queries[i]` is the prompt plus response decoded *with* special tokens (`<|im_end|>`, `<eos>`...),
`labels[i]` the `--label_key` column. With an HTTP URL instead, it posts the same lists as JSON
to `/get_reward` and reads the same keys back; rewardlab's server (`rewardlab.serve`) answers
that route with the same two pure functions re-exported here, `samples_from_openrlhf` and
`openrlhf_reply` (one mapping for both paths).

    # reward_func.py
    from rewardlab.integrations.openrlhf import make_reward_func
    reward_func = make_reward_func("reward.toml", error_reward=0.0)

Or point `--reward.remote_url` at this module's file and set `REWARDLAB_SPEC=/abs/reward.toml` and
`REWARDLAB_ERROR_REWARD=0.0` (optionally `REWARDLAB_TOKENIZER=/path/to/tokenizer`, whose special
tokens are then the ones removed, and `REWARDLAB_LOG=tensorboard:/abs/logdir` or `wandb:PROJECT`
to log reward statistics every `REWARDLAB_LOG_EVERY` samples, default 256); loaded that way, the module checks them at load time, so a
missing one stops OpenRLHF at start-up instead of failing every reward call.

The special tokens are removed from prompt and response before scoring (a correct answer
followed by `<|im_end|>` must not fail a format check): `COMMON_SPECIAL_TOKENS` by default,
or a tokenizer's `all_special_tokens`, or a list of your own (an empty one keeps them).

OpenRLHF needs a number for every row: an exception in `reward_func` is logged and the sample
left without a reward, which fails the step later. So `error_reward` is required: an `error` or
`skipped` result becomes it and counts in `extra_logs["rewardlab/error"]` / `["rewardlab/skipped"]`.
Every row carries the same `extra_logs` keys (`rewardlab/<component>` and
`rewardlab/<component>/scored`, and `rewardlab/objective/<name>` with its `/scored` for a spec's
objectives), as OpenRLHF's `split_experience_batch` requires.

Group rewards (majority vote, consensus: `rewardlab.core.group_keys`) need a prompt's
`n_samples_per_prompt` samples together, and OpenRLHF 0.11.2 never sends them together: each
sample's `execute` calls `reward_func` (`_fetch_rewards_via_func`, `batch_size = 1`, on a thread
of the engine's bounded default pool) or posts to `/get_reward` with that one sample, as soon as
it is generated. A `reward_func` that blocked its thread until the group's other samples came
would deadlock once a pool's threads all hold incomplete groups. So a group reward is refused:
loaded from the environment, at start-up; through `make_reward_func`, unless
`n_samples_per_prompt=N` says the calls are your own and hold whole groups, which are then
blocks of N samples of one prompt (`_common.layout_groups`, the rule TRL's adapter uses), and a
call that is not raises `GroupSplitError`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from rewardlab.core import Reward, Sample, group_keys
from rewardlab.core.columns import component_names, objective_names
from rewardlab.errors import ConfigError, GroupSplitError, MappingError, RewardLabError
from rewardlab.integrations._common import (
    SpecLike,
    build_reward,
    layout_groups,
    row_log,
    with_groups,
)
from rewardlab.runner.io import score_prepared
from rewardlab.runner.reward_log import RewardLogger, RowBuffer
from rewardlab.serve.openrlhf import (
    COMMON_SPECIAL_TOKENS,
    openrlhf_reply,
    openrlhf_rows,
    samples_from_openrlhf,
)

__all__ = [
    "COMMON_SPECIAL_TOKENS",
    "MappingError",
    "OpenRLHFRewardFunc",
    "get_reward_mapping",
    "make_reward_func",
    "openrlhf_reply",
    "openrlhf_rows",
    "reward_func",
    "samples_from_openrlhf",
    "special_tokens_of",
]


def special_tokens_of(tokenizer: Any) -> tuple[str, ...]:
    """The special tokens of a Hugging Face tokenizer, or of the one saved at a local path."""
    if isinstance(tokenizer, str | os.PathLike):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(os.fspath(tokenizer))
    return tuple(str(t) for t in tokenizer.all_special_tokens)


def get_reward_mapping(
    reward: Reward,
    payload: dict[str, Any],
    *,
    error_reward: float,
    special_tokens: Sequence[str] = COMMON_SPECIAL_TOKENS,
    n_samples_per_prompt: int | None = None,
    log: RowBuffer | None = None,
) -> dict[str, Any]:
    """Answer one `/get_reward` JSON payload with `reward` (pure apart from scoring; `log`
    gathers the results for TensorBoard or W&B).

    For a group reward the payload must hold whole groups: blocks of `n_samples_per_prompt`
    samples of one prompt (None: runs of identical prompts; see the module doc).

    Raises:
        MappingError: a payload without `query`, or with lists of different lengths; for a group
            reward, also a row whose prompt is not in its query (for any other reward that row
            is an `error/invalid_input` result, sent as `error_reward`).
        GroupSplitError: a group reward, and the payload is not whole groups of `n_samples_per_prompt`.
    """
    query = payload.get("query", payload.get("queries"))
    if not isinstance(query, list):
        raise MappingError("the request needs a 'query' list (prompt + response per row)")
    columns = (query, payload.get("prompts"), payload.get("labels"), payload.get("metas"))
    components = component_names(reward)
    if group_keys(reward):  # every member is needed to vote: a row that cannot be mapped stops the call
        samples = samples_from_openrlhf(*columns, special_tokens=special_tokens)
        samples = with_groups(samples, openrlhf_groups(samples, n_samples_per_prompt))
        results = reward.score_batch(samples)
    else:  # a row whose prompt is not in its query keeps its error result, in place
        rows = openrlhf_rows(*columns, special_tokens=special_tokens)
        results = score_prepared(rows, reward.score_batch)
    if log is not None:
        log.add(results)
    return openrlhf_reply(results, error_reward=error_reward, components=components, objectives=objective_names(reward))


def openrlhf_groups(samples: Sequence[Sample], n_samples_per_prompt: int | None = None) -> list[str]:
    """Each sample's group id in a call holding whole groups (see the module doc).

    Raises:
        GroupSplitError: with `n_samples_per_prompt`, the call is not whole groups of it.
    """
    return layout_groups(
        samples, n_samples_per_prompt, trainer="OpenRLHF", size_option="n_samples_per_prompt",
        fix="send each prompt's n_samples_per_prompt samples in one call",
    )  # fmt: skip


def _refuse_group_reward(reward: Reward, where: str) -> None:
    if group_keys(reward):
        raise GroupSplitError(
            f"{getattr(reward, 'name', 'the reward')!r} is a group reward, and OpenRLHF 0.11.2 scores each sample in a "
            f"call of its own ({where}), so it would vote on one member of its group; score group rewards where the "
            "whole group is at hand (TRL, verl's RewardlabBatchManager, `rewardlab score`), or pass "
            "n_samples_per_prompt=N to make_reward_func for calls of your own that hold whole groups"
        )


class OpenRLHFRewardFunc:
    """`reward_func(queries, prompts, labels)` for OpenRLHF's `--reward.remote_url file.py`.

    Args:
        spec: a TOML spec path or text, a dict, or a built Reward.
        error_reward: the reward of a row that could not be scored (required, see the module doc).
        special_tokens: removed from queries and prompts (default `COMMON_SPECIAL_TOKENS`).
        tokenizer: a tokenizer or its local path; its `all_special_tokens` replace the default.
        n_samples_per_prompt: for a group reward only: the samples per prompt in calls that
            hold whole groups (your own calls; OpenRLHF 0.11.2 sends one sample per call).
        logger: also log reward statistics (component means, histograms, error rates) to
            TensorBoard or W&B: a `RewardLogger`, or ``"tensorboard:DIR"`` / ``"wandb:PROJECT"``
            (`rewardlab.runner.reward_log`; from the environment: ``REWARDLAB_LOG``).
        log_every: samples per logged step (OpenRLHF sends one sample per call).

    Raises:
        RewardLabError: no `error_reward`, or both `special_tokens` and `tokenizer`.
        GroupSplitError: a group reward without `n_samples_per_prompt` (see the module doc).
    """

    def __init__(
        self,
        spec: SpecLike,
        *,
        error_reward: float | None,
        special_tokens: Sequence[str] | None = None,
        tokenizer: Any = None,
        n_samples_per_prompt: int | None = None,
        logger: RewardLogger | str | None = None,
        log_every: int = 256,
    ):
        if error_reward is None:
            raise RewardLabError(
                "OpenRLHF cannot take a row without a reward (it logs the exception and the step fails "
                "later); pass error_reward=<number>, counted in extra_logs['rewardlab/error']"
            )
        if special_tokens is not None and tokenizer is not None:
            raise RewardLabError("pass special_tokens or tokenizer, not both")
        if n_samples_per_prompt is not None and n_samples_per_prompt < 1:
            raise ConfigError(f"n_samples_per_prompt must be >= 1, got {n_samples_per_prompt}")
        self.reward = build_reward(spec)
        if n_samples_per_prompt is None:
            _refuse_group_reward(self.reward, "SingleTurnAgentExecutor._fetch_rewards_via_func, batch_size = 1")
        self.n_samples_per_prompt = n_samples_per_prompt
        self.error_reward = float(error_reward)
        self.special_tokens = tuple(special_tokens) if special_tokens is not None else (
            special_tokens_of(tokenizer) if tokenizer is not None else COMMON_SPECIAL_TOKENS
        )  # fmt: skip
        self.__name__ = "reward_func"
        self.log = row_log(logger, log_every)

    def __call__(self, queries: Sequence[str], prompts: Sequence[str] | None = None, labels: Sequence[Any] | None = None, **kwargs: Any) -> dict[str, Any]:
        import torch

        payload = {"query": list(queries), "prompts": prompts, "labels": labels, "metas": kwargs.get("metas")}
        reply = get_reward_mapping(self.reward, payload, error_reward=self.error_reward, special_tokens=self.special_tokens,
                                   n_samples_per_prompt=self.n_samples_per_prompt, log=self.log)  # fmt: skip
        return {
            "rewards": torch.tensor(reply["rewards"], dtype=torch.float32),
            "scores": torch.tensor(reply["scores"], dtype=torch.float32),
            "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in reply["extra_logs"].items()},
        }


def make_reward_func(
    spec: SpecLike,
    *,
    error_reward: float | None,
    special_tokens: Sequence[str] | None = None,
    tokenizer: Any = None,
    n_samples_per_prompt: int | None = None,
    logger: RewardLogger | str | None = None,
    log_every: int = 256,
) -> OpenRLHFRewardFunc:
    """An OpenRLHF `reward_func` for `spec` (see `OpenRLHFRewardFunc` for the options)."""
    return OpenRLHFRewardFunc(spec, error_reward=error_reward, special_tokens=special_tokens, tokenizer=tokenizer,
                              n_samples_per_prompt=n_samples_per_prompt, logger=logger, log_every=log_every)  # fmt: skip


_DEFAULT: OpenRLHFRewardFunc | None = None


def _from_environment() -> OpenRLHFRewardFunc:
    spec = os.environ.get("REWARDLAB_SPEC")
    error = os.environ.get("REWARDLAB_ERROR_REWARD")
    if not spec or not error:
        missing = [name for name, value in (("REWARDLAB_SPEC", spec), ("REWARDLAB_ERROR_REWARD", error)) if not value]
        raise ConfigError(
            f"set {' and '.join(missing)} for rewardlab's OpenRLHF reward_func "
            "(REWARDLAB_SPEC=/abs/path/reward.toml, REWARDLAB_ERROR_REWARD=<reward of a row that cannot be scored>)"
        )
    try:
        error_reward = float(error)
    except ValueError as exc:
        raise ConfigError(f"REWARDLAB_ERROR_REWARD={error!r} is not a number") from exc
    tokenizer = os.environ.get("REWARDLAB_TOKENIZER") or None
    every = os.environ.get("REWARDLAB_LOG_EVERY") or "256"
    if not every.isdigit() or int(every) < 1:
        raise ConfigError(f"REWARDLAB_LOG_EVERY={every!r} is not a number of samples >= 1")
    return OpenRLHFRewardFunc(spec, error_reward=error_reward, tokenizer=tokenizer, logger=os.environ.get("REWARDLAB_LOG") or None,
                              log_every=int(every))  # fmt: skip


def reward_func(queries: Sequence[str], prompts: Sequence[str] | None = None, labels: Sequence[Any] | None = None, **kwargs: Any) -> dict[str, Any]:
    """Module-level `reward_func`, configured from the environment (see the module doc)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = _from_environment()
    return _DEFAULT(queries, prompts, labels, **kwargs)


if __name__ != "rewardlab.integrations.openrlhf":
    # Loaded from its file by OpenRLHF (`spec_from_file_location("reward_func", path)`): check the
    # configuration now, while OpenRLHF still stops on an exception.
    _DEFAULT = _from_environment()
