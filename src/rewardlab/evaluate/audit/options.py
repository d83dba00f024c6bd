"""`ProbeOptions`: how `probing.run_probes` judges probes, in a module without numpy so that
`rewardlab audit`'s options can be generated from it at start-up."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rewardlab.errors import ConfigError

__all__ = ["ProbeOptions"]


@dataclass(frozen=True)
class ProbeOptions:
    """How probes are judged (see `probing` for the two rules).

    Attributes:
        tol: a per-sample move up to `tol` is no move.
        alpha: continuous rewards: significance level of a probe's effect (Bonferroni over the
            probes run).
        min_effect: continuous rewards: smallest effect that counts, in standard deviations of
            the original scores.
        continuous: judge the reward as continuous; None: when its original scores take more
            than 10 distinct values.
        counterfactuals: also probe wrong-answer counterfactuals of the data (catches hacks on
            all-correct data).
        max_examples: examples kept per probe.
    """

    tol: float = 1e-6  # float noise
    alpha: float = 0.05
    min_effect: float = 0.1
    continuous: bool | None = None
    counterfactuals: bool = True
    max_examples: int = 3

    def __post_init__(self) -> None:
        # written so that NaN fails each comparison: a NaN level would flag nothing, silently
        if not 0 < self.alpha < 1:
            raise ConfigError(f"alpha must be in (0, 1), got {self.alpha}")
        for name in ("tol", "min_effect"):
            if not 0 <= getattr(self, name) < math.inf:
                raise ConfigError(f"{name} must be a finite number >= 0, got {getattr(self, name)}")
        if self.max_examples < 0:
            raise ConfigError(f"max_examples must be >= 0, got {self.max_examples}")
