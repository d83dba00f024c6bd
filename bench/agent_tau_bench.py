"""`agent.state_replay` against τ-bench's own retail reward on every test task (gold and mutated
trajectories), from a mirror of sierra-research/tau-bench; prints agreement per mutation.

    PYTHONPATH=src python bench/agent_tau_bench.py [--tasks N]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "agent"))

import tau_cases

from rewardlab.agent.replay import StateReplay
from rewardlab.core.sample import Sample


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=None, help="only the first N test tasks")
    args = parser.parse_args()
    if not tau_cases.available():
        print("no mirror of sierra-research/tau-bench at", tau_cases.MIRROR)
        return 1
    root = Path(tempfile.mkdtemp(prefix="tau-"))
    tau_cases.export(root / "src")
    from tau_bench.envs.retail.data import load_data
    from tau_bench.envs.retail.tasks_test import TASKS_TEST

    (root / "retail.json").write_text(json.dumps(load_data()), encoding="utf-8")
    (root / "retail_tools.py").write_text(tau_cases.tools_source(root / "src"), encoding="utf-8")
    reward = StateReplay(state_dir=str(root))
    agree: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    for task in TASKS_TEST[: args.tasks]:
        gold = [{"name": a.name, "arguments": a.kwargs} for a in task.actions if a.name != "respond"]
        reference = {"initial": {"file": "retail.json"}, "tools": {"file": "retail_tools.py"}, "actions": gold,
                     "outputs": list(task.outputs), "skip": ["transfer_to_human_agents"]}  # fmt: skip
        for name, actions in tau_cases.trajectories(task):
            theirs, _ = tau_cases.tau_reward(task, actions)
            ours = reward.score(Sample.from_dict({"response": tau_cases.as_messages(actions), "reference": reference}))
            kind = name if not name.startswith("change_") else "change_argument"
            total[kind] += 1
            agree[kind] += int(ours.status == "ok" and ours.score == theirs)
            if ours.status != "ok" or ours.score != theirs:
                print(f"differ: task {TASKS_TEST.index(task)} {name}: tau-bench {theirs}, rewardlab {ours.score} {ours.error}", flush=True)
        print(f"task {TASKS_TEST.index(task)}: {sum(agree.values())} / {sum(total.values())} agree so far", flush=True)
    for kind in sorted(total):
        print(f"{kind:20s} {agree[kind]:4d} / {total[kind]:4d} agree")
    print(f"all                  {sum(agree.values()):4d} / {sum(total.values()):4d}  ({time.perf_counter() - started:.0f} s)")
    return 0 if agree == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
