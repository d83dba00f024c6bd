import threading

import rewardlab
from rewardlab.core import ErrorKind, Sample, Status

from .rewards_for_tests import misbehave

SPEC = """
[reward]
name = "exact"
[[reward.components]]
name = "exact"
use = "text.exact"
"""


def test_score_accepts_samples_and_dicts_and_stamps_results():
    results = rewardlab.score(SPEC, [Sample(response="a", reference="a"), {"response": "b", "reference": "a"}])
    assert [r.score for r in results] == [1.0, 0.0]
    assert all(r.stamp and r.stamp.spec_hash == rewardlab.build(SPEC).spec_hash for r in results)


def test_bad_dict_is_an_error_and_the_rest_are_scored():
    results = rewardlab.score(SPEC, [{"response": "a", "reference": "a"}, {"text": "?"}, {"response": ["x"]}])
    assert results[0].score == 1.0
    assert results[1].error.kind is ErrorKind.INVALID_INPUT and "samples:2" in results[1].error.message
    assert results[2].error.kind is ErrorKind.INVALID_INPUT


def test_score_with_timeout_uses_a_killable_worker():
    results = rewardlab.score(misbehave, [Sample(response="ok"), Sample(response="hang-c")], timeout=1.0)
    assert results[0].score == 1.0 and results[1].error.kind is ErrorKind.TIMEOUT


def test_score_from_threads():
    out = []
    threads = [threading.Thread(target=lambda: out.append(rewardlab.score(SPEC, [{"response": "a", "reference": "a"}])[0])) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status for r in out] == [Status.OK] * 4
