"""OpenAI grader import: the documented examples give the same results as OpenAI defines them.

The grader JSON below follows OpenAI's graders guide (platform.openai.com/docs/guides/graders).
Each expected value is computed independently in the test: string operations by hand, the
fuzzy metric with rapidfuzz directly, the python grader by running the documented source
in this (trusted) test process and comparing with the sandboxed run.
"""

from __future__ import annotations

import json
import sysconfig

import pytest
from rapidfuzz import fuzz, utils

from rewardlab import Sample, Status, build
from rewardlab.cli.main import main
from rewardlab.errors import InputError, SpecError
from rewardlab.integrations.openai_graders import grader_to_spec, import_grader
from rewardlab.sandbox.config import site_packages_reachable

STRING_CHECK = {
    "type": "string_check",
    "name": "string check",
    "input": "{{ sample.output_text }}",
    "operation": "eq",
    "reference": "{{ item.reference_answer }}",
}
TEXT_SIMILARITY = {
    "type": "text_similarity",
    "name": "text similarity",
    "input": "{{ sample.output_text }}",
    "reference": "{{ item.reference_answer }}",
    "pass_threshold": 0.8,
    "evaluation_metric": "fuzzy_match",
}
PYTHON_SOURCE = """from rapidfuzz import fuzz, utils

def grade(sample, item) -> float:
    output_text = sample["output_text"]
    reference_answer = item["reference_answer"]
    return fuzz.WRatio(output_text, reference_answer, processor=utils.default_process) / 100.0
"""
PYTHON = {"type": "python", "name": "python grader", "image_tag": "2025-05-08", "source": PYTHON_SOURCE}
MULTI = {
    "type": "multi",
    "name": "contact",
    "graders": {
        "name": {"name": "name", "type": "string_check", "input": "{{ sample.output_json.name }}", "operation": "eq", "reference": "{{ item.name }}"},
        "email": {"name": "email", "type": "string_check", "input": "{{ sample.output_json.email }}", "operation": "ilike", "reference": "{{ item.email }}"},
    },
    "calculate_output": "(name + email) / 2",
}
ROWS = [("Paris", "Paris"), ("paris", "Paris"), ("The capital is Paris.", "Paris"), ("Rome", "Paris")]


def rows():
    return [Sample(response=out, meta={"reference_answer": ref}) for out, ref in ROWS]


@pytest.mark.parametrize(
    ("operation", "expected"),
    [("eq", [1, 0, 0, 0]), ("ne", [0, 1, 1, 1]), ("like", [1, 0, 1, 0]), ("ilike", [1, 1, 1, 0])],
)
def test_string_check_operations(operation, expected):
    reward = build(grader_to_spec({**STRING_CHECK, "operation": operation}))
    assert [r.score for r in reward.score_batch(rows())] == expected


def test_text_similarity_fuzzy_match_is_rapidfuzz_wratio():
    reward = build(grader_to_spec(TEXT_SIMILARITY))
    expected = [fuzz.WRatio(o, r, processor=utils.default_process) / 100 for o, r in ROWS]
    assert [r.score for r in reward.score_batch(rows())] == pytest.approx(expected)


@pytest.mark.parametrize("metric", ["bleu", "rouge_1", "rouge_l", "rouge_5"])
def test_text_similarity_other_metrics_score_identical_text_one(metric):
    reward = build(grader_to_spec({**TEXT_SIMILARITY, "evaluation_metric": metric}))
    sample = Sample(response="the cat sat on the mat today", meta={"reference_answer": "the cat sat on the mat today"})
    assert reward.score(sample).score == pytest.approx(1.0)


@pytest.mark.parametrize("metric", ["gleu", "meteor", "cosine"])
def test_unsupported_metrics_are_refused_when_built(metric):
    with pytest.raises(SpecError, match="not supported offline"):
        build(grader_to_spec({**TEXT_SIMILARITY, "evaluation_metric": metric}))


@pytest.mark.slow
@pytest.mark.skipif(
    not site_packages_reachable(sysconfig.get_paths()["purelib"]),
    reason="the sandbox user cannot read this virtualenv (e.g. under /root), and the documented grader imports rapidfuzz",
)
def test_python_grader_in_the_sandbox_matches_running_it_directly():
    namespace: dict = {}
    exec(PYTHON_SOURCE, namespace)  # the documented example, trusted here, as the reference
    expected = [namespace["grade"]({"output_text": o}, {"reference_answer": r}) for o, r in ROWS]
    reward = build(grader_to_spec(PYTHON))
    results = reward.score_batch(rows())
    assert [r.score for r in results] == pytest.approx(expected)
    assert results[0].components["python_grader"].info["isolation"] in ("bubblewrap", "rlimits-only")


def test_multi_grader_formula_over_json_output():
    reward = build(grader_to_spec(MULTI))
    item = {"name": "Ada", "email": "ada@example.com"}
    both = Sample(response=json.dumps({"name": "Ada", "email": "ADA@example.com"}), meta=item)
    one = Sample(response=json.dumps({"name": "Bob", "email": "ada@example.com"}), meta=item)
    assert [r.score for r in reward.score_batch([both, one])] == [1.0, 0.5]
    not_json = reward.score(Sample(response="Ada, ada@example.com", meta=item))
    assert not_json.status is Status.ERROR  # the template has no value: an error, not a 0


def test_missing_item_field_is_invalid_input():
    result = build(grader_to_spec(STRING_CHECK)).score(Sample(response="Paris"))
    assert result.status is Status.ERROR
    assert "item.reference_answer" in result.error.message


@pytest.mark.parametrize(
    ("grader", "message"),
    [
        ({"type": "label_model", "name": "x"}, "cannot be imported"),
        ({"type": "string_check", "name": "x", "input": "a"}, "needs 'operation'"),
        ({**MULTI, "calculate_output": "floor(name)"}, "floor"),
        ({"type": "multi", "name": "m", "graders": {"inner": MULTI}, "calculate_output": "inner"}, "nested multi"),
    ],
)
def test_unsupported_graders_are_refused_with_the_key(grader, message):
    with pytest.raises(SpecError, match=message):
        grader_to_spec(grader)


def test_cli_writes_a_spec_that_checks_and_scores(tmp_path, capsys):
    grader_path = tmp_path / "grader.json"
    grader_path.write_text(json.dumps(TEXT_SIMILARITY))
    spec_path = tmp_path / "spec.toml"
    assert main(["import-grader", str(grader_path), "-o", str(spec_path)]) == 0
    assert main(["check", str(spec_path), "-q"]) == 0
    assert build(spec_path).score(rows()[0]).score == 1.0
    assert main(["import-grader", str(grader_path)]) == 0
    assert 'evaluation_metric = "fuzzy_match"' in capsys.readouterr().out


def test_cli_bad_file_is_a_typed_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        import_grader(bad)
    assert main(["import-grader", str(bad)]) == 1
    assert main(["import-grader", str(tmp_path / "missing.json")]) == 1


def test_run_grader_request_body_is_accepted(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"grader": STRING_CHECK, "model_sample": "Paris", "item": {"reference_answer": "Paris"}}))
    spec, text = import_grader(path)
    assert spec["reward"]["components"][0]["use"] == "graders.string_check"
    assert "[[reward.components]]" in text
