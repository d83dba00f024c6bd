"""rewardlab: the reward layer of reinforcement learning.

    >>> import rewardlab
    >>> spec = {"reward": {"name": "exact", "components": [{"name": "exact", "use": "text.exact"}]}}
    >>> [r.score for r in rewardlab.score(spec, [{"response": "Paris", "reference": "paris"}])]
    [1.0]

`score(spec, samples)` takes a TOML path, TOML text, a dict or a built Reward. The stable
surface is listed in `__all__` (checked by a test); everything else lives in the sub-packages
described in ARCHITECTURE.md (`core`, `compose`, `verify`, `sandbox`, `shape`, `credit`,
`models`, `evaluate`, `serve`, `integrations`, `cli`, ...).
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
    registry,
    reward,
)
from rewardlab.core.registry import register
from rewardlab.runner import score

__all__ = [
    "BaseReward",
    "ErrorKind",
    "Reward",
    "RewardError",
    "RewardResult",
    "Sample",
    "Status",
    "__version__",
    "build",
    "register",
    "registry",
    "reward",
    "score",
]
