"""Shape functions: a parameterised curve applied to one objective's raw value, as a component.

    [[reward.components]]
    name = "brevity"
    use = "multiobj.curve"
    params = { of = "length.tokens", curve = "sigmoid", center = 0.0, scale = 0.2 }

    [[reward.components]]
    name = "latency"
    use = "multiobj.curve"
    params = { meta = "latency_s", curve = "exponential", center = 1.0, scale = 2.0 }

The raw value is another registered reward's score (`of`, with `of_params`) or a number the
sample carries (`meta`, a column of the data). Shaping each objective with its own curve before
combining them, instead of hand-tuning one weighted sum of raw values, is the recipe of
Lucy-SKG (Moschopoulos et al. 2023, "Lucy-SKG: Learning to Play Rocket League Efficiently Using
Deep Reinforcement Learning", arXiv:2305.15801: parameterised reward shape functions combined
per objective). The curve families below are the usual ones (each maps onto [0, 1]):

    linear       clip((x - low) / (high - low), 0, 1)
    power        clip((x - low) / (high - low), 0, 1) ** exponent
    sigmoid      1 / (1 + exp(-(x - center) / scale))
    gaussian     exp(-((x - center) / scale)² / 2)            (a target value)
    exponential  exp(-max(0, x - center) / scale)              (full until center, then decays)
    step         1 if x >= center else 0

`invert = true` gives `1 - y` (a cost). An error or skip of the raw value passes through as
it is; a value that is missing or not a number is an `invalid_input` error naming it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from rewardlab.core import JSON, BaseReward, ErrorKind, RewardResult, Sample, Status, group_keys
from rewardlab.core.registry import registry
from rewardlab.errors import ConfigError

__all__ = ["Curve", "curve_value"]

CurveName = Literal["linear", "power", "sigmoid", "gaussian", "exponential", "step"]
CURVES: tuple[str, ...] = ("linear", "power", "sigmoid", "gaussian", "exponential", "step")


def curve_value(x: float, curve: str, *, low: float, high: float, center: float, scale: float, exponent: float) -> float:
    """The curve `curve` at `x` (see the module doc for each formula)."""
    if curve in ("linear", "power"):
        t = min(max((x - low) / (high - low), 0.0), 1.0)
        return t if curve == "linear" else t**exponent
    if curve == "sigmoid":
        z = (x - center) / scale
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))  # no overflow either side
    if curve == "gaussian":
        return math.exp(-0.5 * ((x - center) / scale) ** 2)
    if curve == "exponential":
        return math.exp(-max(0.0, x - center) / scale)
    if curve == "step":
        return 1.0 if x >= center else 0.0
    raise ConfigError(f"curve must be one of {', '.join(CURVES)}, got {curve!r}")


class Curve(BaseReward):
    """A parameterised curve of one raw value (another reward's score, or a meta column).

    Args:
        curve: the family (module doc).
        of: registry name of the reward whose score is shaped.
        of_params: that reward's parameters.
        meta: instead of `of`, the sample's meta key holding the raw number.
        low, high: the ramp of `linear` and `power` (`low < high`).
        center, scale: the midpoint and width of `sigmoid`, `gaussian`, `exponential`, `step`.
        exponent: the power of `power` (> 0).
        invert: `1 - y`, for a cost.
    """

    name = "multiobj.curve"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        curve: CurveName = "linear",
        of: str | None = None,
        of_params: dict[str, JSON] | None = None,
        meta: str | None = None,
        low: float = 0.0,
        high: float = 1.0,
        center: float = 0.0,
        scale: float = 1.0,
        exponent: float = 1.0,
        invert: bool = False,
    ):
        if curve not in CURVES:
            raise ConfigError(f"curve must be one of {', '.join(CURVES)}, got {curve!r}")
        if (of is None) == (meta is None):
            raise ConfigError("give exactly one source of the raw value: `of` (a reward name) or `meta` (a meta key)")
        if of_params and of is None:
            raise ConfigError("of_params needs `of`, the reward they configure")
        numbers = {"low": low, "high": high, "center": center, "scale": scale, "exponent": exponent}
        bad = [k for k, v in numbers.items() if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v)]
        if bad:
            raise ConfigError(f"{', '.join(bad)} must be finite numbers")
        if not low < high:
            raise ConfigError(f"low must be below high, got low={low}, high={high}")
        if not scale > 0 or not exponent > 0:
            raise ConfigError(f"scale and exponent must be > 0, got scale={scale}, exponent={exponent}")
        self.inner = registry.create(of, of_params or {}) if of is not None else None
        self.group_keys = group_keys(self.inner) if self.inner is not None else frozenset()
        self._curve, self._meta, self._invert = curve, meta, invert
        self._shape = dict(low=float(low), high=float(high), center=float(center), scale=float(scale), exponent=float(exponent))

    def _apply(self, x: float) -> RewardResult:
        y = curve_value(x, self._curve, **self._shape)
        return RewardResult.ok(1.0 - y if self._invert else y, info={"raw": x})

    def _from_meta(self, sample: Sample) -> RewardResult:
        key = self._meta or ""
        value = sample.meta.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            found = "missing" if key not in sample.meta else f"{value!r}"
            return RewardResult.failure(ErrorKind.INVALID_INPUT, f"meta {key!r} must be a finite number, got {found}")
        return self._apply(float(value))

    def _shaped(self, raw: RewardResult) -> RewardResult:
        if raw.status is not Status.OK or raw.score is None:
            return raw
        shaped = self._apply(raw.score)
        return RewardResult.ok(shaped.score or 0.0, info=shaped.info, components={"raw": raw})

    def compute(self, sample: Sample) -> RewardResult:
        if self.inner is None:
            return self._from_meta(sample)
        return self._shaped(self.inner.score(sample))

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        if self.inner is None:
            return [self._from_meta(s) for s in samples]
        return [self._shaped(r) for r in self.inner.score_batch(samples)]
