"""Tool-call arguments written as Java or JavaScript source text (`agent.literals`), and
`agent.tool_calls` with ``encoding = "java" | "javascript"``."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rewardlab
from rewardlab.agent.literals import decode
from rewardlab.errors import SpecError


def _java(text: str, kind: str, items: str | None = None) -> Any:
    return decode(text, {"type": kind, **({"items": {"type": items}} if items else {})}, "java")


def _js(text: str, kind: str, items: str | None = None) -> Any:
    return decode(text, {"type": kind, **({"items": {"type": items}} if items else {})}, "javascript")


def test_java_numbers_follow_java_literals_and_widening() -> None:
    assert (_java("42", "integer"), _java("42L", "long"), _java("42", "long")) == (42, 42, 42)  # an int widens to long
    assert _java("42L", "integer") == "42L"  # a long does not narrow: kept as text
    assert (_java("1.5f", "float"), _java("2", "float"), _java("1.5", "float")) == (1.5, 2.0, "1.5")  # a double is no float
    assert (_java("0.5", "double"), _java("0.5d", "double"), _java("1e3", "double"), _java("2", "double")) == (0.5, 0.5, 1000.0, 2.0)
    assert (_java("true", "boolean"), _java("isEnabled", "boolean")) == (True, "isEnabled")  # a variable stays text
    assert (_java("'c'", "char"), _java("c", "char")) == ("c", "c")


def test_java_strings_are_their_text_and_collections_are_read_with_nesting() -> None:
    assert _java("SELECT * FROM t WHERE a = 'x'", "String") == "SELECT * FROM t WHERE a = 'x'"
    assert _java('new String[]{"a, b", "c"}', "Array", "String") == ["a, b", "c"]  # a quoted comma is no separator
    assert _java("new long[] {1, 2L}", "Array", "long") == [1, 2]  # array elements widen like scalars
    assert _java("new ArrayList<Long>(Arrays.asList(1L, 2))", "ArrayList", "long") == [1, "2"]  # boxed: an int is no Long
    assert _java("List.of(1.5, 2d, 3, 4f)", "ArrayList", "double") == [1.5, 2.0, "3", "4f"]  # nor a Double
    assert _java("new double[]{1.5, 3, 4f}", "Array", "double") == [1.5, 3.0, 4.0]
    assert _java('new ArrayList<>() {{ add("x"); add("y"); }}', "ArrayList", "String") == ["x", "y"]
    assert _java("List.of(1, 2)", "ArrayList", "integer") == [1, 2]
    assert _java("new ArrayList<>()", "ArrayList") == []
    text = 'new HashMap<String, Object>() {{ put("limit", 50); put("tags", Arrays.asList("a", "b")); put("on", true); }}'
    assert _java(text, "HashMap") == {"limit": 50, "tags": ["a", "b"], "on": True}
    assert _java('Map.of("k", 1.5f)', "HashMap") == {"k": 1.5}
    assert _java("new ArrayList<>(Arrays.asList(\"id\", 42, config.get()))", "ArrayList", "any") == ["id", 42, "config.get()"]
    assert _java("existingMap", "HashMap") == "existingMap"  # a variable name stays text
    assert _java("new HashMap<>(16)", "HashMap") == "new HashMap<>(16)"  # a capacity is no content: text


def test_javascript_literals() -> None:
    assert (_js("7", "integer"), _js("7.5", "integer"), _js("3", "float"), _js("9.81", "float"), _js("12n", "Bigint")) == (7, "7.5", 3.0, 9.81, 12)
    assert (_js("'quoted'", "String"), _js("plain", "String"), _js("true", "Boolean")) == ("quoted", "plain", True)
    assert _js("[[1, 2], [3, 4]]", "array", "array") == [[1, 2], [3, 4]]
    assert _js("new Array('a', \"b, c\")", "array", "String") == ["a", "b, c"]
    text = "{method: 'GET', headers: {'Content-Type': \"json\"}, retries: [1, 2], cb: handle(x, y), on: false}"
    assert _js(text, "dict") == {"method": "GET", "headers": {"Content-Type": "json"}, "retries": [1, 2], "cb": "handle(x, y)", "on": False}
    assert _js("{}", "dict") == {} and _js("[]", "array") == []
    assert _js("[1, 2", "array") == "[1, 2"  # unbalanced: text


TOOLS = [{"name": "schedule", "parameters": {"type": "dict", "required": ["delay", "tags"], "properties": {
    "delay": {"type": "long"}, "tags": {"type": "ArrayList", "items": {"type": "String"}}, "label": {"type": "String"}}}}]  # fmt: skip
GOLD = {"calls": [{"name": "schedule", "arguments": {"delay": 30, "tags": ["a", "b"], "label": "nightly"}, "optional": ["label"]}],
        "tools": TOOLS}  # fmt: skip


def _row(arguments: dict[str, Any], reference: dict[str, Any] = GOLD) -> dict[str, Any]:
    call = {"id": "c", "type": "function", "function": {"name": "schedule", "arguments": json.dumps(arguments)}}
    return {"response": [{"role": "assistant", "content": None, "tool_calls": [call]}], "reference": reference}


def test_tool_calls_reads_java_source_text_by_the_declared_types() -> None:
    spec = {"reward": {"name": "r", "components": [
        {"name": "calls", "use": "agent.tool_calls", "params": {"encoding": "java", "strings": "loose"}}]}}  # fmt: skip
    rows = [
        _row({"delay": "30L", "tags": 'new ArrayList<>(Arrays.asList("a", "b"))', "label": "Nightly"}),
        _row({"delay": "30", "tags": 'new ArrayList<String>() {{ add("a"); add("b"); }}'}),
        _row({"delay": 30, "tags": 'List.of("a", "b")'}),  # a JSON number, not source text
        _row({"delay": "31L", "tags": 'List.of("a", "b")'}),
    ]
    results = rewardlab.score(spec, rows)
    assert [r.score for r in results] == [1.0, 1.0, 0.0, 0.0]
    assert results[2].components["calls"].info["per_call"][0]["problems"] == ["wrong type for 'delay'"]
    assert results[3].components["calls"].info["per_call"][0]["problems"] == ["wrong value for 'delay'"]
    # the same calls as JSON values (the default) do not read the text
    default = rewardlab.score({"reward": {"name": "r", "components": [{"name": "calls", "use": "agent.tool_calls"}]}}, rows[:1])
    assert default[0].score == 0.0


def test_a_reference_sets_the_encoding_and_a_bad_one_is_an_error() -> None:
    spec = {"reward": {"name": "r", "components": [{"name": "calls", "use": "agent.tool_calls"}]}}
    good = _row({"delay": "30L", "tags": "List.of(\"a\", \"b\")"}, {**GOLD, "encoding": "java"})
    bad = _row({"delay": "30L", "tags": "List.of(\"a\", \"b\")"}, {**GOLD, "encoding": "kotlin"})
    results = rewardlab.score(spec, [good, bad])
    assert results[0].score == 1.0
    assert results[1].status == "error" and "reference.encoding" in str(results[1].error)
    with pytest.raises(SpecError, match="encoding"):
        rewardlab.build({"reward": {"name": "r", "components": [{"name": "c", "use": "agent.tool_calls", "params": {"encoding": "kotlin"}}]}})


def test_hostile_nesting_and_length_are_refused_as_text_in_bounded_time() -> None:
    """A policy's argument nested deeper than any call needs (or longer than the reader reads)
    stays its text: no RecursionError, and no time spent backtracking through it."""
    import time

    for text in ("[" * 5000 + "]" * 5000, "{" * 5000 + "}" * 5000, "[" + "[1]," * 200_000 + "[1]]"):
        started = time.monotonic()
        assert decode(text, {"type": "array"}, "javascript") == text
        assert time.monotonic() - started < 2.0
    nested = "[" * 20 + "1" + "]" * 20  # nesting any real call uses is read
    assert decode(nested, {"type": "array"}, "javascript") != nested
