"""The reward contract: samples in, typed results out. Imports nothing else of rewardlab."""

from rewardlab.core.registry import registry
from rewardlab.core.result import ErrorKind, RewardError, RewardResult, Stamp, Status, stamp
from rewardlab.core.reward import (
    BaseReward,
    ComponentObserver,
    FunctionReward,
    GroupKey,
    Range,
    Reward,
    batches_in_process,
    group_keys,
    observed,
    reward,
    spec_hash,
)
from rewardlab.core.sample import JSON, Sample, sample_digest

__all__ = [
    "JSON",
    "BaseReward",
    "ComponentObserver",
    "ErrorKind",
    "FunctionReward",
    "GroupKey",
    "Range",
    "Reward",
    "RewardError",
    "RewardResult",
    "Sample",
    "Stamp",
    "Status",
    "batches_in_process",
    "group_keys",
    "observed",
    "registry",
    "reward",
    "sample_digest",
    "spec_hash",
    "stamp",
]
