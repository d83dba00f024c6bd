"""A caller's three global generators (torch, numpy, Python's `random`): seed them and read their
next draws, for the tests that check rewardlab gives them back untouched."""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_caller(seed: int = 123) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def caller_draws() -> tuple[list[float], list[float], list[float]]:
    """The next draws of the three global generators a caller's code uses."""
    return torch.rand(3).tolist(), np.random.rand(3).tolist(), [random.random() for _ in range(3)]
