"""IoU, set F1 and ordered match: tables of hand-computed cases."""

from __future__ import annotations

import pytest

from rewardlab import Sample, Status
from rewardlab.verify.geometry import (
    BoxIoU,
    IntervalIoU,
    OrderedMatch,
    SetF1,
    box_iou,
    interval_iou,
    lcs_length,
)


def score(reward, response, reference):
    return reward.score(Sample(response=response, reference=reference))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((0, 0, 2, 2), (0, 0, 2, 2), 1.0),
        ((0, 0, 2, 2), (1, 1, 3, 3), 1 / 7),
        ((0, 0, 1, 1), (2, 2, 3, 3), 0.0),
        ((0, 0, 0, 0), (0, 0, 0, 0), 0.0),  # degenerate boxes have no area
        ((0, 0, 4, 4), (1, 1, 3, 3), 4 / 16),
    ],
)
def test_box_iou_table(a, b, expected):
    assert box_iou(a, b) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [((0, 10), (5, 15), 5 / 15), ((0, 1), (2, 3), 0.0), ((3, 1), (0, 5), 0.0), ((2, 4), (2, 4), 1.0)],
)
def test_interval_iou_table(a, b, expected):
    assert interval_iou(a, b) == pytest.approx(expected)


def test_box_reward_reads_last_box_and_thresholds():
    text = "first guess [0, 0, 1, 1], final answer: [1, 1, 3, 3]"
    assert score(BoxIoU(), text, [0, 0, 2, 2]).score == pytest.approx(1 / 7)
    assert score(BoxIoU(threshold=0.5), text, [0, 0, 2, 2]).score == 0.0
    assert score(BoxIoU(threshold=0.1), text, [0, 0, 2, 2]).score == 1.0
    assert score(BoxIoU(box_format="xywh"), "[1, 1, 2, 2]", [0, 0, 2, 2]).score == pytest.approx(1 / 7)


def test_box_reward_missing_box_is_wrong_and_bad_reference_is_error():
    assert score(BoxIoU(), "somewhere on the left", [0, 0, 1, 1]).score == 0.0
    bad = score(BoxIoU(), "[0, 0, 1, 1]", [0, 0, 1])
    assert bad.status is Status.ERROR and bad.error.kind == "invalid_input"


def test_interval_reward():
    assert score(IntervalIoU(), "The event spans (5.0, 15.0) seconds", [0, 10]).score == pytest.approx(1 / 3)
    assert score(IntervalIoU(threshold=0.3), "[5, 15]", [0, 10]).score == 1.0


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("apple, banana", ["banana", "apple"], 1.0),
        ('["Apple", "cherry"]', ["apple", "banana"], 0.5),
        ("apple, banana, cherry", ["apple"], 0.5),
        ("kiwi", ["apple"], 0.0),
    ],
)
def test_set_f1_table(response, reference, expected):
    assert score(SetF1(), response, reference).score == pytest.approx(expected)


@pytest.mark.parametrize(
    ("response", "partial", "expected"),
    [
        ("a, b, c", False, 1.0),
        ("a, c, b", False, 0.0),
        ("a, c, b", True, 2 / 3),
        ("a, b", True, 2 / 3),
    ],
)
def test_ordered_match_table(response, partial, expected):
    assert score(OrderedMatch(partial=partial), response, ["a", "b", "c"]).score == pytest.approx(expected)


def test_lcs_length():
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4


def test_set_reward_rejects_string_reference():
    result = score(SetF1(), "a", "a")
    assert result.status is Status.ERROR and result.error.kind == "invalid_input"
