"""Berkeley Function Calling Leaderboard material as `agent.tool_calls` references.

BFCL's possible answers list, per call, ``{function: {param: [allowed values]}}``, where ``""``
among the allowed values marks an optional parameter; a dict value's allowed values are dicts
whose own values are lists of allowed values, the same way down. `gold_from_bfcl` turns that
into rewardlab's gold calls (`agent.matching`); `reference_from_bfcl` adds the functions (their
types are checked), the order rule (BFCL's ``parallel`` categories are order-insensitive) and,
for the Java and JavaScript categories, the encoding of argument values as source text.

The conventions where rewardlab's verdict may differ from BFCL's checker are listed in
docs/agents.md ("Agreement with BFCL").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# BFCL's dict and list types, in its Python, Java and JavaScript categories
_DICTS = frozenset({"dict", "object", "HashMap", "Hashtable"})
_LISTS = frozenset({"array", "tuple", "Array", "ArrayList"})


def gold_from_bfcl(ground_truth: list[Mapping[str, Any]], functions: list[Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Gold calls from BFCL's ``ground_truth`` list (one ``{name: {param: [allowed]}}`` per call)."""
    schemas = {f["name"]: f for f in functions or [] if isinstance(f, Mapping) and "name" in f}
    calls = []
    for entry in ground_truth:
        ((name, params),) = entry.items()
        properties = schemas.get(name, {}).get("parameters", {}).get("properties", {})
        arguments: dict[str, Any] = {}
        optional = []
        for param, allowed in params.items():
            if "" in allowed:
                optional.append(param)
            declared = properties.get(param, {})
            arguments[param] = {"$one_of": [_value(a, declared) for a in allowed if a != ""]}
        calls.append({"name": name, "arguments": arguments, "optional": optional})
    return calls


def _value(allowed: Any, declared: Mapping[str, Any]) -> Any:
    """One allowed value as an expectation: dicts (and lists of dicts) hold lists of alternatives."""
    kind = declared.get("type")
    if isinstance(allowed, Mapping) and kind in _DICTS:
        return _dict(allowed)
    items = declared.get("items", {})
    if isinstance(allowed, list) and kind in _LISTS and isinstance(items, Mapping) and items.get("type") in _DICTS:
        return [_dict(a) if isinstance(a, Mapping) else a for a in allowed]
    return allowed


def _dict(allowed: Mapping[str, Any]) -> dict[str, Any]:
    keys: dict[str, Any] = {}
    optional = []
    for key, values in allowed.items():
        values = values if isinstance(values, list) else [values]
        if "" in values:
            optional.append(key)
        keys[key] = {"$one_of": [v for v in values if v != ""]}
    return {"$object": keys, "$optional": optional}


def reference_from_bfcl(category: str, ground_truth: list[Mapping[str, Any]], functions: list[Mapping[str, Any]]) -> dict[str, Any]:
    """An `agent.tool_calls` reference for one BFCL entry of `category` (e.g. ``"parallel_multiple"``);
    the ``simple_java`` and ``simple_javascript`` categories take arguments as Java / JavaScript
    source text (``"encoding"``, `agent.literals`)."""
    reference = {"calls": gold_from_bfcl(ground_truth, functions), "tools": list(functions), "ordered": "parallel" not in category}
    if category.endswith("javascript"):
        reference["encoding"] = "javascript"
    elif category.endswith("java"):
        reference["encoding"] = "java"
    return reference
