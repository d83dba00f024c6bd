"""`Trajectory`: an agent's conversation as turns, tool calls and tool results, plus a final state.

One normal form, read from the shapes agent trainers produce:

- OpenAI chat messages: an assistant message's ``tool_calls``
  (``[{"id", "type": "function", "function": {"name", "arguments"}}]``, ``arguments`` a JSON
  string or already an object) and ``{"role": "tool", "tool_call_id", "content"}`` results;
  verifiers' ``completion`` and verl's multi-turn agent loop keep messages in this shape;
- the legacy ``function_call`` field and ``{"role": "function"}`` results;
- Hermes-style calls written in the text, ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
  (what verl's and OpenRLHF's Qwen tool parsers read), when a message has no ``tool_calls``; a
  response that is one decoded string is split at its ``<tool_response>`` blocks into turns
  and tool results (`messages_from_text`);
- OpenRLHF's agent steps, ``[{"action_text": ..., "environment_feedback": ...}]``: each action is an
  assistant turn, each feedback a tool result.

A call whose arguments are not a JSON object is the policy's mistake, not bad data: it is kept
with `ToolCall.error` set, so rewards score it as a wrong call. A message whose *structure* is
wrong (``tool_calls`` not a list, a call without a name) is bad data: `SampleFieldError` naming
the field, e.g. ``response[2].tool_calls[0].function.name``.

The final ``state`` is a JSON object or list, or ``{"sqlite": "path/to/file.db"}`` for a SQLite
database; `Sample.from_dict` reads it from the row's ``state`` column (kept in `meta`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardlab.errors import SampleFieldError

JSONValue = Any

_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function", "ipython"})
_TOOL_ROLES = frozenset({"tool", "function", "ipython"})
# A tool result counts as a tool error when it starts with one of these (τ-bench's tools answer
# "Error: ..."; verl's and OpenAI's examples put errors in the text too).
_ERROR_PREFIXES = ("error", "exception", "traceback")


@dataclass(frozen=True)
class ToolCall:
    """One tool call of an assistant turn.

    Attributes:
        name: the function's name.
        arguments: the arguments as an object ({} when they could not be read, see `error`).
        id: the call id that tool results refer to, if the trajectory gives one.
        turn: index of the assistant turn (in `Trajectory.turns`) that made the call.
        error: why the arguments could not be read (not JSON, not an object); None if they could.
    """

    name: str
    arguments: Mapping[str, JSONValue]
    id: str | None = None
    turn: int = 0
    error: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """The environment's answer to a call: `content` text; `error` when it reports a failure."""

    content: str
    call_id: str | None = None
    name: str | None = None
    turn: int = 0
    error: bool = False


@dataclass(frozen=True)
class Turn:
    """One assistant turn: its message index, text and calls."""

    message: int
    content: str
    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Trajectory:
    """A trajectory in normal form (see the module docstring for the shapes it is read from).

    Attributes:
        messages: the conversation as OpenAI-style messages (tool calls under ``tool_calls``).
        turns: the assistant turns, in order.
        calls: every tool call, in order.
        results: every tool result, in order.
        state: the final environment state: a JSON value, or None.
        sqlite: the path of a final SQLite database, or None.
    """

    messages: tuple[Mapping[str, JSONValue], ...]
    turns: tuple[Turn, ...]
    calls: tuple[ToolCall, ...]
    results: tuple[ToolResult, ...]
    state: JSONValue = None
    sqlite: str | None = None

    @property
    def final_text(self) -> str:
        """The last assistant turn's text ("" without one)."""
        return self.turns[-1].content if self.turns else ""


def is_trajectory(value: Any) -> bool:
    """Whether a response value is in one of the agent shapes (calls, tool results, OpenRLHF steps)."""
    if not isinstance(value, list) or not value:
        return False
    for message in value:
        if not isinstance(message, Mapping):
            return False
        if "tool_calls" in message or "function_call" in message or "action_text" in message:
            return True
        if message.get("role") in _TOOL_ROLES:
            return True
    return False


