import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardlab.compose import build
from rewardlab.errors import InputError
from rewardlab.runner import ScoreFileOptions, score_file
from rewardlab.runner.io import read_samples

SPEC = """
[reward]
name = "t"
[[reward.components]]
name = "exact"
use = "text.exact"
"""


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().split("\n") if line]


def test_every_input_row_gets_one_output_row_even_when_damaged(tmp_path):
    lines = [
        json.dumps({"id": "a", "response": "Paris", "reference": "paris"}),
        '{"id": "b", "response": "trunc',  # malformed JSON
        "",  # blank lines are not rows
        json.dumps([1, 2]),  # not an object
        json.dumps({"id": "c", "reply": "x"}),  # missing response
        json.dumps({"id": "d", "response": 7}),  # wrong type
        json.dumps({"id": "e", "response": "Rome", "reference": "paris"}),
    ]
    out = tmp_path / "out.jsonl"
    summary = score_file(SPEC, write_lines(tmp_path / "in.jsonl", lines), out, ScoreFileOptions(workers=2))
    rows = read_jsonl(out)
    assert len(rows) == summary.rows == 6
    assert [r["source_line"] for r in rows] == [1, 2, 4, 5, 6, 7]
    assert [r["reward"] for r in rows] == [1.0, None, None, None, None, 0.0]
    assert [r["reward_error_kind"] for r in rows[1:5]] == ["invalid_input"] * 4
    assert "in.jsonl:2: malformed JSON" in rows[1]["reward_error"]
    assert "in.jsonl:5: missing field 'response'" in rows[3]["reward_error"]
    assert rows[1]["raw_line"].startswith('{"id": "b"')
    assert summary.total.errors["invalid_input"] == 4
    assert rows[0]["id"] == "a" and rows[0]["reward/exact"] == 1.0 and rows[0]["spec_hash"] == build(SPEC).spec_hash


def test_strict_stops_at_the_first_bad_row(tmp_path):
    lines = [json.dumps({"response": "a", "reference": "a"}), "{bad"]
    with pytest.raises(InputError, match=r"in.jsonl:2.*--strict"):
        score_file(SPEC, write_lines(tmp_path / "in.jsonl", lines), tmp_path / "o.jsonl", ScoreFileOptions(workers=1, strict=True))


def test_field_mapping(tmp_path):
    lines = [json.dumps({"completion": "Paris", "gold": "paris"})]
    out = tmp_path / "o.jsonl"
    score_file(SPEC, write_lines(tmp_path / "in.jsonl", lines), out, ScoreFileOptions(workers=0, fields={"response": "completion", "reference": "gold"}))
    assert read_jsonl(out)[0]["reward"] == 1.0


def test_parquet_in_and_out(tmp_path):
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"response": ["a", "b", None], "reference": ["a", "x", "y"]}), src)
    out = tmp_path / "out.parquet"
    summary = score_file(SPEC, src, out, ScoreFileOptions(workers=1))
    table = pq.read_table(out).to_pylist()
    assert summary.rows == 3 and [r["reward"] for r in table] == [1.0, 0.0, None]
    assert table[2]["reward_error_kind"] == "invalid_input"
    assert json.loads(table[0]["reward_info"])["exact"]["extracted"] == "a"


def test_parquet_output_when_first_batch_has_no_errors(tmp_path):
    lines = [json.dumps({"response": "a", "reference": "a"})] * 5 + ["{bad"]
    out = tmp_path / "out.parquet"
    score_file(SPEC, write_lines(tmp_path / "in.jsonl", lines), out, ScoreFileOptions(workers=0))
    # batch_rows is large, so everything is one batch; write again with tiny batches
    from rewardlab.runner.io import RowWriter

    rows = [{"reward": 1.0, "reward_error": None, "reward_info": {}}, {"reward": None, "reward_error": "x", "reward_info": {}}]
    with RowWriter(tmp_path / "small.parquet", batch_rows=1) as writer:
        for row in rows:
            writer.write(row)
    assert pq.read_table(tmp_path / "small.parquet").column("reward_error").to_pylist() == [None, "x"]
    assert pq.read_table(out).num_rows == 6


