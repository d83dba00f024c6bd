import math

import pytest

from rewardlab.core import ErrorKind, RewardResult, Status


def test_ok_needs_a_finite_score():
    with pytest.raises(ValueError, match="finite"):
        RewardResult(score=math.nan)
    with pytest.raises(ValueError, match="finite"):
        RewardResult(score=None)


def test_error_needs_a_reason_and_no_score():
    with pytest.raises(ValueError, match="RewardError"):
        RewardResult(score=None, status=Status.ERROR)
    r = RewardResult.failure("timeout", "too slow")
    assert r.status is Status.ERROR and r.score is None and r.error.kind is ErrorKind.TIMEOUT


def test_skipped_has_no_score_and_says_why():
    r = RewardResult.skip("gate failed")
    assert r.score is None and r.info["skip_reason"] == "gate failed"
    with pytest.raises(ValueError):
        RewardResult(score=1.0, status=Status.SKIPPED)


def test_unknown_error_kind_is_rejected():
    with pytest.raises(ValueError):
        RewardResult.failure("made-up", "x")


def test_dict_round_trip_with_components_steps_and_stamp():
    inner = RewardResult.failure(ErrorKind.PARSE, "bad latex")
    r = RewardResult.ok(0.5, components={"a": inner}, steps=(0.1, 0.9), info={"x": [1]}).stamped("abc")
    d = r.to_dict()
    assert d["spec_hash"] == "abc" and d["rewardlab_version"]
    assert RewardResult.from_dict(d) == r
