"""Settings shared by the author tests: tight limits and small budgets."""

from __future__ import annotations

from rewardlab.author import LoopConfig, TrainConfig
from rewardlab.sandbox import Limits

#: tight limits, so hostile candidates are stopped quickly in tests
FAST_LIMITS = Limits(cpu_seconds=1.0, wall_seconds=10.0, memory_bytes=256 << 20, processes=8, output_bytes=64 << 10)
#: a training budget small enough for tests (the maze has 49 states)
SMALL_TRAIN = TrainConfig(steps=3000, seeds=2, eval_episodes=3, checkpoints=3)


def small_loop(**overrides: object) -> LoopConfig:
    return LoopConfig(**{"candidates": 2, "rounds": 2, "train": SMALL_TRAIN, "limits": FAST_LIMITS,
                         "preference_pairs": 50, **overrides})  # type: ignore[arg-type]
