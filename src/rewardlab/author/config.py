"""What a short training is: the learner and its budget (`TrainConfig`). No numpy here, so the
command line can build its options from this class without importing the learners.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from rewardlab.core.numbers import refuse_nan
from rewardlab.errors import ConfigError

__all__ = ["LEARNERS", "Learner", "TrainConfig"]

Learner = Literal["q", "dqn", "ppo"]

#: what each learner is, in words (the reflection prompt tells the author who trained)
LEARNERS: Mapping[str, str] = {
    "q": "tabular Q-learning",
    "dqn": "Stable-Baselines3 DQN on one-hot states",
    "ppo": "Stable-Baselines3 PPO on one-hot states",
}

#: the step size each learner takes when `TrainConfig.lr` is None: large for a table whose
#: entries are each updated rarely; for SB3's small networks (Adam) larger than its defaults,
#: which are made for millions of steps
DEFAULT_LR: Mapping[str, float] = {"q": 0.5, "dqn": 3e-3, "ppo": 1e-3}


@dataclass(frozen=True)
class TrainConfig:
    """A short training run. Defaults: a budget in which the sparse office-world rewards fail.

    Attributes:
        learner: who trains: q (tabular Q-learning), dqn or ppo (Stable-Baselines3 on one-hot
            states; needs the sb3 extra).
        steps: env steps per seed.
        seeds: agents trained per candidate, each from its own seed.
        lr: the learner's step size; None: the learner's default (`DEFAULT_LR`).
        gamma: the discount of the training (and of the planning checks).
        epsilon: exploration rate of epsilon-greedy Q-learning; DQN anneals its rate down to it;
            PPO explores by its policy's own randomness.
        q_init: initial Q of tabular Q-learning: 0 is no optimism, so exploration comes from
            epsilon and the reward only.
        eval_episodes: greedy episodes per seed at each checkpoint.
        checkpoints: when the curve and the component statistics are taken.
        seed: seed of the first training seed (the others follow it).
    """

    learner: Learner = "q"
    steps: int = 20_000
    seeds: int = 4
    lr: float | None = None
    gamma: float = 0.9
    epsilon: float = 0.1
    q_init: float = 0.0
    eval_episodes: int = 10
    checkpoints: int = 5
    seed: int = 0

    def __post_init__(self) -> None:
        refuse_nan(self)
        if self.learner not in LEARNERS:
            raise ConfigError(f"TrainConfig.learner must be one of {', '.join(LEARNERS)}; got {self.learner!r}")
        if self.steps < self.checkpoints or self.seeds < 1 or self.checkpoints < 1 or self.eval_episodes < 1:
            raise ConfigError(f"TrainConfig needs steps >= checkpoints >= 1, seeds >= 1, eval_episodes >= 1; got {self}")
        if not (0 < self.step_size <= 1 and 0 < self.gamma < 1 and 0 <= self.epsilon <= 1):
            raise ConfigError(f"TrainConfig needs 0 < lr <= 1, 0 < gamma < 1, 0 <= epsilon <= 1; got {self}")

    def on_fresh_seeds(self, seeds: int) -> TrainConfig:
        """The same training on `seeds` seeds that this one does not use (the validation of
        `LoopConfig`): this one trains seeds `seed` .. `seed + seeds - 1`, that one the next."""
        return replace(self, seeds=seeds, seed=self.seed + self.seeds)

    @property
    def step_size(self) -> float:
        """`lr`, or the learner's default step size when it is None."""
        return DEFAULT_LR[self.learner] if self.lr is None else self.lr
