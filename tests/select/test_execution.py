"""Execution-grouped selection: programs run in the real sandbox and are grouped by outputs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardlab.errors import ArrayError
from rewardlab.sandbox import Limits, SandboxPool
from rewardlab.sandbox.config import find_bwrap
from rewardlab.select import execution_classes, majority_vote
from rewardlab.verify.code import extract_code


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    if find_bwrap() is None:
        pytest.skip("bubblewrap (bwrap) is not installed; CI installs it")
    with SandboxPool(size=2) as p:
        yield p


def test_programs_with_equal_outputs_share_a_class_and_the_largest_group_wins(pool):
    responses = [
        "```python\nprint(int(input()) ** 2)\n```",
        "```python\nn = int(input())\nprint(n * n)\n```",
        "```python\nprint(2 * int(input()))\n```",  # agrees with n*n only on input 2
        "```python\nimport sys\nn = int(sys.stdin.read())\nprint(n*n, end='\\n\\n')\n```",  # trailing blank line
    ]
    programs = [[extract_code(r).code for r in responses]]
    ex = execution_classes(programs, [["2", "5"]], pool=pool)
    assert ex.classes.tolist() == [[0, 0, 1, 0]]
    assert majority_vote(ex.classes).chosen.tolist() == [0]
    assert ex.outputs[0][2] == ["4\n", "10\n"]


def test_a_crashing_program_never_votes(pool):
    programs = [["print(int(input()) + 1)", "raise SystemExit(3)", "while True: pass", None]]
    ex = execution_classes(programs, [["1"]], pool=pool, limits=Limits(cpu_seconds=0.5, wall_seconds=20))
    assert ex.classes.tolist() == [[0, -1, -1, -1]]
    assert ex.failed == 2 and ex.sandbox_errors == 0


def test_a_program_failing_on_one_input_only_is_dropped(pool):
    programs = [["print(10 // int(input()))", "x = int(input())\nprint(10 // x if x else 0)"]]
    ex = execution_classes(programs, [["2", "0"]], pool=pool)
    assert ex.classes.tolist() == [[-1, 0]]


def test_inputs_must_match_problems():
    with pytest.raises(ArrayError, match="inputs"):
        execution_classes([["print(1)"]], [], pool=object())


def test_a_problem_without_inputs_is_refused_not_grouped_into_one_class():
    # run on nothing, every program would agree with every other: the vote would be meaningless
    with pytest.raises(ArrayError, match="problem 1 has programs but no inputs"):
        execution_classes([["print(1)"], ["print(1)", "print(2)"]], [["x"], []], pool=object())
    # a problem with no programs needs no inputs (nothing is run for it)
    assert execution_classes([[None]], [[]], pool=object()).classes.tolist() == [[-1]]
