import threading

import pytest

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


def _rows(path):
    import json

    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_recorded_run_writes_the_same_rows_as_a_streamed_one(tmp_path):
    from rewardlab.runner import ScoreFileOptions, score_file

    data = tmp_path / "data.jsonl"
    data.write_text('{"response": "a", "reference": "a"}\n{"response": 3}\nnot json\n{"response": "b", "reference": "a", "id": 7}\n')
    spec = tmp_path / "exact.toml"
    spec.write_text(SPEC)
    streamed, recorded = tmp_path / "streamed.jsonl", tmp_path / "recorded.jsonl"
    score_file(spec, data, streamed, ScoreFileOptions(workers=0))
    options = ScoreFileOptions(workers=0, resume=True, run_store=tmp_path / "runs.sqlite", record_every=2)
    summary = score_file(spec, data, recorded, options)
    assert summary.rows == 4
    assert _rows(recorded) == _rows(streamed)
    assert [r["reward_status"] for r in _rows(recorded)] == ["ok", "error", "error", "ok"]


def test_an_executor_without_the_spec_hash_to_stamp_is_refused(tmp_path):
    import pytest

    from rewardlab.errors import UsageError
    from rewardlab.runner import InlineExecutor, score_file

    with pytest.raises(UsageError, match="spec_hash"):
        score_file(SPEC, tmp_path / "in.jsonl", tmp_path / "out.jsonl", executor=InlineExecutor(rewardlab.build(SPEC)))


def test_score_prepared_keeps_the_rows_that_could_not_be_read_in_their_place():
    from rewardlab.core import RewardResult
    from rewardlab.runner.io import score_prepared

    bad = RewardResult.failure(ErrorKind.INVALID_INPUT, "row 2")
    calls = []

    def batch(samples):
        calls.append(len(samples))
        return [RewardResult.ok(float(len(s.response))) for s in samples]

    out = score_prepared([Sample(response="a"), bad, Sample(response="bcd")], batch)
    assert [r.score for r in out] == [1.0, None, 3.0] and out[1] is bad
    assert calls == [2]
    assert score_prepared([bad], batch) == [bad] and calls == [2]  # nothing valid: no call


@pytest.mark.parametrize("output", ["out.jsonl", "out.parquet"])
def test_rows_nested_too_deep_are_invalid_input_rows_naming_the_line_and_the_rest_are_scored(tmp_path, output):
    """A JSON line nested deeper than the parser allows, or deeper than a row may nest (the JSON
    writers overflow the stack before the reader's 1,024 levels, and Parquet readers refuse
    more than 100 schema levels), is an `invalid_input`
    row naming the file and line, in place, in process and in the worker pool; a row at the
    limit is scored and written."""
    import pyarrow.parquet as pq

    from rewardlab.runner import ScoreFileOptions, score_file
    from rewardlab.runner.io import MAX_ROW_DEPTH

    too_deep_to_parse = '{"response": "a", "reference": ' + "[" * 3000 + "]" * 3000 + "}"
    too_deep_to_write = '{"response": "a", "meta": {"m": ' + "[" * 1020 + '"a"' + "]" * 1020 + "}}"
    deep = '{"response": "a", "reference": "a", "meta": {"m": ' + "[" * (MAX_ROW_DEPTH - 2) + "1" + "]" * (MAX_ROW_DEPTH - 2) + "}}"
    data = tmp_path / "data.jsonl"
    lines = ['{"response": "a", "reference": "a"}', too_deep_to_parse, too_deep_to_write, deep, '{"response": "b", "reference": "b"}']
    data.write_text("\n".join(lines) + "\n")
    spec = tmp_path / "exact.toml"
    spec.write_text(SPEC)
    for workers in (0, 2):
        out = tmp_path / f"{workers}-{output}"
        summary = score_file(spec, data, out, ScoreFileOptions(workers=workers, timeout=30))
        rows = pq.read_table(out).to_pylist() if output.endswith(".parquet") else _rows(out)
        assert summary.rows == 5 and [r["reward_status"] for r in rows] == ["ok", "error", "error", "ok", "ok"]
        assert rows[1]["reward_error_kind"] == rows[2]["reward_error_kind"] == "invalid_input"
        assert "data.jsonl:2" in rows[1]["reward_error"] and "nested too deeply" in rows[1]["reward_error"]
        assert "data.jsonl:3" in rows[2]["reward_error"] and f"1022 levels deep; at most {MAX_ROW_DEPTH}" in rows[2]["reward_error"]
