"""τ-bench's retail domain, read from a mirror of sierra-research/tau-bench (MIT licence).

Its package is exported from the mirror's git objects into a temporary directory at test time
and imported as it is, with one stand-in: `litellm`, which `tau_bench.envs.user` imports for its
LLM-simulated user (never called here: the trajectories are built from the tasks' gold actions).
τ-bench's reward is its own `Env.calculate_reward`, run on an `Env` whose actions are stepped
through its own `Env.step` and tools.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tarfile
import types
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path
from typing import Any

MIRROR = Path("/work/.mirror/sierra-research+tau-bench/repo")
TOOLS_DIR = "tau_bench/envs/retail/tools"


def available() -> bool:
    return (MIRROR / "HEAD").exists() or (MIRROR / ".git").exists()


def export(target: Path) -> None:
    """The `tau_bench` package from the mirror into `target`, importable."""
    archive = subprocess.run(["git", "--git-dir", str(MIRROR), "archive", "HEAD", "tau_bench"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    sys.modules.setdefault("litellm", types.SimpleNamespace(completion=None))  # type: ignore[arg-type]
    sys.path.insert(0, str(target))


def tools_source(target: Path) -> str:
    """τ-bench's retail tools as one module for the sandbox: each tool's own file, its
    `from tau_bench.envs.tool import Tool` replaced by the base class it names, and
    `TOOLS = {name: invoke}` (the table `agent.state_replay` reads)."""
    parts = ["import json\nfrom typing import Any, Dict, List\n\nclass Tool:\n    pass\n"]
    names = []
    for path in sorted((target / TOOLS_DIR).glob("*.py")):
        if path.name == "__init__.py":
            continue
        text = path.read_text(encoding="utf-8").replace("from tau_bench.envs.tool import Tool", "")
        parts.append(text)
        names += [line.split("class ")[1].split("(")[0] for line in text.splitlines() if line.startswith("class ")]
    parts.append("TOOLS = {c.get_info()['function']['name']: c.invoke for c in [" + ", ".join(names) + "]}\n")
    return "\n".join(parts)


class _User:
    def get_total_cost(self) -> float:
        return 0.0


def tau_reward(task: Any, actions: list[Any]) -> tuple[float, dict[str, Any]]:
    """τ-bench's own reward for the agent taking `actions` (tau_bench.types.Action) on `task`,
    and the final data its environment holds before scoring."""
    from tau_bench.envs.base import Env
    from tau_bench.envs.retail.data import load_data
    from tau_bench.envs.retail.tools import ALL_TOOLS
    from tau_bench.types import RESPOND_ACTION_NAME

    env = object.__new__(Env)  # Env.__init__ would start the LLM user; the rest is Env's own code
    env.data_load_func = load_data
    env.data = load_data()
    env.tools_map = {t.get_info()["function"]["name"]: t for t in ALL_TOOLS}
    env.terminate_tools = ["transfer_to_human_agents"]
    env.task = task
    env.actions = []
    env.user = _User()
    for action in actions:
        if action.name == RESPOND_ACTION_NAME:
            env.actions.append(action)  # what the user would be told; τ-bench reads it from env.actions
        else:
            env.step(action)
    final = copy.deepcopy(env.data)
    return env.calculate_reward().reward, final


def trajectories(task: Any) -> Iterator[tuple[str, list[Any]]]:
    """(name, actions): the gold actions and mutations of them, with a last "respond" action that
    tells the user the task's outputs (or not)."""
    from tau_bench.types import Action

    gold = [a for a in task.actions if a.name != "respond"]
    say = Action(name="respond", kwargs={"content": "Done. " + ", ".join(task.outputs)})
    yield "gold", [*gold, say]
    writes = [i for i, a in enumerate(gold) if not a.name.startswith(("get_", "find_", "list_", "calculate", "think"))]
    if writes:
        last = writes[-1]
        yield "drop_last_write", [*gold[:last], *gold[last + 1:], say]
        yield "repeat_last_write", [*gold[:last + 1], gold[last], *gold[last + 1:], say]
        changed = copy.deepcopy(gold[last])
        key = sorted(changed.kwargs)[0]
        value = changed.kwargs[key]
        changed.kwargs[key] = list(reversed(value)) if isinstance(value, list) else f"{value}x"
        yield f"change_{key}", [*gold[:last], changed, *gold[last + 1:], say]
    if len(gold) > 1:
        yield "reversed", [*reversed(gold), say]
    yield "unknown_tool", [*gold, Action(name="no_such_tool", kwargs={}), say]
    if task.outputs:
        yield "outputs_not_said", [*gold, Action(name="respond", kwargs={"content": "Done."})]


def as_messages(actions: list[Any]) -> list[dict[str, Any]]:
    """The actions as an OpenAI trajectory (tool results left out: the reward does not read them)."""
    messages: list[dict[str, Any]] = []
    for i, action in enumerate(actions):
        if action.name == "respond":
            messages.append({"role": "assistant", "content": action.kwargs["content"]})
        else:
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": action.name, "arguments": json.dumps(action.kwargs)}}]})
            messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": ""})
    return messages
