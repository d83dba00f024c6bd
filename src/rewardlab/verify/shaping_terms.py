"""Per-sample shaping terms: overlong, cosine length scaling, repetition, length budgets.

Lengths are counted in `unit`s: `tokens` reads the row's token count (`meta["num_tokens"]`,
or the length of `meta["completion_ids"]`, which the TRL adapter fills in from the trainer);
`words` and `chars` count the response text. A `tokens` term on a row without a token count
is an `invalid_input` error, never a silent length of 0.

Terms that depend on correctness (cosine scaling, adaptive length) take a nested reward,
`correctness = {use = "text.exact", params = {...}}`, or read a boolean `meta["correct"]`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from rewardlab.core import JSON, BaseReward, Reward, RewardResult, Sample
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.verify._common import response_text

Unit = Literal["tokens", "words", "chars"]


def response_length(sample: Sample, unit: Unit) -> int:
    """Length of the response in `unit`; see the module docstring for where tokens come from."""
    if unit == "words":
        return len(response_text(sample).split())
    if unit == "chars":
        return len(response_text(sample))
    if "num_tokens" in sample.meta:
        value = sample.meta["num_tokens"]
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        raise ScoringError("invalid_input", f"meta num_tokens must be a non-negative integer, got {value!r}")
    ids = sample.meta.get("completion_ids")
    if isinstance(ids, list | tuple):
        return len(ids)
    raise ScoringError(
        "invalid_input",
        "unit='tokens' needs meta['num_tokens'] or meta['completion_ids'] (the TRL adapter passes "
        "them); use unit='words' or 'chars' to count the text instead",
    )


def _build_correctness(spec: Mapping[str, Any] | None) -> Reward | None:
    if spec is None:
        return None
    if not isinstance(spec, Mapping) or "use" not in spec:
        raise ConfigError("correctness must be a table like {use = 'text.exact', params = {...}}")
    from rewardlab.core.registry import registry

    return registry.create(str(spec["use"]), spec.get("params") or {}, location="correctness")


def _is_correct(reward_: Reward | None, sample: Sample, threshold: float) -> tuple[bool, RewardResult | None]:
    """Correctness of `sample` from the nested reward, else from `meta["correct"]`."""
    if reward_ is None:
        value = sample.meta.get("correct")
        if not isinstance(value, bool):
            raise ScoringError("invalid_input", "no correctness reward given and meta['correct'] is not a boolean")
        return value, None
    result = reward_.score(sample)
    if not result.is_ok:
        reason = result.error.message if result.error else result.status.value
        raise ScoringError(result.error.kind.value if result.error else "invalid_input", f"correctness: {reason}")
    return (result.score or 0.0) >= threshold, result


class SoftOverlong(BaseReward):
    """DAPO soft overlong punishment (Yu et al. 2025, "DAPO", Eq. 13), in [-1, 0].

    0 up to `max_length - cache`; then linear from 0 to -1 over the last `cache` units;
    -1 beyond `max_length`. Same numbers as `trl.rewards.get_soft_overlong_punishment`.
    """

    name = "shaping.soft_overlong"
    range = (-1.0, 0.0)

    def __init__(self, *, max_length: int, cache: int, unit: Unit = "tokens"):
        if max_length <= 0 or not 0 < cache <= max_length:
            raise ConfigError(f"need max_length > 0 and 0 < cache <= max_length, got {max_length}, {cache}")
        self._max, self._cache, self._unit = max_length, cache, unit

    def compute(self, sample: Sample) -> RewardResult:
        n = response_length(sample, self._unit)
        start = self._max - self._cache
        if n <= start:
            score = 0.0
        elif n <= self._max:
            score = (start - n) / self._cache
        else:
            score = -1.0
        return RewardResult.ok(score, info={"length": n})


class CosineScaled(BaseReward):
    """Correctness scaled by length on a cosine schedule (Yeo et al. 2025, "Demystifying Long
    Chain-of-Thought Reasoning", Appendix C.1).

    `r = v_min + (v_max - v_min) * (1 + cos(pi * min(L / max_length, 1))) / 2`, with
    (v_min, v_max) = (min_correct, max_correct) for a correct answer (short is better) and
    (max_wrong, min_wrong) for a wrong one (a long wrong answer is penalised less).
    """

    name = "shaping.cosine"
    range = (-1.0, 1.0)

    def __init__(
        self,
        *,
        max_length: int,
        correctness: dict[str, Any] | None = None,
        threshold: float = 0.5,
        min_wrong: float = -1.0,
        max_wrong: float = -0.5,
        min_correct: float = 0.5,
        max_correct: float = 1.0,
        unit: Unit = "tokens",
    ):
        if max_length <= 0:
            raise ConfigError(f"max_length must be positive, got {max_length}")
        self._correctness = _build_correctness(correctness)
        self._max, self._threshold, self._unit = max_length, threshold, unit
        self._bounds = (min_wrong, max_wrong, min_correct, max_correct)
        self.range = (min(self._bounds), max(self._bounds))

    def compute(self, sample: Sample) -> RewardResult:
        correct, _ = _is_correct(self._correctness, sample, self._threshold)
        n = response_length(sample, self._unit)
        min_wrong, max_wrong, min_correct, max_correct = self._bounds
        lo, hi = (min_correct, max_correct) if correct else (max_wrong, min_wrong)
        progress = min(n / self._max, 1.0)  # clamp: cos is periodic past max_length
        score = lo + 0.5 * (hi - lo) * (1.0 + math.cos(progress * math.pi))
        return RewardResult.ok(score, info={"correct": correct, "length": n})


def repetition_fraction(items: Sequence[Any], n: int) -> float:
    """1 - unique n-grams / total n-grams; 0 when there are fewer than `n` items."""
    if len(items) < n:
        return 0.0
    grams = list(zip(*(items[i:] for i in range(n)), strict=False))
    return 1.0 - len(set(grams)) / len(grams)


class RepetitionPenalty(BaseReward):
    """N-gram repetition penalty (Yeo et al. 2025, Appendix C.2), in [max_penalty, 0].

    `max_penalty * (1 - unique n-grams / total n-grams)`, over token ids (`unit="tokens"`,
    as `trl.rewards.get_repetition_penalty_reward`) or lower-cased words (`unit="words"`).
    """

    name = "shaping.repetition"
    range = (-1.0, 0.0)  # the default max_penalty; an instance declares its own

    def __init__(self, *, ngram_size: int = 3, max_penalty: float = -1.0, unit: Literal["tokens", "words"] = "words"):
        if ngram_size < 1:
            raise ConfigError(f"ngram_size must be >= 1, got {ngram_size}")
        if max_penalty > 0:
            raise ConfigError(f"max_penalty must be <= 0, got {max_penalty}")
        self._n, self._max_penalty, self._unit = ngram_size, max_penalty, unit
        self.range = (max_penalty, 0.0)

    def compute(self, sample: Sample) -> RewardResult:
        if self._unit == "words":
            items: Sequence[Any] = response_text(sample).lower().split()
        else:
            ids = sample.meta.get("completion_ids")
            if not isinstance(ids, list | tuple):
                raise ScoringError("invalid_input", "unit='tokens' needs meta['completion_ids']; use unit='words'")
            items = list(ids)
        fraction = repetition_fraction(items, self._n)
        return RewardResult.ok(fraction * self._max_penalty if fraction else 0.0, info={"repeated": fraction})


class LengthBudget(BaseReward):
    """Penalty for missing a length budget, in [-1, 0] (L1, Aggarwal & Welleck 2025, "L1:
    Controlling How Long a Reasoning Model Thinks").

    `mode="exact"` (L1-Exact) penalises `|L - budget|`, `mode="max"` (L1-Max) only `L - budget`
    above it; the penalty is `-min(1, alpha * deviation / budget)`. The budget is the `budget`
    parameter, else the row's `meta["length_budget"]` (the prompt's "think for N tokens").
    """

    name = "shaping.length_budget"
    range = (-1.0, 0.0)

    def __init__(
        self,
        *,
        budget: int | None = None,
        alpha: float = 1.0,
        mode: Literal["exact", "max"] = "max",
        unit: Unit = "tokens",
    ):
        if budget is not None and budget <= 0:
            raise ConfigError(f"budget must be positive, got {budget}")
        if alpha <= 0:
            raise ConfigError(f"alpha must be positive, got {alpha}")
        self._budget, self._alpha, self._mode, self._unit = budget, alpha, mode, unit

    def compute(self, sample: Sample) -> RewardResult:
        budget: JSON = self._budget if self._budget is not None else sample.meta.get("length_budget")
        if not isinstance(budget, int | float) or isinstance(budget, bool) or budget <= 0:
            raise ScoringError("invalid_input", f"no positive length budget (param or meta['length_budget']): {budget!r}")
        n = response_length(sample, self._unit)
        deviation = abs(n - budget) if self._mode == "exact" else max(0.0, n - budget)
        score = -min(1.0, self._alpha * deviation / budget)
        return RewardResult.ok(score, info={"length": n, "budget": budget})


class AdaptiveLengthPenalty(BaseReward):
    """A length penalty whose strength follows the running accuracy, in [-max_strength, 0].

    `penalty = -strength * min(1, L / max_length)`, with
    `strength = max_strength * clip((acc - low) / (high - low), 0, 1)`, where `acc` is an
    exponential moving average (factor `momentum`) of the batch accuracy seen so far. When the
    policy solves most problems the penalty pushes for brevity; when accuracy drops it relaxes
    (the idea of adaptive length penalties such as ALP, Xiang et al. 2025, "Just Enough
    Thinking", applied to the running rather than per-prompt solve rate).

    State: the average lives in this object, updated once per `score_batch` call from the
    batch's correctness, *before* the batch is scored. In a worker pool each process keeps its
    own average; score batches in-process when the exact schedule matters.
    """

    name = "shaping.adaptive_length"
    range = (-1.0, 0.0)  # the default max_strength; an instance declares its own

    def __init__(
        self,
        *,
        max_length: int,
        correctness: dict[str, Any] | None = None,
        threshold: float = 0.5,
        max_strength: float = 1.0,
        low: float = 0.3,
        high: float = 0.8,
        momentum: float = 0.9,
        initial_accuracy: float = 0.0,
        unit: Unit = "tokens",
    ):
        if max_length <= 0 or max_strength < 0 or not 0 <= low < high <= 1 or not 0 <= momentum < 1:
            raise ConfigError("need max_length > 0, max_strength >= 0, 0 <= low < high <= 1, 0 <= momentum < 1")
        self._correctness = _build_correctness(correctness)
        self._max, self._threshold, self._unit = max_length, threshold, unit
        self._strength_max, self._low, self._high, self._momentum = max_strength, low, high, momentum
        self.accuracy = initial_accuracy
        self._lock = threading.Lock()
        self.range = (-max_strength, 0.0)

    @property
    def strength(self) -> float:
        """The current penalty strength, from the running accuracy."""
        ramp = (self.accuracy - self._low) / (self._high - self._low)
        return self._strength_max * min(1.0, max(0.0, ramp))

    def update(self, correct: Sequence[bool]) -> None:
        """Fold one batch's correctness into the running accuracy."""
        if correct:
            with self._lock:
                batch = sum(correct) / len(correct)
                self.accuracy = self._momentum * self.accuracy + (1 - self._momentum) * batch

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult | float | bool | None]:
        verdicts: list[bool | None] = []
        for sample in samples:
            try:
                verdicts.append(_is_correct(self._correctness, sample, self._threshold)[0])
            except Exception:  # the row's own compute reports the error below
                verdicts.append(None)
        self.update([v for v in verdicts if v is not None])
        return [self._safe_compute(s) for s in samples]

    def compute(self, sample: Sample) -> RewardResult:
        correct, _ = _is_correct(self._correctness, sample, self._threshold)
        n = response_length(sample, self._unit)
        strength = self.strength
        score = -strength * min(1.0, n / self._max)
        return RewardResult.ok(score, info={"length": n, "strength": strength, "accuracy": self.accuracy, "correct": correct})
