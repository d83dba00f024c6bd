"""Data-set test formats read as they ship: CodeContests, LiveCodeBench, TACO/APPS."""

from __future__ import annotations

import base64
import json
import pickle
import zlib

import pytest

from rewardlab.errors import ScoringError
from rewardlab.verify.code.formats import Problem, read_reference

# Field layouts as in deepmind/code_contests (the Hugging Face parquet rows).
CODE_CONTESTS = {
    "name": "1548_A. Weak Sum",
    "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
    "private_tests": {"input": ["5 5\n", "0 0\n"], "output": ["10\n", "0\n"]},
    "generated_tests": {"input": ["7 -1\n"], "output": ["6\n"]},
    "time_limit": {"seconds": 2, "nanos": 500000000},
    "memory_limit_bytes": 268435456,
}


def lcb_compress(tests: list[dict[str, str]]) -> str:
    """LiveCodeBench's encoding of private tests: base64(zlib(pickle(json string)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()


def test_code_contests_row_with_every_split_and_its_limits() -> None:
    problem = read_reference(CODE_CONTESTS)
    assert isinstance(problem, Problem)
    assert [c["input"] for c in problem.cases] == ["1 2\n", "5 5\n", "0 0\n", "7 -1\n"]
    assert problem.counts == {"public_tests": 1, "private_tests": 2, "generated_tests": 1}
    assert problem.time_limit == 2.5 and problem.memory_mb == 256
    assert problem.source_format == "code_contests"


def test_code_contests_without_stated_limits() -> None:
    row = {**CODE_CONTESTS, "time_limit": None, "memory_limit_bytes": 0}
    problem = read_reference(json.dumps(row))  # a JSON string holding the row works too
    assert isinstance(problem, Problem) and problem.time_limit is None and problem.memory_mb is None


def test_code_contests_split_with_unequal_lists_is_invalid_input() -> None:
    row = {"public_tests": {"input": ["1\n", "2\n"], "output": ["1\n"]}}
    with pytest.raises(ScoringError, match="public_tests has 2 inputs but 1 outputs"):
        read_reference(row)


def test_live_code_bench_public_json_and_compressed_private_tests() -> None:
    public = [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]
    private = [{"input": "4 4\n", "output": "8\n", "testtype": "stdin"}, {"input": "0 1\n", "output": "1\n", "testtype": "stdin"}]
    row = {"question_id": "abc000_a", "public_test_cases": json.dumps(public), "private_test_cases": lcb_compress(private),
           "metadata": "{}"}  # fmt: skip
    problem = read_reference(row)
    assert isinstance(problem, Problem)
    assert [c["output"] for c in problem.cases] == ["3\n", "8\n", "1\n"]
    assert problem.counts == {"public_test_cases": 1, "private_test_cases": 2}


def lcb_functional(tests: list[tuple[str, str]], func_name: str | None = "maxSum") -> dict[str, str]:
    """A LeetCode row of code_generation_lite: functional tests, `metadata` a JSON string."""
    rows = [{"input": i, "output": o, "testtype": "functional"} for i, o in tests]
    metadata = json.dumps({} if func_name is None else {"func_name": func_name})
    return {"question_id": "3000", "starter_code": "class Solution:\n    def maxSum(self, nums: List[int], k: int) -> int:\n        ",
            "public_test_cases": json.dumps(rows[:1]), "private_test_cases": lcb_compress(rows[1:]), "metadata": metadata}  # fmt: skip


def test_live_code_bench_functional_tests_call_the_method_with_json_lines() -> None:
    ref = read_reference(lcb_functional([("[1, 2, 3]\n2", "5"), ("[4]\n1", "4"), ('["a", null]\n0', "[true, 1.5]")]))
    assert isinstance(ref, dict) and ref["entry_point"] == "_rewardlab_lcb_entry"
    assert "from typing import *" in ref["prelude"] and "Solution().maxSum" in ref["postlude"]
    namespace: dict[str, object] = {}
    exec(ref["tests"], namespace)
    answers = {((1, 2, 3), 2): 5, ((4,), 1): 4, (("a", None), 0): (True, 1.5)}  # a tuple counts as the list
    namespace["check"](lambda nums, k: answers[tuple(nums), k])  # type: ignore[operator]
    with pytest.raises(AssertionError):
        namespace["check"](lambda nums, k: str(answers[tuple(nums), k]))  # type: ignore[operator]


@pytest.mark.parametrize(
    ("row", "match"),
    [
        (lcb_functional([("[1]\n2", "3")], func_name=None), "metadata.func_name"),
        (lcb_functional([("[1]\n2", "3")], func_name="not a name"), "metadata.func_name"),
        (lcb_functional([("[1\n2", "3")]), r"public_test_cases\[0\]\.input is not valid JSON"),
        (lcb_functional([("[1]\nNaN", "3")]), "NaN is not a JSON number"),
        ({"public_test_cases": json.dumps([{"input": "1", "output": "1", "testtype": "functional"},
                                           {"input": "1", "output": "1", "testtype": "stdin"}])}, "all 'stdin' or all 'functional'"),
    ],
)  # fmt: skip
def test_malformed_live_code_bench_functional_rows_are_invalid_input(row: dict[str, str], match: str) -> None:
    with pytest.raises(ScoringError, match=match) as caught:
        read_reference(row)
    assert caught.value.kind == "invalid_input"


def test_a_pickle_that_builds_objects_is_refused() -> None:
    class Boom:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (print, ("pickle ran code",))

    evil = base64.b64encode(zlib.compress(pickle.dumps(Boom()))).decode()
    with pytest.raises(ScoringError, match="a pickle of something other than one string"):
        read_reference({"public_test_cases": "[]", "private_test_cases": evil})


def test_taco_stdin_tests_with_outputs_as_lines() -> None:
    spec = {"inputs": ["2\n1 2\n", "1\n5\n"], "outputs": [["3"], "5\n"]}
    problem = read_reference({"question": "...", "input_output": json.dumps(spec)})
    assert isinstance(problem, Problem)
    assert problem.cases == [{"input": "2\n1 2\n", "output": "3"}, {"input": "1\n5\n", "output": "5\n"}]


def test_taco_call_based_tests_become_check_candidate() -> None:
    spec = {"fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [[3], [7]]}
    ref = read_reference({"input_output": json.dumps(spec)})
    assert isinstance(ref, dict) and ref["entry_point"] == "_rewardlab_taco_entry"
    assert "Solution().add if 'Solution' in globals() else add" in ref["postlude"]
    namespace: dict[str, object] = {}
    exec(ref["tests"], namespace)
    namespace["check"](lambda a, b: a + b)  # type: ignore[operator]
    with pytest.raises(AssertionError):
        namespace["check"](lambda a, b: a - b)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("reference", "match"),
    [
        ({"input_output": "{not json"}, "input_output is not valid JSON"),
        ({"input_output": json.dumps({"inputs": ["1"], "outputs": []})}, "equally long"),
        ({"public_tests": {"input": "1", "output": "1"}}, "public_tests must be"),
        ({"private_test_cases": "%%%not base64%%%"}, "neither JSON nor base64"),
        ({"cases": [{"input": 1, "output": "1"}]}, r"cases\[0\] needs string input and output"),
        ({"cases": [{"input": "1", "output": "1"}], "time_limit": "fast"}, "time_limit must be seconds"),
        ({"cases": [{"input": "1", "output": "1"}], "time_limit": 10**400}, r"time_limit must be seconds .*got 1000.*\.\.\.$"),
        ({"cases": [{"input": "1", "output": "1"}], "time_limit": float("inf")}, "time_limit must be seconds"),
        ({"cases": [{"input": "1", "output": "1"}], "time_limit": {"seconds": "x"}}, "time_limit must be seconds"),
        ({"cases": [{"input": "1", "output": "1"}], "memory_mb": 10**400}, "memory_mb must be a memory limit in MB"),
        ({"cases": [{"input": "1", "output": "1"}], "memory_mb": "lots"}, "memory_mb must be a memory limit in MB"),
        ({"public_tests": {"input": ["1"], "output": ["1"]}, "memory_limit_bytes": 10**400}, "memory_limit_bytes must be"),
        ({"something": "else"}, "got keys"),
    ],
)
def test_malformed_fields_are_invalid_input_naming_the_field(reference: object, match: str) -> None:
    with pytest.raises(ScoringError, match=match) as caught:
        read_reference(reference)
    assert caught.value.kind == "invalid_input"


def test_stated_limits_read_as_numbers_or_numeric_strings() -> None:
    problem = read_reference({"cases": [{"input": "", "output": "1"}], "time_limit": {"seconds": 2, "nanos": 5e8}, "memory_mb": "256"})
    assert isinstance(problem, Problem) and (problem.time_limit, problem.memory_mb) == (2.5, 256)


def _taco_check(spec: dict[str, object]) -> object:
    ref = read_reference({"input_output": json.dumps(spec)})
    assert isinstance(ref, dict)
    namespace: dict[str, object] = {}
    exec(ref["tests"], namespace)
    return namespace["check"]


@pytest.mark.parametrize(
    ("outputs", "answer", "passes"),
    [
        ([[[1, 2], [3, 4]]], [(1, 2), (3, 4)], True),  # a list of tuples, as the graders compare it
        ([[[1, 2], [3, 4]]], ((1, 2), (3, 4)), True),  # a tuple of tuples
        ([[1, 2], [3, 4]], [(1, 2), (3, 4)], False),  # unwrapped: the graders compare only the first element
        ([[3]], [3], True),
        ([[3]], 3, False),
        ([3, 9], 3, True),  # the first element of any non-empty list
        ([3, 9], 9, False),
        ([[]], [], True),
    ],
)
def test_taco_call_based_answers_compare_as_the_graders_compare(outputs: list[object], answer: object, passes: bool) -> None:
    check = _taco_check({"fn_name": "f", "inputs": [[]], "outputs": [outputs]})
    if passes:
        check(lambda: answer)  # type: ignore[operator]
    else:
        with pytest.raises(AssertionError):
            check(lambda: answer)  # type: ignore[operator]


def test_taco_dict_arguments_and_answers_get_integer_keys() -> None:
    check = _taco_check({"fn_name": "f", "inputs": [[{"1": "a", "2": "b"}]], "outputs": [{"1": 2}]})
    check(lambda d: {k + 0: len(v) + 1 for k, v in d.items() if k == 1})  # type: ignore[operator]


@pytest.mark.parametrize(("row", "fmt"), [({}, "apps"), ({"source": "codeforces", "skill_types": "[]"}, "taco")])
def test_taco_rows_are_told_from_apps_rows_by_their_own_fields(row: dict[str, str], fmt: str) -> None:
    problem = read_reference({**row, "input_output": json.dumps({"inputs": ["1\n"], "outputs": ["1\n"]})})
    assert isinstance(problem, Problem) and problem.source_format == fmt


def test_python_programs_get_the_graders_imports_where_the_graders_put_them() -> None:
    lcb = read_reference({"public_test_cases": json.dumps([{"input": "1\n", "output": "1\n", "testtype": "stdin"}])})
    taco = read_reference({"source": "codeforces", "input_output": json.dumps({"inputs": ["1\n"], "outputs": ["1\n"]})})
    native = read_reference({"cases": [{"input": "1", "output": "1"}]})
    assert isinstance(lcb, Problem) and isinstance(taco, Problem) and isinstance(native, Problem)
    program = "from __future__ import annotations\nimport os\nprint(sqrt(4))\n"
    assert lcb.python_source(program).startswith("from string import *\n")  # before everything, as make_function
    placed = taco.python_source(program).split("\n")
    assert placed[:2] == ["from __future__ import annotations", "import os"] and "stdout = sys.stdout" in placed
    assert placed.index("from math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2") < placed.index("print(sqrt(4))")
    assert native.python_source(program) == program
