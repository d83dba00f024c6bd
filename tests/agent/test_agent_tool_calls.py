"""`agent.tool_calls`: (gold, calls, expected components) tables and one test per rule."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rewardlab.agent.tool_calls import ToolCalls
from rewardlab.core.sample import Sample
from rewardlab.errors import ConfigError

TOOLS = [{"type": "function", "function": {"name": "book", "parameters": {
    "type": "object", "required": ["city"],
    "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}, "price": {"type": "number"},
                   "tags": {"type": "array", "items": {"type": "string"}}}}}}]  # fmt: skip


def _sample(calls: list[tuple[str, Any]], gold: list[dict[str, Any]], **reference: Any) -> Sample:
    tool_calls = [{"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a if isinstance(a, str) else json.dumps(a)}}
                  for i, (n, a) in enumerate(calls)]  # fmt: skip
    response = [{"role": "assistant", "content": None, "tool_calls": tool_calls}] if tool_calls else [{"role": "assistant", "content": "done"}, {"role": "tool", "content": ""}]
    return Sample.from_dict({"response": response, "reference": {"calls": gold, "tools": TOOLS, **reference}})


GOLD = [{"name": "book", "arguments": {"city": "Paris", "nights": 2, "price": 99.5}, "optional": ["price"]}]

CASES = [
    # (calls, expected exact, expected arguments credit, a problem the info names)
    ([("book", {"city": "Paris", "nights": 2, "price": 99.5})], 1.0, 1.0, None),
    ([("book", {"city": "Paris", "nights": 2})], 1.0, 1.0, None),  # optional left out
    ([("book", {"nights": 2})], 0.0, 0.5 + 0.5 * 2 / 3, "missing argument 'city'"),
    ([("book", {"city": "Paris", "nights": "2"})], 0.0, 0.5 + 0.5 * 2 / 3, "wrong type for 'nights'"),
    ([("book", {"city": "Paris", "nights": 2.0})], 0.0, 0.5 + 0.5 * 2 / 3, "wrong type for 'nights'"),  # integer declared
    ([("book", {"city": "Paris", "nights": True})], 0.0, 0.5 + 0.5 * 2 / 3, "wrong type for 'nights'"),
    ([("book", {"city": "Rome", "nights": 2})], 0.0, 0.5 + 0.5 * 2 / 3, "wrong value for 'city'"),
    ([("book", {"city": "Paris", "nights": 2, "pets": 1})], 0.0, 0.5 + 0.5 * 3 / 4, "unexpected argument 'pets'"),
    ([("hotel", {"city": "Paris", "nights": 2})], 0.0, 0.0, None),
    ([("book", "{broken")], 0.0, 0.0, "arguments are not JSON"),
    ([], 0.0, 0.0, None),
    ([("book", {"city": "Paris", "nights": 2}), ("book", {"city": "Paris", "nights": 2})], 0.0, 0.5, None),
]


@pytest.mark.parametrize(("calls", "exact", "partial", "problem"), CASES)
def test_tool_call_components(calls: list[tuple[str, Any]], exact: float, partial: float, problem: str | None) -> None:
    result = ToolCalls().score(_sample(calls, GOLD))
    assert result.status == "ok"
    assert result.components["exact"].score == exact and result.score == exact
    assert result.components["arguments"].score == pytest.approx(partial)
    if problem:
        assert any(problem in p for p in result.info["per_call"][0]["problems"])


def test_numbers_within_tolerance_match() -> None:
    gold = [{"name": "book", "arguments": {"city": "Paris", "price": 99.5}}]
    calls = [("book", {"city": "Paris", "price": 99.52})]
    assert ToolCalls().score(_sample(calls, gold)).score == 0.0
    assert ToolCalls(abs_tol=0.05).score(_sample(calls, gold)).score == 1.0
    assert ToolCalls(rel_tol=1e-3).score(_sample(calls, gold)).score == 1.0


@pytest.mark.parametrize(("strings", "value", "expected"), [("exact", "paris", 0.0), ("casefold", " PARIS ", 1.0),
                                                            ("casefold", "Pa-ris", 0.0), ("loose", "Pa-ris.", 1.0)])  # fmt: skip
def test_string_modes(strings: Any, value: str, expected: float) -> None:
    gold = [{"name": "book", "arguments": {"city": "Paris"}}]
    assert ToolCalls(strings=strings).score(_sample([("book", {"city": value})], gold)).score == expected


def test_one_of_and_nested_objects() -> None:
    gold = [{"name": "f", "arguments": {"when": {"$one_of": ["today", "2026-01-01"]},
                                        "opts": {"$object": {"a": 1, "b": [1, 2]}, "$optional": ["b"]}}}]  # fmt: skip
    assert ToolCalls().score(_sample([("f", {"when": "2026-01-01", "opts": {"a": 1}})], gold)).score == 1.0
    assert ToolCalls().score(_sample([("f", {"when": "today", "opts": {"a": 1, "b": [2, 1]}})], gold)).score == 0.0
    assert ToolCalls().score(_sample([("f", {"when": "today", "opts": {"a": 1, "c": 0}})], gold)).score == 0.0


def test_order_insensitive_by_default_and_ordered_on_request() -> None:
    gold = [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]
    swapped = [("b", {}), ("a", {})]
    assert ToolCalls().score(_sample(swapped, gold)).score == 1.0
    assert ToolCalls(ordered=True).score(_sample(swapped, gold)).score == 0.0
    assert ToolCalls().score(_sample(swapped, gold, ordered=True)).score == 0.0  # the reference says so


def test_unordered_matching_finds_a_pairing_greedy_search_misses() -> None:
    # The first gold call accepts either city; taken greedily by the first call, the second
    # gold call would be left without its only match.
    gold = [{"name": "f", "arguments": {"city": {"$one_of": ["Paris", "Rome"]}}}, {"name": "f", "arguments": {"city": "Paris"}}]
    result = ToolCalls().score(_sample([("f", {"city": "Paris"}), ("f", {"city": "Rome"})], gold))
    assert result.score == 1.0


def test_f1_counts_extra_and_missing_calls() -> None:
    gold = [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]
    result = ToolCalls(score="f1").score(_sample([("a", {}), ("c", {}), ("d", {})], gold))
    assert result.score == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert sorted(result.info["extra_calls"]) == ["c", "d"] and result.info["missed_gold"] == ["b"]


def test_missing_gold_is_an_error_not_a_zero() -> None:
    sample = Sample.from_dict({"response": [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}]})
    result = ToolCalls().score(sample)
    assert result.status == "error" and result.error is not None and result.error.kind == "invalid_input"


def test_bad_gold_is_an_invalid_input_error() -> None:
    result = ToolCalls().score(_sample([("f", {})], [{"arguments": {}}]))
    assert result.status == "error" and "name" in str(result.error)


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(ConfigError):
        ToolCalls(score="most")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        ToolCalls(rel_tol=-1.0)
