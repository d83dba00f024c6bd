"""`code.tests` on rows laid out as each data set publishes them, run in the sandbox: correct
programs the data set's own grader passes score 1 by default; a wrong one still scores 0."""

from __future__ import annotations

import base64
import json
import pickle
import zlib

import pytest

from rewardlab.core import Sample, Status
from rewardlab.verify.code import CodeTests


@pytest.fixture(scope="module")
def reward() -> CodeTests:
    return CodeTests(workers=1, cpu_seconds=5.0, wall_seconds=20.0, score="pass_fraction")


def _score(reward: CodeTests, program: str, row: dict[str, object]) -> tuple[float | None, str, list[str]]:
    result = reward.score(Sample(response=program, reference=row))
    assert result.status is Status.OK, result.error
    return result.score, result.info["judge"], [t["verdict"] for t in result.info["tests"]]


def test_code_contests_row_is_judged_by_outputs_match(reward: CodeTests) -> None:
    # deepmind/code_contests: a yes/no problem and one with a real-valued answer
    row = {"name": "9999_Z. Halves", "description": "...", "public_tests": {"input": ["4\n"], "output": ["YES\n2.000000000\n"]},
           "private_tests": {"input": ["3\n"], "output": ["NO\n1.500000000\n"]}, "generated_tests": {"input": [], "output": []},
           "time_limit": {"seconds": 2, "nanos": 0}, "memory_limit_bytes": 256000000}  # fmt: skip
    right = "n = int(input())\nprint('Yes' if n % 2 == 0 else 'No', n / 2)"
    assert _score(reward, right, row) == (1.0, "code_contests", ["pass", "pass"])
    wrong = "n = int(input())\nprint('Yes', n / 2)"
    assert _score(reward, wrong, row)[0] == 0.5
    assert _score(CodeTests(workers=1, judge="lines"), right, row)[0] == 0.0  # what the default was


def test_live_code_bench_row_is_judged_by_grade_stdio(reward: CodeTests) -> None:
    private = [{"input": "3\n", "output": "6\n", "testtype": "stdin"}]
    row = {"question_title": "double it", "platform": "atcoder", "question_id": "abc999_a", "contest_id": "abc999",
           "starter_code": "", "difficulty": "easy", "metadata": "{}",
           "public_test_cases": json.dumps([{"input": "1\n", "output": "2\n", "testtype": "stdin"}]),
           "private_test_cases": base64.b64encode(zlib.compress(pickle.dumps(json.dumps(private)))).decode()}  # fmt: skip
    right = "n = int(input())\nprint()\nprint('  ', float(2 * n))"  # a blank line, spaces, 2.0 for 2
    assert _score(reward, right, row) == (1.0, "live_code_bench", ["pass", "pass"])
    assert _score(reward, "n = int(input())\nprint(2 * n + 1)", row)[0] == 0.0


def test_taco_stdin_row_passes_a_leading_space(reward: CodeTests) -> None:
    row = {"question": "...", "solutions": "[]", "starter_code": "", "source": "codechef", "tags": "[]", "skill_types": "[]",
           "difficulty": "EASY", "input_output": json.dumps({"inputs": ["2 3\n"], "outputs": ["5\n"]})}  # fmt: skip
    assert _score(reward, "a, b = map(int, input().split())\nprint('', a + b)", row) == (1.0, "taco", ["pass"])


def test_taco_leetcode_row_calls_the_method_of_solution(reward: CodeTests) -> None:
    io = {"fn_name": "pairs", "inputs": [[[3, 1, 2]], [[5]]], "outputs": [[[[1, 2], [2, 3]]], [[]]]}
    row = {"question": "...", "starter_code": "class Solution:\n    def pairs(self, nums):\n        ", "source": "leetcode",
           "input_output": json.dumps(io)}  # fmt: skip
    program = ("class Solution:\n    def pairs(self, nums: List[int]) -> List[Tuple[int, int]]:\n"
               "        s = sorted(nums)\n        return [(a, b) for a, b in zip(s, s[1:])]\n")  # fmt: skip
    result = reward.score(Sample(response=program, reference=row))
    assert result.status is Status.OK and result.score == 1.0, result.info
    wrong = program.replace("zip(s, s[1:])", "zip(s[1:], s)")
    assert reward.score(Sample(response=wrong, reference=row)).score == 0.5  # [] still passes


def test_an_expected_output_of_3_mb_passes_under_the_default_cap() -> None:
    n = 300_000
    expected = "\n".join(str(1_000_000_000 + i) for i in range(n)) + "\n"  # 3.3 MB
    row = {"cases": [{"input": f"{n}\n", "output": expected}]}
    program = "import sys\nn = int(input())\nsys.stdout.write(''.join(f'{1_000_000_000 + i}\\n' for i in range(n)))"
    result = CodeTests(workers=1, cpu_seconds=10.0, wall_seconds=30.0).score(Sample(response=program, reference=row))
    assert result.status is Status.OK and result.score == 1.0, [t.get("detail") for t in result.info["tests"]]


def test_python_programs_run_with_the_graders_imports(reward: CodeTests) -> None:
    lcb = {"public_test_cases": json.dumps([{"input": "3 1 2\n", "output": "1\n", "testtype": "stdin"}]), "metadata": "{}"}
    program = "xs = list(map(int, input().split()))\nheapify(xs)\nprint(heappop(xs))"  # heapq unimported, as LiveCodeBench allows
    assert _score(reward, program, lcb) == (1.0, "live_code_bench", ["pass"])
    taco = {"source": "atcoder", "input_output": json.dumps({"inputs": ["16\n"], "outputs": ["4.0\n"]})}
    program = "from __future__ import annotations\nprint(sqrt(int(stdin.readline())))"
    assert _score(reward, program, taco) == (1.0, "taco", ["pass"])
    native = reward.score(Sample(response=program, reference={"cases": [{"input": "16", "output": "4.0"}]}))
    assert native.info["tests"][0]["verdict"] == "runtime_error"  # plain cases: the program's own imports only
