"""`agent.state_replay`: τ-bench's reward — gold actions replayed on the initial state, final states compared.

The reference::

    {"initial": {...} | {"file": "retail.json"} | {"sqlite": "shop.db"},   # files under state_dir
     "tools": "def cancel(state, order_id): ..." | {"file": "tools.py"},    # source, run in the sandbox
     "actions": [{"name": "cancel", "arguments": {"order_id": "#W1"}}],     # the gold actions
     "outputs": ["1093.34"],                                                # optional
     "skip": ["transfer_to_human_agents"]}                                  # optional: not replayed

Components: ``state`` (1 when the candidate's final state hashes like the gold replay's),
``outputs`` (1 when every required output appears in an assistant turn's text, lowercased with
commas removed, as τ-bench checks its "respond" actions). The score is their product, τ-bench's
reward. See `agent.state` for how the candidate's final state is found and where code runs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from rewardlab.agent.state import _Sandboxed, json_state_hash
from rewardlab.agent.tool_calls import trajectory_of
from rewardlab.core.jsontext import utf8_text
from rewardlab.core.result import RewardResult
from rewardlab.core.sample import Sample
from rewardlab.core.trajectory import Trajectory
from rewardlab.errors import ConfigError, ScoringError

MAX_DB_BYTES = 64 << 20  # a database crosses into the sandbox whole; the job's /tmp holds both copies


class StateReplay(_Sandboxed):
    """τ-bench-style final-state reward: replay the gold actions in the sandbox and compare hashes.

    Args:
        state_dir: directory that initial states, databases and tools files are read from.
        replay_candidate: when the trajectory carries no final state, replay its own tool calls
            on a copy of the initial state (else that is an `invalid_input` error).
        cpu_seconds: CPU limit of the replay's sandbox.
        wall_seconds: wall-clock limit of the replay's sandbox.
        memory_mb: memory limit of the replay's sandbox.
        workers: sandboxes kept warm.
        isolation: "auto", "bubblewrap" or "rlimits" (see `rewardlab.sandbox`).
    """

    name = "agent.state_replay"
    range = (0.0, 1.0)

    def __init__(self, *, state_dir: str | None = None, replay_candidate: bool = True, cpu_seconds: float = 10.0,
                 wall_seconds: float = 30.0, memory_mb: int = 1024, workers: int = 2,
                 isolation: Literal["auto", "bubblewrap", "rlimits"] = "auto"):  # fmt: skip
        super().__init__(state_dir=state_dir, cpu_seconds=cpu_seconds, wall_seconds=wall_seconds, memory_mb=memory_mb,
                         workers=workers, isolation=isolation)  # fmt: skip
        if not isinstance(replay_candidate, bool):
            raise ConfigError(f"replay_candidate must be true or false, got {replay_candidate!r}")
        self._replay_candidate = replay_candidate

    def compute(self, sample: Sample) -> RewardResult:
        trajectory = trajectory_of(sample)
        reference = sample.reference
        if not isinstance(reference, Mapping):
            raise ScoringError("invalid_input", "agent.state_replay needs a reference object with 'initial', 'tools' and 'actions'")
        tools = self._tools(reference.get("tools"))
        gold = _actions(reference.get("actions"), "reference.actions")
        skip = reference.get("skip", [])
        if not (isinstance(skip, list) and all(isinstance(s, str) for s in skip)):
            raise ScoringError("invalid_input", "reference.skip must be a list of tool names")
        candidate = [[c.name, dict(c.arguments)] for c in trajectory.calls if c.error is None]
        initial = reference.get("initial")
        if isinstance(initial, Mapping) and set(initial) == {"sqlite"}:
            answer = self._sqlite(initial["sqlite"], trajectory, tools, gold, candidate, skip)
        else:
            answer = self._json(initial, trajectory, tools, gold, candidate, skip)
        if not isinstance(answer, Mapping) or not isinstance(answer.get("gold"), str) or not isinstance(answer.get("candidate"), str):
            raise ScoringError("sandbox", "the replay's sandbox answered without both hashes")
        state_ok = float(answer["gold"] == answer["candidate"])
        outputs = _outputs(reference.get("outputs", []), trajectory)
        outputs_ok = float(all(outputs.values()))
        info = {"gold_hash": answer["gold"], "candidate_hash": answer["candidate"], "outputs": outputs,
                "gold_errors": answer.get("gold_errors", []), "candidate_errors": answer.get("candidate_errors", []),
                "candidate_state": "given" if trajectory.state is not None or trajectory.sqlite else "replayed"}  # fmt: skip
        components = {"state": RewardResult.ok(state_ok), "outputs": RewardResult.ok(outputs_ok)}
        return RewardResult.ok(state_ok * outputs_ok, components=components, info=info)

    def _tools(self, tools: Any) -> str:
        if isinstance(tools, Mapping) and set(tools) == {"file"}:
            path = self._file(tools["file"], "reference.tools.file")
            try:
                return utf8_text(path.read_bytes())
            except ValueError as exc:
                raise ScoringError("invalid_input", f"{path.name}: {exc}") from None
        if not isinstance(tools, str):
            raise ScoringError("invalid_input", "reference.tools must be Python source (a string) or {'file': name}")
        return tools

    def _json(self, initial: Any, trajectory: Trajectory, tools: str, gold: list[list[Any]], candidate: list[list[Any]],
              skip: list[str]) -> Any:  # fmt: skip
        if isinstance(initial, Mapping) and set(initial) == {"file"}:
            path = self._file(initial["file"], "reference.initial.file")
            text = _read_text(str(path), path.stat().st_mtime)
        elif isinstance(initial, Mapping | list):
            text = json.dumps(initial, ensure_ascii=False)
        else:
            raise ScoringError("invalid_input", "reference.initial must be a JSON state, {'file': name} or {'sqlite': name}")
        given = trajectory.state
        if given is None and not self._replay_candidate:
            raise ScoringError("invalid_input", "the trajectory has no final state and replay_candidate is off")
        answer = self._call("rl_replay_json", text, tools, gold, candidate if given is None else None, skip)
        if given is not None and isinstance(answer, dict):
            answer["candidate"] = json_state_hash(given)
        return answer

    def _sqlite(self, name: Any, trajectory: Trajectory, tools: str, gold: list[list[Any]], candidate: list[list[Any]],
                skip: list[str]) -> Any:  # fmt: skip
        initial = _bytes(self._file(name, "reference.initial.sqlite"))
        final = _bytes(self._file(trajectory.sqlite, "the trajectory's state.sqlite")) if trajectory.sqlite else None
        if final is None and not self._replay_candidate:
            raise ScoringError("invalid_input", "the trajectory has no final database and replay_candidate is off")
        return self._call("rl_replay_sqlite", initial, tools, gold, candidate, final, skip)


@functools.lru_cache(maxsize=8)
def _read_text(path: str, mtime: float) -> str:
    """A JSON state file's text, checked to be JSON once (keyed by its modification time)."""
    try:
        text = utf8_text(Path(path).read_bytes())
        json.loads(text)
    except ValueError as exc:
        raise ScoringError("invalid_input", f"{Path(path).name} is not JSON: {exc}") from None
    return text