def test_saved_huggingface_dataset(tmp_path):
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "ds"
    datasets.Dataset.from_dict({"response": ["a", "b"], "reference": ["a", "a"]}).save_to_disk(str(folder))
    out = tmp_path / "o.jsonl"
    score_file(SPEC, folder, out, ScoreFileOptions(workers=0))
    assert [r["reward"] for r in read_jsonl(out)] == [1.0, 0.0]


def test_unknown_formats_and_missing_files(tmp_path):
    with pytest.raises(InputError, match="cannot tell the format"):
        score_file(SPEC, write_lines(tmp_path / "in.csv", ["a,b"]), tmp_path / "o.jsonl")
    with pytest.raises(InputError, match="file not found"):
        list(read_samples(tmp_path / "nope.jsonl"))
    with pytest.raises(InputError, match="output must end in"):
        score_file(SPEC, write_lines(tmp_path / "in.jsonl", ["{}"]), tmp_path / "o.txt")


def test_read_samples_names_the_bad_line(tmp_path):
    path = write_lines(tmp_path / "in.jsonl", [json.dumps({"response": "a"}), "{x"])
    with pytest.raises(InputError, match=r"in\.jsonl:2"):
        read_samples(path)


def test_an_integer_python_will_not_read_is_an_invalid_row_and_the_rest_are_scored(tmp_path):
    huge = '{"response": "a", "reference": %s}' % ("9" * 5000)  # valid JSON; CPython reads at most 4,300 digits
    path = write_lines(tmp_path / "in.jsonl", [json.dumps({"response": "a", "reference": "a"}), huge, json.dumps({"response": "b", "reference": "a"})])
    out = tmp_path / "o.jsonl"
    score_file(SPEC, path, out, ScoreFileOptions(workers=0))
    rows = read_jsonl(out)
    assert [r["reward"] for r in rows[::2]] == [1.0, 0.0]
    assert rows[1]["reward_status"] == "error" and rows[1]["reward_error_kind"] == "invalid_input"
    assert "in.jsonl:2: unreadable JSON" in rows[1]["reward_error"] and "write such a number as a string" in rows[1]["reward_error"]
    assert "set_int_max_str_digits" not in rows[1]["reward_error"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.text(max_size=30), st.builds(lambda r: json.dumps({"response": r, "reference": "x"}), st.text(max_size=10))), max_size=40))
def test_row_count_is_preserved_for_any_garbage(tmp_path, lines):
    lines = [line.replace("\n", " ").replace("\r", " ") for line in lines]
    path = write_lines(tmp_path / "fuzz.jsonl", lines)
    out = tmp_path / "fuzz.out.jsonl"
    summary = score_file(SPEC, path, out, ScoreFileOptions(workers=0))
    expected = sum(1 for line in path.read_text(errors="replace").split("\n") if line.strip())
    assert summary.rows == expected == len(read_jsonl(out))


def test_explode_scores_each_list_element_and_keeps_bad_rows(tmp_path):
    lines = [
        json.dumps({"id": "a", "responses": ["Paris", "Rome"], "labels": [1, 0], "reference": "paris"}),
        json.dumps({"id": "b", "responses": ["x"], "labels": [1, 0], "reference": "x"}),  # unequal lengths
        json.dumps({"id": "c", "responses": "not a list", "labels": [1], "reference": "x"}),
        "{broken",
        json.dumps({"id": "d", "responses": [], "labels": [], "reference": "x"}),  # nothing to score
    ]
    out = tmp_path / "o.jsonl"
    options = ScoreFileOptions(workers=1, fields={"response": "responses"}, explode=("responses", "labels"))
    summary = score_file(SPEC, write_lines(tmp_path / "in.jsonl", lines), out, options)
    rows = read_jsonl(out)
    assert summary.rows == len(rows) == 6
    assert [(r.get("id"), r.get("explode_index"), r["reward"]) for r in rows[:2]] == [("a", 0, 1.0), ("a", 1, 0.0)]
    assert rows[0]["labels"] == 1 and rows[1]["labels"] == 0
    assert [r["source_line"] for r in rows] == [1, 1, 2, 3, 4, 5]
    assert "lengths [1, 2]" in rows[2]["reward_error"]
    assert "missing or not lists" in rows[3]["reward_error"]
    assert "malformed JSON" in rows[4]["reward_error"]
    assert "need one non-zero length" in rows[5]["reward_error"]


