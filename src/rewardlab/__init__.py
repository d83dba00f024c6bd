"""rewardlab: the reward layer of reinforcement learning.

    >>> import rewardlab
    >>> results = rewardlab.score(spec_toml_or_path_or_reward, samples)

The stable surface is listed in `__all__` (checked by a test); everything else lives in the
sub-packages named in DESIGN.md (`core`, `compose`, `verify`, `sandbox`, `shape`, `credit`,
`models`, `evaluate`, `serve`, `integrations`, `cli`).
"""

from rewardlab._version import __version__
from rewardlab.compose import build
from rewardlab.core import (
    BaseReward,
    ErrorKind,
    Reward,
    RewardError,
    RewardResult,
    Sample,
    Status,
    register,
    registry,
    reward,
)
from rewardlab.runner import WorkerPool, score

__all__ = [
    "BaseReward",
    "ErrorKind",
    "Reward",
    "RewardError",
    "RewardResult",
    "Sample",
    "Status",
    "WorkerPool",
    "__version__",
    "build",
    "register",
    "registry",
    "reward",
    "score",
]