def _bytes(path: Path) -> bytes:
    if path.stat().st_size > MAX_DB_BYTES:
        raise ScoringError("invalid_input", f"database {path.name} is larger than {MAX_DB_BYTES >> 20} MiB")
    return path.read_bytes()


def _actions(actions: Any, where: str) -> list[list[Any]]:
    if not isinstance(actions, list):
        raise ScoringError("invalid_input", f"{where} must be a list of {{'name', 'arguments'}} objects")
    out = []
    for i, action in enumerate(actions):
        if not isinstance(action, Mapping) or not isinstance(action.get("name"), str):
            raise ScoringError("invalid_input", f"{where}[{i}] must be an object with a string 'name'")
        arguments = action.get("arguments", action.get("kwargs", {}))
        if not isinstance(arguments, Mapping):
            raise ScoringError("invalid_input", f"{where}[{i}].arguments must be an object")
        out.append([action["name"], dict(arguments)])
    return out


def _outputs(outputs: Any, trajectory: Trajectory) -> dict[str, bool]:
    if not (isinstance(outputs, list) and all(isinstance(o, str) for o in outputs)):
        raise ScoringError("invalid_input", "reference.outputs must be a list of strings")
    said = [t.content.lower().replace(",", "") for t in trajectory.turns]
    return {o: any(o.lower() in text for text in said) for o in outputs}
