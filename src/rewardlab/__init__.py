"""rewardlab: the reward layer of reinforcement learning.

    >>> import rewardlab
    >>> results = rewardlab.score(spec_toml_or_path_or_reward, samples)

The stable surface is listed in `__all__` (checked by a test); everything else lives in the
sub-packages named in DESIGN.md (`core`, `compose`, `verify`, `sandbox`, `shape`, `credit`,
`models`, `evaluate`, `serve`, `integrations`, `cli`).
"""

from rewardlab._version import __version__
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

__all__ = [
    "BaseReward",
    "ErrorKind",
    "Reward",
    "RewardError",
    "RewardResult",
    "Sample",
    "Status",
    "__version__",
    "register",
    "registry",
    "reward",
]
