"""Geometry and set rewards: IoU of boxes and time intervals, set F1, ordered match.

Used by grounding / detection RL (IoU reward, e.g. Visual-RFT, Liu et al. 2025) and by
list-answer QA. Predictions are read from the response text: the last bracketed list of
numbers for boxes/intervals, a JSON list or a delimited list for sets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Literal

from rewardlab.core import JSON, BaseReward, RewardResult, Sample
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.verify._common import response_text

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_LIST = re.compile(rf"[\[(]\s*({_NUMBER}(?:\s*,\s*{_NUMBER})*)\s*[\])]")


def numbers_in_brackets(text: str, size: int) -> list[float] | None:
    """The last `[a, b, ...]` or `(a, b, ...)` with exactly `size` numbers in `text`, or None."""
    found = None
    for match in _NUMBER_LIST.finditer(text):
        values = [float(v) for v in match.group(1).split(",")]
        if len(values) == size:
            found = values
    return found


def _as_numbers(value: JSON, size: int, what: str) -> list[float]:
    if (
        isinstance(value, list | tuple)
        and len(value) == size
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        return [float(v) for v in value]
    raise ScoringError("invalid_input", f"{what} must be a list of {size} numbers, got {value!r}")


def _area(box: Sequence[float]) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two `(x1, y1, x2, y2)` boxes; degenerate boxes give 0."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = _area(a) + _area(b) - inter
    return inter / union if union > 0 else 0.0


def interval_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Temporal IoU of two `(start, end)` intervals; empty or reversed intervals give 0."""
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(0.0, a[1] - a[0]) + max(0.0, b[1] - b[0]) - inter
    return inter / union if union > 0 else 0.0


def _threshold(iou: float, threshold: float | None) -> float:
    return iou if threshold is None else float(iou >= threshold)


class BoxIoU(BaseReward):
    """IoU of the predicted box with the reference box; continuous, or 1/0 at `threshold`.

    Boxes are `[x1, y1, x2, y2]` (`box_format="xyxy"`) or `[x, y, w, h]` (`"xywh"`), both for
    the reference and for the last 4-number bracketed list in the response. No box in the
    response scores 0; a reference that is not 4 numbers is an `invalid_input` error.
    """

    name = "geometry.box_iou"
    range = (0.0, 1.0)

    def __init__(self, *, threshold: float | None = None, box_format: Literal["xyxy", "xywh"] = "xyxy"):
        if threshold is not None and not 0.0 < threshold <= 1.0:
            raise ConfigError(f"threshold must be in (0, 1], got {threshold}")
        self._threshold, self._format = threshold, box_format

    def _xyxy(self, box: list[float]) -> list[float]:
        if self._format == "xywh":
            return [box[0], box[1], box[0] + box[2], box[1] + box[3]]
        return box

    def compute(self, sample: Sample) -> RewardResult:
        gold = self._xyxy(_as_numbers(sample.reference, 4, "reference box"))
        pred = numbers_in_brackets(response_text(sample), 4)
        if pred is None:
            return RewardResult.ok(0.0, info={"reason": "no [x1, y1, x2, y2] box in the response"})
        iou = box_iou(gold, self._xyxy(pred))
        return RewardResult.ok(_threshold(iou, self._threshold), info={"iou": iou, "box": pred})


class IntervalIoU(BaseReward):
    """Temporal IoU of the predicted `[start, end]` with the reference interval.

    Continuous, or 1/0 at `threshold` (temporal grounding, e.g. Time-R1's tIoU reward).
    """

    name = "geometry.interval_iou"
    range = (0.0, 1.0)

    def __init__(self, *, threshold: float | None = None):
        if threshold is not None and not 0.0 < threshold <= 1.0:
            raise ConfigError(f"threshold must be in (0, 1], got {threshold}")
        self._threshold = threshold

    def compute(self, sample: Sample) -> RewardResult:
        gold = _as_numbers(sample.reference, 2, "reference interval")
        pred = numbers_in_brackets(response_text(sample), 2)
        if pred is None:
            return RewardResult.ok(0.0, info={"reason": "no [start, end] interval in the response"})
        iou = interval_iou(gold, pred)
        return RewardResult.ok(_threshold(iou, self._threshold), info={"iou": iou, "interval": pred})


def parse_items(text: str, *, delimiter: str = ",") -> list[str]:
    """Items of a list answer: a JSON array anywhere in the text, else `delimiter`-split text."""
    match = re.search(r"\[.*\]", text, re.DOTALL)
    if match:
        try:
            value = json.loads(match.group(0))
            if isinstance(value, list):
                return [str(v) for v in value]
        except ValueError:
            pass
    parts = text.split(delimiter) if delimiter != "\\n" else text.splitlines()
    return [p for p in (s.strip() for s in parts) if p]


def _gold_items(sample: Sample) -> list[str]:
    ref = sample.reference
    if not isinstance(ref, list) or not all(isinstance(r, str | int | float) for r in ref):
        raise ScoringError("invalid_input", f"reference must be a list of items, got {type(ref).__name__}")
    return [str(r) for r in ref]


def _norm(item: str, case_sensitive: bool) -> str:
    item = " ".join(item.split()).strip(" .\"'")
    return item if case_sensitive else item.casefold()


class SetF1(BaseReward):
    """F1 between the set of items in the response and the reference list (order ignored)."""

    name = "sets.f1"
    range = (0.0, 1.0)

    def __init__(self, *, delimiter: str = ",", case_sensitive: bool = False):
        self._delimiter, self._case = delimiter, case_sensitive

    def compute(self, sample: Sample) -> RewardResult:
        gold = {_norm(i, self._case) for i in _gold_items(sample)}
        pred = {_norm(i, self._case) for i in parse_items(response_text(sample), delimiter=self._delimiter)}
        if not gold and not pred:
            return RewardResult.ok(1.0)
        hits = len(gold & pred)
        if hits == 0:
            return RewardResult.ok(0.0, info={"precision": 0.0, "recall": 0.0})
        precision, recall = hits / len(pred), hits / len(gold)
        f1 = 2 * precision * recall / (precision + recall)
        return RewardResult.ok(f1, info={"precision": precision, "recall": recall})


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (dynamic programming, O(len(a) * len(b)))."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


class OrderedMatch(BaseReward):
    """Ordered-list agreement: 1/0 exact sequence match, or with `partial` the normalised
    longest common subsequence `LCS / max(len(gold), len(pred))` (ranking and step-order tasks)."""

    name = "sets.ordered"
    range = (0.0, 1.0)

    def __init__(self, *, partial: bool = False, delimiter: str = ",", case_sensitive: bool = False):
        self._partial, self._delimiter, self._case = partial, delimiter, case_sensitive

    def compute(self, sample: Sample) -> RewardResult:
        gold = [_norm(i, self._case) for i in _gold_items(sample)]
        pred = [_norm(i, self._case) for i in parse_items(response_text(sample), delimiter=self._delimiter)]
        if not self._partial:
            return RewardResult.ok(float(gold == pred), info={"items": pred})
        longest = max(len(gold), len(pred))
        score = 1.0 if longest == 0 else lcs_length(gold, pred) / longest
        return RewardResult.ok(score, info={"items": pred})
