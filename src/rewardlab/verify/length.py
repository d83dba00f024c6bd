"""Length terms: keep responses within a budget."""

from __future__ import annotations

from typing import Literal

from rewardlab.core import BaseReward, RewardResult, Sample
from rewardlab.errors import ConfigError
from rewardlab.verify._common import response_text


def count_length(text: str, unit: Literal["words", "chars"]) -> int:
    """Length of `text` in words (whitespace-separated) or characters."""
    return len(text.split()) if unit == "words" else len(text)


class LengthTerm(BaseReward):
    """1.0 within `budget`, falling linearly to 0.0 at `budget + overflow` (default: 2x budget).

    A response-length term to add with a small weight, or to gate on. For DAPO's soft overlong
    penalty and cosine length scaling see the shaping terms of `rewardlab.verify`.
    """

    name = "length.tokens"
    range = (0.0, 1.0)

    def __init__(self, *, budget: int = 512, overflow: int | None = None, unit: Literal["words", "chars"] = "words"):
        if budget <= 0:
            raise ConfigError(f"budget must be positive, got {budget}")
        overflow = budget if overflow is None else overflow
        if overflow <= 0:
            raise ConfigError(f"overflow must be positive, got {overflow}")
        self._budget, self._overflow, self._unit = budget, overflow, unit
        self.params = {**self.params, "overflow": overflow}  # the budget, when left to the default

    def compute(self, sample: Sample) -> RewardResult:
        n = count_length(response_text(sample), self._unit)
        excess = max(0, n - self._budget)
        score = max(0.0, 1.0 - excess / self._overflow)
        return RewardResult.ok(score, info={"length": n, "unit": self._unit})
