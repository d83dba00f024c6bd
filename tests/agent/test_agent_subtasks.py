"""`agent.subtasks` (weights, dependencies) and `agent.terms` (turns, errors, repeats, budget)."""

from __future__ import annotations

from typing import Any

import pytest

from rewardlab.agent.subtasks import Subtasks, TrajectoryTerms
from rewardlab.core.sample import Sample
from rewardlab.errors import ConfigError


def _call(i: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "function": {"name": name, "arguments": args}}]}


RESPONSE = [
    _call(0, "login", {"user": "ana"}),
    {"role": "tool", "tool_call_id": "c0", "content": "Error: wrong password"},
    _call(1, "login", {"user": "ana"}),
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    _call(2, "cancel", {"order": "A"}),
    {"role": "tool", "tool_call_id": "c2", "content": "cancelled"},
    {"role": "assistant", "content": "Your order A is cancelled."},
]
STATE = {"orders": {"A": "cancelled", "B": "pending"}}
SUBTASKS = [
    {"name": "login", "weight": 1, "check": {"call": {"name": "login", "arguments": {"user": "ana"}}}},
    {"name": "cancel", "weight": 2, "after": ["login"], "check": {"state": {"path": "orders.A", "value": "cancelled"}}},
    {"name": "cancel_b", "weight": 2, "after": ["login"], "check": {"state": {"path": "orders.B", "value": "cancelled"}}},
    {"name": "tell", "weight": 1, "after": ["cancel"], "check": {"says": "is cancelled"}},
]


def _sample(subtasks: Any = SUBTASKS, response: Any = RESPONSE) -> Sample:
    return Sample.from_dict({"response": response, "state": STATE, "reference": {"subtasks": subtasks}})


def test_weighted_credit_by_hand() -> None:
    result = Subtasks().score(_sample())
    # login 1 (w1) + cancel 1 (w2) + cancel_b 0 (w2) + tell 1 (w1) = 4 / 6
    assert result.score == pytest.approx(4 / 6)
    assert {k: v.score for k, v in result.components.items()} == {"login": 1.0, "cancel": 1.0, "cancel_b": 0.0, "tell": 1.0}


def test_a_failed_prerequisite_zeroes_its_dependants_transitively() -> None:
    no_login = [m for m in RESPONSE if m.get("tool_calls", [{}])[0].get("function", {}).get("name") != "login"]
    result = Subtasks().score(_sample(response=no_login))
    assert {k: v.score for k, v in result.components.items()} == {"login": 0.0, "cancel": 0.0, "cancel_b": 0.0, "tell": 0.0}
    assert result.components["tell"].info["own"] == 1.0  # it did say so, but its prerequisite failed
    assert {z["subtask"] for z in result.info["zeroed"]} == {"cancel", "tell"}


def test_subtasks_in_the_options_are_checked_at_construction() -> None:
    assert Subtasks(subtasks=SUBTASKS).score(_sample(subtasks=None)).score == pytest.approx(4 / 6)
    cyclic = [{"name": "a", "after": ["b"], "check": {"says": "x"}}, {"name": "b", "after": ["a"], "check": {"says": "y"}}]
    with pytest.raises(ConfigError, match="cycle"):
        Subtasks(subtasks=cyclic)
    with pytest.raises(ConfigError, match="unknown"):
        Subtasks(subtasks=[{"name": "a", "after": ["zz"], "check": {"says": "x"}}])
    with pytest.raises(ConfigError, match="exactly one"):
        Subtasks(subtasks=[{"name": "a", "check": {"says": "x", "call": {"name": "f"}}}])


def test_bad_subtasks_in_a_reference_are_an_invalid_input_error() -> None:
    result = Subtasks().score(_sample(subtasks=[{"name": "a", "weight": -1, "check": {"says": "x"}}]))
    assert result.status == "error" and result.error is not None and result.error.kind == "invalid_input"


def test_trajectory_terms_count_and_penalise() -> None:
    result = TrajectoryTerms(max_calls=2).score(_sample())
    counts = {k: v.score for k, v in result.components.items()}
    assert counts == {"turns": 4.0, "calls": 3.0, "tool_errors": 1.0, "repeated_calls": 1.0, "malformed_calls": 0.0, "over_budget": 1.0}
    assert result.score == 0.0  # 0.1 + 0.1 + 1.0 over budget
    assert TrajectoryTerms().score(_sample()).score == pytest.approx(0.8)


def test_trajectory_terms_options_are_checked() -> None:
    with pytest.raises(ConfigError):
        TrajectoryTerms(error_weight=-1)
    with pytest.raises(ConfigError):
        TrajectoryTerms(max_turns=1.5)  # type: ignore[arg-type]
