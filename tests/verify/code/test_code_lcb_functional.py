"""LiveCodeBench `functional` tests (LeetCode problems) run end to end in the sandbox.

The grading rules are those of LiveCodeBench's `lcb_runner/evaluation/testing_util.py`
(`grade_call_based`): the program runs after LiveCodeBench's star imports, the method of one
`Solution()` (or a plain function) is called with each input line read as JSON, and the answer
must equal the JSON output, a tuple counting as a list.
"""

from __future__ import annotations

import json

import pytest
from test_code_formats import lcb_compress

from rewardlab.core import Sample, Status
from rewardlab.sandbox.config import find_bwrap
from rewardlab.verify.code import CodeTests

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it")

# LeetCode 1: two sum. Inputs as code_generation_lite ships them: one JSON value per line.
TESTS = [("[2,7,11,15]\n9", "[0,1]"), ("[3,2,4]\n6", "[1,2]"), ("[3,3]\n6", "[0,1]")]
ROW = {
    "question_title": "two-sum", "question_id": "1", "platform": "leetcode",
    "starter_code": "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        ",
    "public_test_cases": json.dumps([{"input": i, "output": o, "testtype": "functional"} for i, o in TESTS[:1]]),
    "private_test_cases": lcb_compress([{"input": i, "output": o, "testtype": "functional"} for i, o in TESTS[1:]]),
    "metadata": json.dumps({"func_name": "twoSum"}),
}  # fmt: skip

SOLUTION = """class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        seen = defaultdict(lambda: -1)  # List and defaultdict come from LiveCodeBench's imports
        for i, x in enumerate(nums):
            if seen[target - x] >= 0:
                return [seen[target - x], i]
            seen[x] = i
"""


@pytest.fixture(scope="module")
def reward() -> CodeTests:
    return CodeTests(workers=1, cpu_seconds=2.0, wall_seconds=8.0, score="pass_fraction")


def score(reward: CodeTests, program: str) -> tuple[float, dict]:
    result = reward.score(Sample(response=f"```python\n{program}```", reference=ROW))
    assert result.status is Status.OK, result.info
    return result.score, result.info


def test_a_leetcode_solution_relying_on_livecodebench_imports_passes(reward: CodeTests) -> None:
    value, info = score(reward, SOLUTION)
    assert value == 1.0 and info["passed"] == info["total"] == 3


def test_a_plain_function_is_called_when_there_is_no_solution_class(reward: CodeTests) -> None:
    program = "def twoSum(nums, target):\n    return next([i, j] for j in range(len(nums)) for i in range(j) if nums[i] + nums[j] == target)\n"
    assert score(reward, program)[0] == 1.0


def test_a_tuple_answer_counts_as_the_list_but_a_string_does_not(reward: CodeTests) -> None:
    assert score(reward, SOLUTION.replace("return [seen[target - x], i]", "return (seen[target - x], i)"))[0] == 1.0
    assert score(reward, SOLUTION.replace("return [seen[target - x], i]", "return str([seen[target - x], i])"))[0] == 0.0


def test_a_solution_wrong_on_one_test_gets_partial_credit(reward: CodeTests) -> None:
    wrong_on_duplicates = SOLUTION.replace("if seen[target - x] >= 0:", "if seen[target - x] >= 0 and nums[seen[target - x]] != x:")
    value, info = score(reward, wrong_on_duplicates)
    assert info["passed"] == 2 and value == pytest.approx(2 / 3)


def test_one_solution_instance_serves_every_call(reward: CodeTests) -> None:
    counting = SOLUTION.replace("        seen = defaultdict", "        self.calls = getattr(self, 'calls', 0) + 1\n        assert self.calls <= 3\n        seen = defaultdict")
    assert score(reward, counting)[0] == 1.0


def test_an_answer_whose_eq_always_holds_does_not_pass(reward: CodeTests) -> None:
    liar = "class Yes(list):\n    def __eq__(self, other):\n        return True\n\n" + SOLUTION.replace("return [seen[target - x], i]", "return Yes()")
    assert score(reward, liar)[0] == 0.0


def test_a_program_that_binds_the_entry_name_itself_is_still_graded_by_its_method(reward: CodeTests) -> None:
    forged = SOLUTION + "\n_rewardlab_lcb_entry = lambda nums, target: [0, 1]\n"
    assert score(reward, forged.replace("return [seen[target - x], i]", "return [-1, -1]"))[0] == 0.0


@pytest.mark.parametrize("load", ["raise SystemExit(0)", "import os\nos._exit(0)"])
def test_a_program_that_exits_while_loading_fails_every_test(reward: CodeTests, load: str) -> None:
    value, info = score(reward, SOLUTION + "\n" + load + "\n")
    assert value == 0.0 and info["passed"] == 0 and info["total"] == 3


def test_a_solution_class_whose_constructor_raises_fails_every_test(reward: CodeTests) -> None:
    broken = SOLUTION.replace("class Solution:\n", "class Solution:\n    def __init__(self):\n        raise RuntimeError('no')\n\n")
    value, info = score(reward, broken)
    assert value == 0.0 and info["passed"] == 0 and "no" in info["load_error"]


def test_a_counter_for_an_expected_dict_passes_as_in_livecodebench(reward: CodeTests) -> None:
    row = {"public_test_cases": json.dumps([{"input": '"aab"', "output": '{"a": 2, "b": 1}', "testtype": "functional"}]),
           "metadata": json.dumps({"func_name": "count"})}  # fmt: skip
    program = "class Solution:\n    def count(self, s: str) -> Dict[str, int]:\n        return Counter(s)\n"
    assert reward.score(Sample(response=program, reference=row)).score == 1.0
