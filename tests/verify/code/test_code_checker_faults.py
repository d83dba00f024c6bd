"""A checker that fails on a contestant's output is that output's wrong answer; a checker that
fails on the jury's own answer is a broken problem (an error). Otherwise a policy scored with
`on_error="skip"` would learn to crash the checker rather than be wrong."""

from __future__ import annotations

import pytest
from code_toolchains import require_toolchain

from rewardlab.core import ErrorKind, RewardResult, Sample, Status
from rewardlab.verify.code import CodeTests

# Indexes a table by the contestant's number without a bounds check (std::vector::at throws:
# abort), and calls `_fail` (exit 3) on a negative one, as careless real checkers do.
FRAGILE_CHECKER = r"""
#include <fstream>
#include <iostream>
#include <vector>
int main(int argc, char **argv) {
    std::ifstream inf(argv[1]), ouf(argv[2]), ans(argv[3]);
    std::vector<long> squares = {0, 1, 4, 9, 16, 25, 36, 49, 64, 81};
    long n, k;
    inf >> n;
    ouf >> k;
    if (k < 0) { std::cerr << "negative index"; return 3; }
    if (squares.at(k) == n) { std::cerr << "ok"; return 0; }
    std::cerr << "wrong"; return 1;
}
"""
# Crashes whatever it reads: no output could pass.
BROKEN_CHECKER = "#include <vector>\nint main() { std::vector<int> v; return v.at(3); }\n"
CASES = [{"input": "49\n", "output": "7\n"}]


@pytest.fixture(scope="module")
def reward() -> CodeTests:
    require_toolchain("cpp")
    return CodeTests(workers=1, cpu_seconds=1.0, wall_seconds=6.0, score="pass_fraction")


def _score(reward: CodeTests, program: str, checker: str) -> RewardResult:
    return reward.score(Sample(response=program, reference={"cases": CASES, "checker": checker}))


def test_right_answer_passes_the_fragile_checker(reward: CodeTests) -> None:
    result = _score(reward, "print(7)", FRAGILE_CHECKER)
    assert result.status is Status.OK and result.score == 1.0, result


@pytest.mark.parametrize("hostile", ["print(10 ** 6)", "print(-1)"])  # abort in the checker, and its `_fail`
def test_checker_crash_on_hostile_output_is_a_wrong_answer(reward: CodeTests, hostile: str) -> None:
    result = _score(reward, hostile, FRAGILE_CHECKER)
    assert result.status is Status.OK, result.error
    assert result.score == 0.0
    test = result.info["tests"][0]
    assert test["verdict"] == "wrong_answer" and "the checker failed on this output" in test["detail"]


def test_checker_that_fails_on_the_jurys_answer_is_an_error(reward: CodeTests) -> None:
    result = _score(reward, "print(7)", BROKEN_CHECKER)
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.kind is ErrorKind.CRASH and "on the jury's own answer" in result.error.message