@pytest.mark.parametrize("path", ["streamed", "group", "recorded"])
def test_strict_stops_at_the_first_bad_row_on_every_file_path(tmp_path, path):
    """One `--strict` rule (`runner.io.stop_if_strict`) for the streamed, group and recorded runs."""
    from .rewards_for_tests import GroupMean

    good = json.dumps({"response": "a", "reference": "a", "group": "g", "meta": {"v": 1}})
    data = write_lines(tmp_path / "in.jsonl", [good, json.dumps({"reference": "no response", "group": "g"})])
    reward = GroupMean() if path == "group" else build(SPEC)
    extra = {"resume": True, "run_store": tmp_path / "runs.sqlite"} if path == "recorded" else {}
    with pytest.raises(InputError, match=r"in.jsonl:2.*missing field 'response'.*--strict"):
        score_file(reward, data, tmp_path / "o.jsonl", ScoreFileOptions(workers=0, strict=True, **extra))


@pytest.mark.parametrize(
    "options",
    [ScoreFileOptions(workers=0), ScoreFileOptions(workers=2), ScoreFileOptions(workers=0, resume=True)],
    ids=["in-process", "pool", "recorded"],
)
def test_a_lone_surrogate_is_scored_and_written_back_as_its_escape(tmp_path, options):
    # JSON's "\ud800" escape (a response cut inside a surrogate pair, as JavaScript and Python
    # write it) reads as a Python string no UTF-8 encoder takes: it crashed the whole run.
    cut = "half a pair: \ud83d"
    lines = [json.dumps({"response": cut, "reference": cut}), json.dumps({"response": "Paris", "reference": "paris"})]
    out = tmp_path / "out.jsonl"
    options = ScoreFileOptions(**{**options.__dict__, "run_store": tmp_path / "runs.sqlite"}) if options.resume else options
    summary = score_file(SPEC, write_lines(tmp_path / "in.jsonl", lines), out, options)
    rows = read_jsonl(out)  # read_text: the file is valid UTF-8
    assert [r["reward"] for r in rows] == [1.0, 1.0] and summary.rows == 2
    assert rows[0]["response"] == cut and rows[0]["reward_info"]["exact"]["extracted"] == cut


def test_a_lone_surrogate_has_a_content_key_of_its_own():
    from rewardlab.core import Sample

    keys = {Sample(response=text).content_key for text in ("\ud800", "\udfff", "\ud800\udfff", "\U00010000")}
    assert len(keys) == 4


def test_a_lone_surrogate_goes_to_parquet_as_a_replacement_character_with_a_warning(tmp_path):
    # Parquet strings are UTF-8, which has no code for a lone surrogate: pyarrow raised and the
    # run died with no output. The score is computed on the text as given.
    cut = "half a pair: \ud83d"
    lines = [json.dumps({"response": cut, "reference": cut}), json.dumps({"response": "Paris", "reference": "paris"})]
    out = tmp_path / "out.parquet"
    with pytest.warns(RuntimeWarning, match="1 row\\(s\\) hold a lone UTF-16 surrogate"):
        score_file(SPEC, write_lines(tmp_path / "in.jsonl", lines), out, ScoreFileOptions(workers=0))
    table = pq.read_table(out)
    assert table.column("response").to_pylist() == ["half a pair: \ufffd", "Paris"]
    assert table.column("reward").to_pylist() == [1.0, 1.0]
