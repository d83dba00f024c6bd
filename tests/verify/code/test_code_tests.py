"""`code.tests`: stdin/stdout cases and check(candidate) tests, verdicts, scores, errors."""

from __future__ import annotations

import json
import shutil

import pytest

from rewardlab.core import ErrorKind, Sample, Status, registry
from rewardlab.sandbox.config import find_bwrap
from rewardlab.verify.code import CodeTests

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it")

ADD_CASES = {"cases": [{"input": "1 2\n", "output": "3\n"}, {"input": "10 -4\n", "output": "6"}, {"input": "0 0", "output": "0"}]}
CHECK = """
def check(candidate):
    assert candidate(2, 3) == 5
    assert candidate(-1, 1) == 0
    assert candidate(10, 5) == 15
"""
CHECK_REF = {"entry_point": "add", "tests": CHECK}


@pytest.fixture(scope="module")
def reward() -> CodeTests:
    return CodeTests(workers=1, cpu_seconds=2.0, wall_seconds=6.0)


@pytest.fixture(scope="module")
def fraction() -> CodeTests:
    return CodeTests(workers=1, cpu_seconds=2.0, wall_seconds=6.0, score="pass_fraction")


@pytest.mark.parametrize(
    ("program", "all_pass", "verdicts"),
    [
        ("a, b = map(int, input().split())\nprint(a + b)", 1.0, ["pass", "pass", "pass"]),
        ("a, b = map(int, input().split())\nprint(a - b)", 0.0, ["wrong_answer", "wrong_answer", "pass"]),
        ("a, b = map(int, input().split())\nprint(a + b)\nraise SystemExit(3)", 0.0, ["runtime_error"] * 3),
        ("import sys\na, b = map(int, input().split())\nprint(a + b)\nsys.exit(0)", 1.0, ["pass"] * 3),
        ("print(", 0.0, ["runtime_error"] * 3),
    ],
)
def test_stdin_stdout_cases(reward: CodeTests, program: str, all_pass: float, verdicts: list[str]) -> None:
    result = reward.score(Sample(response=f"```python\n{program}\n```", reference=ADD_CASES))
    assert result.status is Status.OK
    assert result.score == all_pass
    assert [t["verdict"] for t in result.info["tests"]] == verdicts
    assert result.info["style"] == "stdio" and result.info["isolation"] == "bubblewrap"


def test_pass_fraction_and_both_scores_in_info(fraction: CodeTests) -> None:
    result = fraction.score(Sample(response="a, b = map(int, input().split())\nprint(a - b)", reference=ADD_CASES))
    assert result.score == pytest.approx(1 / 3)
    assert (result.info["all_pass"], result.info["passed"], result.info["total"]) == (False, 1, 3)


def test_runtime_error_reports_stderr_excerpt(reward: CodeTests) -> None:
    result = reward.score(Sample(response="x = 1 / 0", reference={"cases": [{"input": "", "output": ""}]}))
    test = result.info["tests"][0]
    assert test["verdict"] == "runtime_error" and "ZeroDivisionError" in test["stderr"]


@pytest.mark.parametrize(
    ("body", "score", "verdicts"),
    [
        ("    return a + b", 1.0, ["pass", "pass", "pass"]),
        ("    return a + b if a != 10 else 0", 0.0, ["pass", "pass", "fail"]),
        ("    raise ValueError('no')", 0.0, ["fail", "fail", "fail"]),
        ("    return str(a + b)", 0.0, ["fail", "fail", "fail"]),  # '5' == 5 is False: types count
    ],
)
def test_check_candidate_style(reward: CodeTests, body: str, score: float, verdicts: list[str]) -> None:
    result = reward.score(Sample(response=f"def add(a, b):\n{body}\n", reference=CHECK_REF))
    assert result.status is Status.OK and result.score == score
    assert [t["verdict"] for t in result.info["tests"]] == verdicts


def test_candidate_exception_is_named_in_the_detail(reward: CodeTests) -> None:
    result = reward.score(Sample(response="def add(a, b):\n    raise ValueError('nope')\n", reference=CHECK_REF))
    assert "ValueError: nope" in result.info["tests"][0]["detail"]


def test_names_shared_with_the_program_are_called_in_the_sandbox(reward: CodeTests) -> None:
    """HumanEval/32 style: the tests call `poly`, a helper the program defines."""
    tests = "def check(candidate):\n    assert abs(poly([1, 2], candidate([1, 2]))) < 1e-9\n"
    program = "def poly(xs, x):\n    return sum(c * x**i for i, c in enumerate(xs))\ndef root(xs):\n    return -xs[0] / xs[1]\n"
    result = reward.score(Sample(response=program, reference={"entry_point": "root", "tests": tests}))
    assert result.score == 1.0, result.info