def parse_trajectory(value: Any, *, state: JSONValue = None, field: str = "response", source: str | None = None,
                     line: int | None = None) -> Trajectory:  # fmt: skip
    """Read `value` (messages or OpenRLHF steps) and `state` into a `Trajectory`.

    Raises:
        SampleFieldError: a message or the state breaks the shapes above (`field` names it).
    """
    where = (source, line)
    if not isinstance(value, list):
        raise _error(f"field {field!r} must be a list of messages, got {type(value).__name__}", field, where)
    messages = _openrlhf_messages(value) if value and isinstance(value[0], Mapping) and "action_text" in value[0] else value
    normal: list[Mapping[str, JSONValue]] = []
    turns: list[Turn] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    names: dict[str, str] = {}
    for i, message in enumerate(messages):
        path = f"{field}[{i}]"
        if not isinstance(message, Mapping):
            raise _error(f"{path} must be an object (a message), got {type(message).__name__}", path, where)
        role = message.get("role")
        if not isinstance(role, str) or not role:
            # Other roles than `_ROLES` (an "observation", an "environment") are kept as context.
            raise _error(f"{path}.role must be a non-empty string such as {sorted(_ROLES)}, got {role!r}", f"{path}.role", where)
        content = _content(message.get("content"), f"{path}.content", where)
        if role == "assistant":
            turn_calls = _calls(message, len(turns), path, where, content)
            for call in turn_calls:
                if call.id is not None:
                    names[call.id] = call.name
            turns.append(Turn(i, content, turn_calls))
            calls.extend(turn_calls)
            normal.append(_normal_assistant(message, content, turn_calls))
            continue
        if role in _TOOL_ROLES:
            call_id = message.get("tool_call_id")
            if call_id is not None and not isinstance(call_id, str):
                raise _error(f"{path}.tool_call_id must be a string", f"{path}.tool_call_id", where)
            name = message.get("name")
            name = name if isinstance(name, str) else names.get(call_id or "")
            results.append(ToolResult(content, call_id, name, max(len(turns) - 1, 0), _is_error(message, content)))
        normal.append({**message, "content": content})
    return Trajectory(tuple(normal), tuple(turns), tuple(calls), tuple(results), *_state(state, where))


_RESPONSE = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.DOTALL)


def messages_from_text(text: str) -> list[dict[str, JSONValue]]:
    """A decoded multi-turn response (one string, as verl's reward path hands it) as messages:
    each ``<tool_response>...</tool_response>`` block is a tool result and ends the assistant turn
    before it; the text between blocks is the next assistant turn (its ``<tool_call>`` blocks are
    read as calls)."""
    messages: list[dict[str, JSONValue]] = []
    start = 0
    for match in _RESPONSE.finditer(text):
        before = text[start : match.start()]
        if before.strip() or not messages:
            messages.append({"role": "assistant", "content": before})
        messages.append({"role": "tool", "content": match.group(1)})
        start = match.end()
    rest = text[start:]
    if rest.strip() or not messages:
        messages.append({"role": "assistant", "content": rest})
    return messages


def _openrlhf_messages(steps: list[Any]) -> list[Mapping[str, JSONValue]]:
    """OpenRLHF agent steps as messages: the action is the assistant's, the feedback a tool result."""
    out: list[Mapping[str, JSONValue]] = []
    for step in steps:
        if not isinstance(step, Mapping):
            out.append(step)  # reported with its index by the caller
            continue
        out.append({"role": "assistant", "content": step.get("action_text", "")})
        feedback = step.get("environment_feedback")
        if feedback not in (None, ""):
            out.append({"role": "tool", "content": feedback})
    return out


def _content(value: JSONValue, path: str, where: tuple[str | None, int | None]) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # multi-part content: the text parts
        return "".join(p.get("text", "") for p in value if isinstance(p, Mapping) and isinstance(p.get("text", ""), str))
    raise _error(f"{path} must be a string, a list of parts or null, got {type(value).__name__}", path, where)


