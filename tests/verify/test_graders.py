"""OpenAI-grader rewards: string_check, text_similarity, and the sandboxed python grader."""

from __future__ import annotations

import pytest

from rewardlab import Sample, Status
from rewardlab.verify.graders import PythonGrader, StringCheck, TextSimilarity, grader_namespaces


def test_namespaces():
    sample, item = grader_namespaces(Sample(response='{"a": 1}', reference={"x": 2}, meta={"y": 3}))
    assert sample == {"output_text": '{"a": 1}', "output_json": {"a": 1}}
    assert item == {"x": 2, "y": 3}
    assert grader_namespaces(Sample(response="t", reference="r"))[1] == {"reference": "r"}


@pytest.mark.parametrize(
    ("operation", "output", "expected"),
    [("eq", "Paris", 1.0), ("eq", "paris", 0.0), ("like", "in Paris.", 1.0), ("ilike", "PARIS", 1.0), ("ne", "Rome", 1.0)],
)
def test_string_check_table(operation, output, expected):
    assert StringCheck(operation=operation).score(Sample(response=output, reference="Paris")).score == expected


def test_string_check_bad_operation_and_bad_response():
    with pytest.raises(ValueError, match="operation"):
        StringCheck(operation="regex")
    result = StringCheck(operation="eq").score(Sample(response=7, reference="7"))
    assert result.status is Status.ERROR and result.error.kind == "invalid_input"


def test_text_similarity_unknown_metric():
    with pytest.raises(ValueError, match="unknown evaluation_metric"):
        TextSimilarity(evaluation_metric="jaccard")


@pytest.mark.slow
class TestPythonGraderSandbox:
    def score(self, source, **kwargs):
        return PythonGrader(source=source, cpu_seconds=2, wall_seconds=4, **kwargs).score(Sample(response="abc", reference="abc"))

    def test_returns_the_grade(self):
        result = self.score("def grade(sample, item):\n    return float(sample['output_text'] == item['reference'])")
        assert result.score == 1.0

    def test_raising_grader_is_a_crash_error(self):
        result = self.score("def grade(sample, item):\n    raise ValueError('boom')")
        assert result.status is Status.ERROR and result.error.kind == "crash" and "boom" in result.error.message

    def test_non_number_is_invalid_output(self):
        result = self.score("def grade(sample, item):\n    return 'high'")
        assert result.error.kind == "invalid_output"

    @pytest.mark.parametrize("value", ["10**400", "float('nan')", "float('inf')"])
    def test_a_number_that_is_not_a_finite_float_is_invalid_output(self, value):
        result = self.score(f"def grade(sample, item):\n    return {value}")
        assert result.status is Status.ERROR and result.error.kind == "invalid_output"
        assert "expected a finite number" in result.error.message

    def test_infinite_loop_is_killed_as_timeout(self):
        result = self.score("def grade(sample, item):\n    while True:\n        pass")
        assert result.status is Status.ERROR and result.error.kind == "timeout"

    def test_grader_cannot_read_the_project(self):
        source = "import os\ndef grade(sample, item):\n    return float(os.path.exists('/work/main/pyproject.toml'))"
        result = self.score(source, site_packages=False)
        if result.info.get("isolation") != "bubblewrap":
            pytest.skip("bubblewrap not available: rlimits-only fallback is not a filesystem boundary")
        assert result.score == 0.0


def test_python_grader_source_is_checked_when_built():
    with pytest.raises(ValueError, match="does not compile"):
        PythonGrader(source="def grade(:")
    with pytest.raises(ValueError, match="must define grade"):
        PythonGrader(source="x = 1")