def test_an_exception_outside_asserts_leaves_later_tests_unreached(reward: CodeTests) -> None:
    tests = "def check(candidate):\n    assert candidate(1) == 1\n    x = candidate(0)\n    assert x == 0\n"
    result = reward.score(Sample(response="def f(x):\n    return 1 // x\n", reference={"entry_point": "f", "tests": tests}))
    assert [t["verdict"] for t in result.info["tests"]] == ["pass", "not_reached"]
    assert "ZeroDivisionError" in result.info["stopped_by"]


def test_reference_as_json_string_and_prompt_prefix() -> None:
    reward = CodeTests(workers=1, prepend_prompt=True)
    sample = Sample(prompt="def add(a, b):\n", response="    return a + b\n", reference=json.dumps(CHECK_REF))
    assert reward.score(sample).score == 1.0


@pytest.mark.parametrize(
    "reference",
    [None, "not json", {"cases": []}, {"cases": [{"input": "x"}]}, {"entry_point": "f"}, {"entry_point": "f x", "tests": "def check(c): pass"}],
)
def test_bad_reference_is_invalid_input(reward: CodeTests, reference: object) -> None:
    result = reward.score(Sample(response="print(1)", reference=reference))  # type: ignore[arg-type]
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.kind is ErrorKind.INVALID_INPUT


@pytest.mark.parametrize("tests", ["def check(candidate:\n", "def test(candidate):\n    pass\n"])
def test_bad_tests_are_invalid_input(reward: CodeTests, tests: str) -> None:
    result = reward.score(Sample(response="def f(): pass", reference={"entry_point": "f", "tests": tests}))
    assert result.error is not None and result.error.kind is ErrorKind.INVALID_INPUT


def test_sandbox_that_cannot_start_is_an_error_not_a_zero() -> None:
    broken = CodeTests(workers=1, python="/nonexistent/python3")
    result = broken.score(Sample(response="print(1)", reference=ADD_CASES))
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.kind is ErrorKind.SANDBOX and result.score is None


def test_rlimits_only_results_are_flagged() -> None:
    result = CodeTests(workers=1, isolation="rlimits").score(Sample(response="print(3)", reference={"cases": [{"input": "", "output": "3"}]}))
    assert result.score == 1.0
    assert result.info["isolation"] == "rlimits-only" and "WITHOUT namespaces" in result.info["sandbox_warning"]


def test_registered_and_batch_keeps_order() -> None:
    reward = registry.create("code.tests", {"workers": 2, "score": "pass_fraction"})
    programs = ["print(int(input()) * 2)", "print(0)", "print(int(input()) + int(input()))"]
    ref = {"cases": [{"input": "2\n2\n", "output": "4"}]}
    scores = [r.score for r in reward.score_batch([Sample(response=p, reference=ref) for p in programs])]
    assert scores == [1.0, 0.0, 1.0]


def test_invalid_params_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="score"):
        CodeTests(score="mean")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="language"):
        CodeTests(language="cobol")


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None, reason="gcc/g++ not installed")
@pytest.mark.parametrize(
    ("language", "program", "verdicts"),
    [
        ("c", '#include <stdio.h>\nint main(){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a+b);}', ["pass", "pass", "pass"]),
        ("cpp", "#include <iostream>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a-b<<std::endl;}", ["wrong_answer", "wrong_answer", "pass"]),
        ("c", "int main(){ syntax error }", ["compile_error"] * 3),
    ],
)
def test_compiled_languages_use_the_same_sandbox(language: str, program: str, verdicts: list[str]) -> None:
    reward = CodeTests(workers=1, language=language)
    result = reward.score(Sample(response=f"```{language}\n{program}\n```", reference=ADD_CASES))
    assert [t["verdict"] for t in result.info["tests"]] == verdicts
    assert result.info["isolation"] == "bubblewrap"


def test_limits_are_parameters() -> None:
    tight = CodeTests(workers=1, processes=4, tmp_mb=1, cpu_seconds=1.0, wall_seconds=5.0)
    forks = (
        "import os, time\nn = 1\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(5)\n"
        "        n += 1\nexcept OSError:\n    print(n)\n"
    )
    result = tight.score(Sample(response=forks, reference={"cases": [{"input": "", "output": "4"}]}))
    assert result.score == 1.0, result.info  # the program and 3 children: 4 processes
    disk = "try:\n    open('/tmp/f', 'wb').write(b'x' * (2 << 20))\nexcept OSError as e:\n    print(e.errno)\n"
    result = tight.score(Sample(response=disk, reference={"cases": [{"input": "", "output": "27"}]}))
    assert result.score == 1.0, result.info  # EFBIG: no file may outgrow the 1 MiB /tmp
