"""`agent.state_replay` gives τ-bench's own retail reward on τ-bench's data.

Trajectories are the test tasks' gold actions and mutations of them (tau_cases.py); τ-bench's
`Env.calculate_reward` scores each, and so does rewardlab, twice: replaying the trajectory's
calls in the sandbox, and reading the final state τ-bench's environment reached. A slice of the
tasks runs here (each replay ships the 2.3 MB database into a sandbox);
bench/agent_tau_bench.py runs every task of the split.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tau_cases

from rewardlab.agent.replay import StateReplay
from rewardlab.core.sample import Sample

pytestmark = pytest.mark.skipif(not tau_cases.available(), reason="no mirror of sierra-research/tau-bench at /work/.mirror")
TASKS = (0, 114)  # the first and the last task of the test split


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tau")
    tau_cases.export(root / "src")
    from tau_bench.envs.retail.data import load_data

    (root / "retail.json").write_text(json.dumps(load_data()), encoding="utf-8")
    (root / "retail_tools.py").write_text(tau_cases.tools_source(root / "src"), encoding="utf-8")
    return root


def reference(task: Any) -> dict[str, Any]:
    gold = [{"name": a.name, "arguments": a.kwargs} for a in task.actions if a.name != "respond"]
    return {"initial": {"file": "retail.json"}, "tools": {"file": "retail_tools.py"}, "actions": gold,
            "outputs": list(task.outputs), "skip": ["transfer_to_human_agents"]}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("index", TASKS)
def test_state_replay_equals_tau_bench_reward(state_dir: Path, index: int) -> None:
    from tau_bench.envs.retail.tasks_test import TASKS_TEST

    task = TASKS_TEST[index]
    reward = StateReplay(state_dir=str(state_dir))
    seen = set()
    for name, actions in tau_cases.trajectories(task):
        theirs, final = tau_cases.tau_reward(task, actions)
        replayed = reward.score(Sample.from_dict({"response": tau_cases.as_messages(actions), "reference": reference(task)}))
        given = reward.score(Sample.from_dict({"response": tau_cases.as_messages(actions), "reference": reference(task), "state": final}))
        assert replayed.status == "ok" and given.status == "ok", (name, replayed.error, given.error)
        assert replayed.score == theirs == given.score, (index, name, theirs, replayed.info)
        seen.add(theirs)
    names = [name for name, _ in tau_cases.trajectories(task)]
    if "drop_last_write" in names or "outputs_not_said" in names:  # a task that changes the database or must say something
        assert seen == {0.0, 1.0}  # the mutations do break it
