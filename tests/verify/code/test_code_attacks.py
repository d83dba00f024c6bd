"""Reward hacks against code.tests, one per test (issue 4). Every one must score 0, say why,
and leave the shared pool working for the honest program that follows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardlab.core import Sample, Status
from rewardlab.sandbox import find_bwrap
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
    return Anything()
"""
    value, info = score(reward, program)
    assert value == 0.0
    assert all("cannot leave the sandbox" in t["detail"] for t in info["tests"])  # type: ignore[attr-defined]


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
