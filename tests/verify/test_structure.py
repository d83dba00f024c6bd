"""JSON, JSON-Schema, tool-call and XML rewards: tables of cases and bad input."""

from __future__ import annotations

import json

import pytest

from rewardlab import Sample, Status, registry
from rewardlab.errors import SpecError
from rewardlab.verify.structure import (
    JSONSchemaValid,
    JSONValid,
    ToolCallMatch,
    XMLWellFormed,
    find_json,
)

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def score(reward, response, reference=None, **meta):
    return reward.score(Sample(response=response, reference=reference, meta=meta))


@pytest.mark.parametrize(
    ("text", "locate", "expected"),
    [
        ('{"a": 1}', "whole", {"a": 1}),
        ('Here: ```json\n{"a": 2}\n``` done', "fenced", {"a": 2}),
        ('prefix {"a": 3} suffix', "anywhere", {"a": 3}),
        ("list [1, 2] here", "anywhere", [1, 2]),
    ],
)
def test_find_json_table(text, locate, expected):
    assert find_json(text, locate=locate) == expected


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        ('{"a": 1}', {}, 1.0),
        ("{'a': 1}", {}, 0.0),  # Python dict syntax is not JSON
        ('{"a": 1', {}, 0.0),
        ("[1, 2]", {"top_level": "object"}, 0.0),
        ('text {"a": 1}', {}, 0.0),  # whole-response JSON by default
        ('text {"a": 1}', {"locate": "anywhere"}, 1.0),
    ],
)
def test_json_valid_table(text, kwargs, expected):
    assert score(JSONValid(**kwargs), text).score == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"name": "Ada", "age": 36}', 1.0),
        ('{"name": "Ada", "age": -1}', 0.0),
        ('{"name": "Ada"}', 0.0),
        ('{"name": "Ada", "age": 36, "x": 1}', 0.0),
        ("not json", 0.0),
    ],
)
def test_json_schema_table(text, expected):
    assert score(JSONSchemaValid(schema=SCHEMA), text).score == expected


def test_json_schema_partial_counts_violations():
    result = score(JSONSchemaValid(schema=SCHEMA, partial=True), '{"name": 5, "age": -1}')
    assert result.info["violations"] == 2
    assert result.score == pytest.approx(1 / 3)


def test_json_schema_from_row_and_invalid_row_schema():
    assert score(JSONSchemaValid(), '{"name": "x", "age": 1}', schema=SCHEMA).score == 1.0
    bad = score(JSONSchemaValid(), '{"a": 1}', schema={"type": "no-such-type"})
    assert bad.status is Status.ERROR and bad.error.kind == "invalid_input"
    missing = score(JSONSchemaValid(), '{"a": 1}')
    assert missing.status is Status.ERROR and "schema" in missing.error.message


def test_invalid_schema_param_fails_when_spec_is_built():
    with pytest.raises(SpecError, match="invalid JSON schema"):
        registry.create("structure.json_schema", {"schema": {"type": 12}})


GOLD = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "C"}}


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (json.dumps(GOLD), 1.0),
        ('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "unit": "C"}}</tool_call>', 1.0),
        # right name, right keys, one of two values right: 0.2 + 0.3 + 0.5 * 0.5
        ('{"name": "get_weather", "arguments": {"city": "Paris", "unit": "F"}}', 0.75),
        # right name, keys {city} vs {city, unit}: Jaccard 0.5; values 1/2
        ('{"name": "get_weather", "arguments": {"city": "Paris"}}', 0.2 + 0.15 + 0.25),
        ('{"name": "get_time", "arguments": {"city": "Paris", "unit": "C"}}', 0.0),
        ("I will not call a tool", 0.0),
        # an extra call halves the credit
        (json.dumps([GOLD, {"name": "noop", "arguments": {}}]), 0.5),
    ],
)
def test_tool_call_partial_credit_table(response, expected):
    assert score(ToolCallMatch(), response, GOLD).score == pytest.approx(expected)


def test_tool_call_openai_message_format_and_string_arguments():
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "C"}'}}],
    }
    assert ToolCallMatch().score(Sample(response=[message], reference=GOLD)).score == 1.0


def test_tool_call_strict_mode():
    partial = '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "F"}}'
    assert score(ToolCallMatch(partial=False), partial, GOLD).score == 0.0
    assert score(ToolCallMatch(partial=False), json.dumps(GOLD), GOLD).score == 1.0


def test_tool_call_bad_reference_is_error():
    result = score(ToolCallMatch(), json.dumps(GOLD), {"arguments": {}})
    assert result.status is Status.ERROR and result.error.kind == "invalid_input"


@pytest.mark.parametrize(
    ("text", "root", "expected"),
    [
        ("<a><b>1</b></a>", None, 1.0),
        ("<a><b>1</a></b>", None, 0.0),
        ("```xml\n<r x='1'/>\n```", "r", 1.0),
        ("<a/>", "r", 0.0),
        ("plain text", None, 0.0),
    ],
)
def test_xml_table(text, root, expected):
    assert score(XMLWellFormed(root=root), text).score == expected


def test_xml_entity_bomb_is_rejected_not_expanded():
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
        + "".join(f'<!ENTITY {c} "{("&" + p + ";") * 10}">' for p, c in zip("abcdefgh", "bcdefghi", strict=True))
        + "]><l>&i;</l>"
    )
    result = score(XMLWellFormed(), bomb)
    assert result.status is Status.OK and result.score == 0.0


def test_xml_with_a_lone_surrogate_is_not_well_formed_not_a_crash():
    # XML's Char production excludes the surrogate block; expat gets UTF-8, which has no code for one.
    result = score(XMLWellFormed(), "<a>cut \ud83d</a>")
    assert result.status is Status.OK and result.score == 0.0
    assert result.info["reason"] == "not well-formed: a lone surrogate (U+D83D at position 7) is not an XML character"


@pytest.mark.parametrize("locate", ["whole", "anywhere"])
def test_json_nested_deeper_than_the_parser_goes_is_not_a_crash(locate):
    bomb = "[" * 5000 + "]" * 5000  # RFC 8259, 9: a parser may limit the depth; Python's json does
    result = score(JSONValid(locate=locate), bomb)
    assert result.status is Status.OK
    if locate == "whole":
        assert result.score == 0.0 and result.info["reason"] == "the JSON is nested too deeply to parse"
    else:  # a complete value starts at an inner bracket
        assert result.score == 1.0


@pytest.mark.parametrize("response", ["[1," * 100_000, '{"a":' * 100_000, "[" * 100_000 + "]" * 100_000])
def test_the_anywhere_search_gives_up_within_its_budget_as_an_error(response):
    # Each start of an unclosed bracket is parsed to the end of the text: n^2 work without a budget.
    result = score(JSONValid(locate="anywhere"), response)
    assert result.status is Status.ERROR and result.error.kind == "unsupported"
    assert "search budget" in result.error.message


def test_the_anywhere_search_still_finds_a_value_after_unclosed_brackets():
    assert score(JSONValid(locate="anywhere"), "[1," * 2000 + ' so {"ok": 1}').score == 1.0
