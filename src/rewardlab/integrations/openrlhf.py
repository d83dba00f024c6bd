"""OpenRLHF adapter: a reward-function module and the `/get_reward` request/response mapping.

OpenRLHF takes a Python file as `--remote_rm_url reward_func.py` and calls its
`reward_func(queries, prompts, labels)`, expecting `{"rewards": Tensor, "scores": Tensor,
"extra_logs": {name: Tensor}}`; `queries[i]` is the prompt plus response as rendered by the
chat template, `labels[i]` the `--label_key` column. With an HTTP URL instead, it posts the
same lists as JSON to `/get_reward` and reads the same keys back; rewardlab's server
(`rewardlab.serve`) answers that route using the two pure functions re-exported here,
`samples_from_openrlhf` and `openrlhf_reply` (one mapping for both paths).

    # reward_func.py
    from rewardlab.integrations.openrlhf import make_reward_func
    reward_func = make_reward_func("reward.toml", error_reward=0.0)

Or point `--remote_rm_url` at this module's file and set `REWARDLAB_SPEC=/abs/reward.toml`.

OpenRLHF needs a number for every row: an `error` result becomes `error_reward` (and counts
in `extra_logs["rewardlab/error"]`); with `error_reward=None` a batch with errors raises.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from rewardlab.core import Reward
from rewardlab.errors import ConfigError, RewardLabError
from rewardlab.integrations._common import SpecLike, build_reward
from rewardlab.serve.openrlhf import MappingError, openrlhf_reply, samples_from_openrlhf

__all__ = [
    "MappingError",
    "OpenRLHFRewardFunc",
    "get_reward_mapping",
    "make_reward_func",
    "openrlhf_reply",
    "reward_func",
    "samples_from_openrlhf",
]


def get_reward_mapping(reward: Reward, payload: dict[str, Any], *, error_reward: float | None) -> dict[str, Any]:
    """Answer one `/get_reward` JSON payload with `reward` (pure apart from scoring).

    Raises:
        MappingError: a payload without `query`, or with lists of different lengths.
        RewardLabError: rows failed and `error_reward` is None.
    """
    query = payload.get("query", payload.get("queries"))
    if not isinstance(query, list):
        raise MappingError("the request needs a 'query' list (prompt + response per row)")
    samples = samples_from_openrlhf(query, payload.get("prompts"), payload.get("labels"), payload.get("metas"))
    results = reward.score_batch(samples)
    reply = openrlhf_reply(results, error_reward=error_reward)
    if error_reward is None and any(math.isnan(r) for r in reply["rewards"]):
        failed = next(r for r in results if r.score is None)
        raise RewardLabError(f"{sum(s != 'ok' for s in reply['statuses'])} row(s) could not be scored (first: {failed.error or failed.info}); set error_reward")
    return reply


class OpenRLHFRewardFunc:
    """`reward_func(queries, prompts, labels)` for OpenRLHF's `--remote_rm_url file.py`."""

    def __init__(self, spec: SpecLike, *, error_reward: float | None = None):
        self.reward = build_reward(spec)
        self.error_reward = error_reward
        self.__name__ = "reward_func"

    def __call__(self, queries: Sequence[str], prompts: Sequence[str] | None = None, labels: Sequence[Any] | None = None, **kwargs: Any) -> dict[str, Any]:
        import torch

        payload = {"query": list(queries), "prompts": prompts, "labels": labels, "metas": kwargs.get("metas")}
        reply = get_reward_mapping(self.reward, payload, error_reward=self.error_reward)
        return {
            "rewards": torch.tensor(reply["rewards"], dtype=torch.float32),
            "scores": torch.tensor(reply["scores"], dtype=torch.float32),
            "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in reply["extra_logs"].items()},
        }


def make_reward_func(spec: SpecLike, *, error_reward: float | None = None) -> OpenRLHFRewardFunc:
    """An OpenRLHF `reward_func` for `spec`."""
    return OpenRLHFRewardFunc(spec, error_reward=error_reward)


_DEFAULT: OpenRLHFRewardFunc | None = None


def reward_func(queries: Sequence[str], prompts: Sequence[str] | None = None, labels: Sequence[Any] | None = None, **kwargs: Any) -> dict[str, Any]:
    """Module-level `reward_func`: the spec comes from `$REWARDLAB_SPEC`, the error reward
    from `$REWARDLAB_ERROR_REWARD` (unset: a batch with errors raises)."""
    global _DEFAULT
    if _DEFAULT is None:
        spec = os.environ.get("REWARDLAB_SPEC")
        if not spec:
            raise ConfigError("set REWARDLAB_SPEC=/abs/path/reward.toml for rewardlab's OpenRLHF reward_func")
        error = os.environ.get("REWARDLAB_ERROR_REWARD")
        _DEFAULT = OpenRLHFRewardFunc(spec, error_reward=float(error) if error else None)
    return _DEFAULT(queries, prompts, labels, **kwargs)
