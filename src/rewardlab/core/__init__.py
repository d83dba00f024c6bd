"""The reward contract: samples in, typed results out. Imports nothing else of rewardlab."""

from rewardlab.core.numbers import json_float
from rewardlab.core.registry import Registry, register, registry
from rewardlab.core.result import ErrorKind, RewardError, RewardResult, Stamp, Status, stamp
from rewardlab.core.reward import (
    UNBOUNDED,
    BaseReward,
    ComponentObserver,
    FunctionReward,
    GroupKey,
    Range,
    Reward,
    batches_in_process,
    coerce_output,
    crash_result,
    group_id,
    group_keys,
    observed,
    observer_of,
    reward,
    spec_hash,
)
from rewardlab.core.sample import JSON, Sample, canonical_json, content_hash, sample_digest, text_of

__all__ = [
    "JSON",
    "UNBOUNDED",
    "BaseReward",
    "ComponentObserver",
    "ErrorKind",
    "FunctionReward",
    "GroupKey",
    "Range",
    "Registry",
    "Reward",
    "RewardError",
    "RewardResult",
    "Sample",
    "Stamp",
    "Status",
    "batches_in_process",
    "canonical_json",
    "coerce_output",
    "content_hash",
    "crash_result",
    "group_id",
    "group_keys",
    "json_float",
    "observed",
    "observer_of",
    "register",
    "registry",
    "reward",
    "sample_digest",
    "spec_hash",
    "stamp",
    "text_of",
]
