"""`Sample.from_dict` reads agent trajectories once, in every shape trainers produce."""

from __future__ import annotations

from typing import Any

import pytest

from rewardlab.core.sample import Sample
from rewardlab.errors import SampleFieldError

OPENAI = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "18C"},
    {"role": "assistant", "content": "It is 18C."},
]  # fmt: skip


def test_openai_messages_give_turns_calls_and_results() -> None:
    trajectory = Sample.from_dict({"response": OPENAI}).trajectory
    assert [t.message for t in trajectory.turns] == [1, 3]
    (call,) = trajectory.calls
    assert (call.name, dict(call.arguments), call.id, call.turn, call.error) == ("get_weather", {"city": "Paris"}, "c1", 0, None)
    (result,) = trajectory.results
    assert (result.content, result.name, result.error) == ("18C", "get_weather", False)
    assert trajectory.final_text == "It is 18C."


def test_arguments_given_as_an_object_read_like_a_json_string() -> None:
    as_object: list[dict[str, Any]] = [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]}]
    as_string: list[dict[str, Any]] = [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": '{"x": 1}'}}]}]
    assert Sample.from_dict({"response": as_object}).trajectory.calls == Sample.from_dict({"response": as_string}).trajectory.calls


def test_legacy_function_call_and_function_role() -> None:
    messages = [{"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
                {"role": "function", "name": "f", "content": "Error: no such thing"}]  # fmt: skip
    trajectory = Sample.from_dict({"response": messages}).trajectory
    assert trajectory.calls[0].name == "f" and trajectory.results[0].error


def test_hermes_tool_call_text_is_read_as_calls() -> None:
    text = 'Let me look.<tool_call>\n{"name": "search", "arguments": {"q": "tau"}}\n</tool_call>'
    messages = [{"role": "assistant", "content": text}, {"role": "tool", "content": "found"}]
    (call,) = Sample.from_dict({"response": messages}).trajectory.calls
    assert (call.name, dict(call.arguments)) == ("search", {"q": "tau"})
    assert Sample.from_dict({"response": text}).trajectory.calls[0].name == "search"  # a plain string response too


def test_openrlhf_agent_steps_become_messages() -> None:
    steps = [{"action_text": '<tool_call>{"name": "f", "arguments": {}}</tool_call>', "environment_feedback": "done"},
             {"action_text": "All set.", "environment_feedback": ""}]  # fmt: skip
    sample = Sample.from_dict({"response": steps})
    assert [m["role"] for m in sample.response] == ["assistant", "tool", "assistant"]  # type: ignore[index]
    assert sample.trajectory.calls[0].name == "f" and sample.response_text == "All set."


def test_malformed_arguments_are_the_policys_mistake_not_bad_data() -> None:
    messages = [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{not json"}}]}]
    (call,) = Sample.from_dict({"response": messages}).trajectory.calls
    assert call.arguments == {} and call.error is not None and "not JSON" in call.error


@pytest.mark.parametrize(
    ("response", "field"),
    [
        ([{"role": "assistant", "tool_calls": {"name": "f"}}], "response[0].tool_calls"),
        ([{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}], "response[0].tool_calls[0].function.name"),
        ([{"role": "assistant", "tool_calls": [{"id": 3, "function": {"name": "f"}}]}], "response[0].tool_calls[0].id"),
        ([{"role": 5, "content": "x"}, {"role": "tool", "content": "y"}], "response[0].role"),
        ([{"role": "tool", "content": 5}], "response[0].content"),
        ([{"role": "tool", "tool_call_id": 1, "content": ""}], "response[0].tool_call_id"),
    ],
)
def test_a_broken_trajectory_names_the_field(response: Any, field: str) -> None:
    with pytest.raises(SampleFieldError) as caught:
        Sample.from_dict({"response": response}, source="rollouts.jsonl", line=7)
    assert caught.value.field == field and "rollouts.jsonl:7" in str(caught.value)


def test_a_mapped_response_column_is_named_in_the_error() -> None:
    with pytest.raises(SampleFieldError) as caught:
        Sample.from_dict({"completion": [{"role": "assistant", "tool_calls": 3}]}, fields={"response": "completion"})
    assert caught.value.field == "completion[0].tool_calls"


def test_state_is_a_json_value_or_a_sqlite_path() -> None:
    json_state = Sample.from_dict({"response": OPENAI, "state": {"orders": {"A": "cancelled"}}}).trajectory
    assert json_state.state == {"orders": {"A": "cancelled"}} and json_state.sqlite is None
    db_state = Sample.from_dict({"response": OPENAI, "state": {"sqlite": "final.db"}}).trajectory
    assert db_state.sqlite == "final.db" and db_state.state is None
    with pytest.raises(SampleFieldError) as caught:
        Sample.from_dict({"response": OPENAI, "state": 3})
    assert caught.value.field == "state"
    with pytest.raises(SampleFieldError) as caught:
        Sample.from_dict({"response": OPENAI, "state": {"sqlite": ""}})
    assert caught.value.field == "state.sqlite"


def test_chat_rows_without_tool_calls_are_unchanged() -> None:
    row = {"response": [{"role": "assistant", "content": "hi"}], "state": "CA"}  # a 'state' column of another meaning
    sample = Sample.from_dict(row)
    assert sample.response == row["response"] and sample.meta["state"] == "CA"


def test_a_decoded_multi_turn_string_is_split_at_its_tool_responses() -> None:
    # What verl's reward path decodes from a Qwen/Hermes multi-turn rollout (special tokens skipped).
    text = ('<tool_call>\n{"name": "find", "arguments": {"q": "A"}}\n</tool_call>\nuser\n<tool_response>\nfound A\n</tool_response>\n'
            'assistant\n<tool_call>\n{"name": "cancel", "arguments": {"id": "A"}}\n</tool_call>\nuser\n'
            '<tool_response>\nError: not pending\n</tool_response>\nassistant\nSorry, A cannot be cancelled.')
    trajectory = Sample(response=text).trajectory
    assert [(c.name, c.turn) for c in trajectory.calls] == [("find", 0), ("cancel", 1)]
    assert [(r.content, r.error) for r in trajectory.results] == [("found A", False), ("Error: not pending", True)]
    assert trajectory.final_text.endswith("Sorry, A cannot be cancelled.") and len(trajectory.turns) == 3