def _calls(message: Mapping[str, JSONValue], turn: int, path: str, where: tuple[str | None, int | None],
           content: str) -> tuple[ToolCall, ...]:  # fmt: skip
    raw = message.get("tool_calls")
    if raw is not None:
        if not isinstance(raw, list):
            raise _error(f"{path}.tool_calls must be a list", f"{path}.tool_calls", where)
        return tuple(_openai_call(c, turn, f"{path}.tool_calls[{k}]", where) for k, c in enumerate(raw))
    legacy = message.get("function_call")
    if legacy is not None:
        return (_function(legacy, turn, None, f"{path}.function_call", where),)
    return tuple(_hermes_call(m.group(1), turn) for m in _HERMES.finditer(content))


def _openai_call(call: Any, turn: int, path: str, where: tuple[str | None, int | None]) -> ToolCall:
    if not isinstance(call, Mapping):
        raise _error(f"{path} must be an object", path, where)
    call_id = call.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise _error(f"{path}.id must be a string", f"{path}.id", where)
    function = call.get("function", call)  # some loops flatten {"name", "arguments"} into the call
    return _function(function, turn, call_id, f"{path}.function" if "function" in call else path, where)


def _function(function: Any, turn: int, call_id: str | None, path: str, where: tuple[str | None, int | None]) -> ToolCall:
    if not isinstance(function, Mapping):
        raise _error(f"{path} must be an object with 'name' and 'arguments'", path, where)
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise _error(f"{path}.name must be a non-empty string", f"{path}.name", where)
    arguments, error = _arguments(function.get("arguments", {}))
    return ToolCall(name, arguments, call_id, turn, error)


def _arguments(raw: JSONValue) -> tuple[Mapping[str, JSONValue], str | None]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            return {}, f"arguments are not JSON: {exc}"
    if not isinstance(raw, Mapping):
        return {}, f"arguments must be a JSON object, got {type(raw).__name__}"
    return dict(raw), None


def _hermes_call(text: str, turn: int) -> ToolCall:
    try:
        payload = json.loads(text)
    except ValueError as exc:
        return ToolCall("", {}, None, turn, f"<tool_call> is not JSON: {exc}")
    if not isinstance(payload, Mapping) or not isinstance(payload.get("name"), str):
        return ToolCall("", {}, None, turn, "<tool_call> must hold an object with a 'name'")
    arguments, error = _arguments(payload.get("arguments", payload.get("parameters", {})))
    return ToolCall(payload["name"], arguments, None, turn, error)


def _normal_assistant(message: Mapping[str, JSONValue], content: str, calls: tuple[ToolCall, ...]) -> dict[str, JSONValue]:
    out: dict[str, JSONValue] = {k: v for k, v in message.items() if k not in ("tool_calls", "function_call")}
    out["content"] = content
    if calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": dict(c.arguments)}} for c in calls
        ]
    return out


def _is_error(message: Mapping[str, JSONValue], content: str) -> bool:
    flag = message.get("is_error", message.get("error"))
    if isinstance(flag, bool):
        return flag
    return content.lstrip().lower().startswith(_ERROR_PREFIXES)


def _state(state: JSONValue, where: tuple[str | None, int | None]) -> tuple[JSONValue, str | None]:
    if state is None:
        return None, None
    if isinstance(state, Mapping) and set(state) == {"sqlite"}:
        path = state["sqlite"]
        if not isinstance(path, str) or not path:
            raise _error("field 'state.sqlite' must be a non-empty path string", "state.sqlite", where)
        return None, path
    if isinstance(state, Mapping | list):
        return state, None
    raise _error(f"field 'state' must be a JSON object or list, or {{'sqlite': path}}, got {type(state).__name__}", "state", where)


def _error(message: str, field: str, where: tuple[str | None, int | None]) -> SampleFieldError:
    return SampleFieldError(message, field=field, source=where[0], line=where[1])


def tool_schemas(tools: Sequence[Any]) -> dict[str, Mapping[str, JSONValue]]:
    """Function schemas by name, from OpenAI ``tools`` (``{"type": "function", "function": {...}}``)
    or bare ``{"name", "parameters"}`` entries (BFCL's ``function`` lists)."""
    out: dict[str, Mapping[str, JSONValue]] = {}
    for tool in tools:
        if isinstance(tool, Mapping):
            spec = tool.get("function", tool)
            if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
                out[spec["name"]] = spec
    return out
