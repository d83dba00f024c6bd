"""Comparing one tool call with one gold call: name, required and optional arguments, typed values.

A gold call is ``{"name": ..., "arguments": {param: expectation}}``. An expectation is

- a plain JSON value: the argument must equal it (numbers within the tolerances, strings under
  the `ValueRules.strings` mode, lists element by element, objects key by key);
- ``{"$one_of": [expectation, ...]}``: any of them;
- ``{"$object": {key: expectation}, "$optional": [key, ...]}``: an object with those keys, the
  optional ones may be absent.

A gold call's ``"optional": [param, ...]`` lists arguments the call may leave out. With a
function schema (OpenAI ``parameters``), each argument's JSON type is checked too, and the
schema's ``required`` list joins the gold's required arguments; a value equal to a gold value
passes the type check whatever its type (BFCL's rule for variables written as strings).
With ``ValueRules(encoding="java" | "javascript")`` each argument is the source text of a value
in that language, read by its declared type first (`agent.literals`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardlab.agent.literals import ENCODINGS, Encoding, decode, json_view
from rewardlab.core.trajectory import ToolCall
from rewardlab.errors import ConfigError

StringMode = Literal["exact", "casefold", "loose"]
_LOOSE = re.compile(r"[ ,./\-_*^]")  # BFCL's `standardize_string`: these characters are ignored


@dataclass(frozen=True)
class ValueRules:
    """How argument values are compared.

    Attributes:
        strings: "exact"; "casefold" (case and surrounding space ignored); "loose" (also the
            characters `` ,./-_*^`` ignored and ``'`` read as ``"``: BFCL's standardisation).
        rel_tol: relative tolerance for numbers (`math.isclose`).
        abs_tol: absolute tolerance for numbers.
        encoding: how a call writes its argument values: "json" (JSON values), "java" or
            "javascript" (each value the source text of a literal in that language, read by the
            parameter's declared type: `agent.literals`).
    """

    strings: StringMode = "exact"
    rel_tol: float = 0.0
    abs_tol: float = 0.0
    encoding: Encoding = "json"

    def __post_init__(self) -> None:
        if self.strings not in ("exact", "casefold", "loose"):
            raise ConfigError(f"strings must be 'exact', 'casefold' or 'loose', got {self.strings!r}")
        if self.encoding not in ENCODINGS:
            raise ConfigError(f"encoding must be one of {', '.join(ENCODINGS)}, got {self.encoding!r}")
        for name in ("rel_tol", "abs_tol"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not value >= 0 or math.isinf(value):
                raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}")

    def text(self, value: str) -> str:
        if self.strings == "exact":
            return value
        if self.strings == "casefold":
            return value.strip().casefold()
        return _LOOSE.sub("", value).lower().replace("'", '"')


_EXACT = ValueRules()


@dataclass(frozen=True)
class GoldCall:
    """A gold call, read and checked once (see the module docstring)."""

    name: str
    arguments: Mapping[str, Any]
    optional: frozenset[str] = frozenset()
    schema: Mapping[str, Any] | None = None

    @property
    def required(self) -> frozenset[str]:
        listed = (self.schema or {}).get("parameters", {}).get("required", []) if self.schema else []
        # The schema's `required` wins over the gold's `optional`: a call the function would refuse
        # is not correct whatever the gold allows (BFCL's rule too).
        return frozenset(a for a in self.arguments if a not in self.optional) | frozenset(listed)


@dataclass
class CallCheck:
    """How one call compares with one gold call."""

    name: bool
    missing: list[str] = field(default_factory=list)  # required arguments left out
    unexpected: list[str] = field(default_factory=list)  # arguments the gold does not know
    wrong_type: list[str] = field(default_factory=list)
    wrong_value: list[str] = field(default_factory=list)
    malformed: str | None = None  # the call's arguments could not be read
    expected_args: int = 0  # arguments the gold lists (values to check)

    @property
    def correct(self) -> bool:
        return self.name and self.malformed is None and not (self.missing or self.unexpected or self.wrong_type or self.wrong_value)

    @property
    def partial(self) -> float:
        """Partial credit in [0, 1]: name right, then the share of gold arguments given right and
        no unexpected ones (ToolRL's name / parameter-name / value split, averaged)."""
        if not self.name or self.malformed is not None:
            return 0.0
        total = max(self.expected_args + len(self.unexpected), 1)
        bad = len(set(self.missing) | set(self.wrong_type) | set(self.wrong_value)) + len(self.unexpected)
        return (1.0 + max(total - bad, 0) / total) / 2.0

    def problems(self) -> list[str]:
        out = [] if self.name else ["wrong function name"]
        if self.malformed:
            out.append(self.malformed)
        out += [f"missing argument {a!r}" for a in self.missing]
        out += [f"unexpected argument {a!r}" for a in self.unexpected]
        out += [f"wrong type for {a!r}" for a in self.wrong_type]
        out += [f"wrong value for {a!r}" for a in self.wrong_value]
        return out


def read_gold(calls: Any, schemas: Mapping[str, Mapping[str, Any]], where: str = "reference.calls") -> list[GoldCall]:
    """Gold calls from the reference (a list of ``{"name", "arguments", "optional"?}``).

    Raises:
        ValueError: a gold call that breaks the format (the caller makes it `invalid_input`).
    """
    if not isinstance(calls, list):
        raise ValueError(f"{where} must be a list of gold calls")
    out = []
    for i, call in enumerate(calls):
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            raise ValueError(f"{where}[{i}] must be an object with a string 'name'")
        arguments = call.get("arguments", {})
        optional = call.get("optional", [])
        if not isinstance(arguments, Mapping):
            raise ValueError(f"{where}[{i}].arguments must be an object")
        if not (isinstance(optional, list) and all(isinstance(o, str) for o in optional)):
            raise ValueError(f"{where}[{i}].optional must be a list of argument names")
        out.append(GoldCall(call["name"], dict(arguments), frozenset(optional), schemas.get(call["name"])))
    return out


def check_call(call: ToolCall, gold: GoldCall, rules: ValueRules) -> CallCheck:
    """Compare `call` (the candidate) with `gold`."""
    check = CallCheck(name=call.name == gold.name, expected_args=len(gold.arguments))
    if not check.name:
        return check
    if call.error is not None:
        check.malformed = call.error
        return check
    properties = (gold.schema or {}).get("parameters", {}).get("properties") if gold.schema else None
    check.missing = sorted(a for a in gold.required if a not in call.arguments)
    for name, value in call.arguments.items():
        if name not in gold.arguments or (isinstance(properties, Mapping) and name not in properties):
            check.unexpected.append(name)  # the gold does not know it, or the function does not declare it
            continue
        expected = gold.arguments[name]
        declared = properties.get(name) if isinstance(properties, Mapping) else None
        if rules.encoding != "json":
            if not isinstance(value, str):  # every argument is source text in these conventions
                check.wrong_type.append(name)
                continue
            if isinstance(declared, Mapping):
                value, declared = decode(value, declared, rules.encoding), json_view(declared, rules.encoding)
        if isinstance(declared, Mapping) and not type_ok(declared, value):
            if _json_type(value) not in _gold_types(expected):
                check.wrong_type.append(name)
                continue
            # A value of the gold's type where the schema declares another is a name (a variable
            # written as a string): compared exactly, not under the string mode.
            if not matches(expected, value, _EXACT):
                check.wrong_value.append(name)
        elif not matches(expected, value, rules):
            check.wrong_value.append(name)
    return check


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, list | tuple):
        return "array"
    return "object" if isinstance(value, Mapping) else type(value).__name__


def _gold_types(expected: Any) -> set[str]:
    """The JSON types the gold's values have: a value of one of them passes the schema's type
    check (a variable name written as a string where the schema says integer, as BFCL allows)."""
    if isinstance(expected, Mapping) and "$one_of" in expected:
        return set().union(*(_gold_types(e) for e in expected["$one_of"])) if expected["$one_of"] else set()
    if isinstance(expected, Mapping):
        return {"object"}
    return {_json_type(expected)}


def matches(expected: Any, value: Any, rules: ValueRules) -> bool:
    """Whether `value` (the candidate's) meets `expected` (an expectation, see the module docstring)."""
    if isinstance(expected, Mapping):
        if "$one_of" in expected:
            return any(matches(e, value, rules) for e in expected["$one_of"])
        if "$object" in expected:
            return _object(expected["$object"], frozenset(expected.get("$optional", ())), value, rules)
        return _object(expected, frozenset(), value, rules)
    if isinstance(expected, bool) or isinstance(value, bool):
        return type(expected) is type(value) and expected == value
    if isinstance(expected, int | float):
        if not isinstance(value, int | float):
            return False
        return bool(value == expected or math.isclose(value, expected, rel_tol=rules.rel_tol, abs_tol=rules.abs_tol))
    if isinstance(expected, str):
        return isinstance(value, str) and rules.text(value) == rules.text(expected)
    if isinstance(expected, list):
        return (isinstance(value, list | tuple) and len(value) == len(expected)
                and all(matches(e, v, rules) for e, v in zip(expected, value, strict=True)))  # fmt: skip
    return bool(expected is None and value is None)


def _object(expected: Mapping[str, Any], optional: frozenset[str], value: Any, rules: ValueRules) -> bool:
    if not isinstance(value, Mapping):
        return False
    if any(k not in expected for k in value):
        return False
    if any(k not in value and k not in optional for k in expected):
        return False
    return all(matches(expected[k], v, rules) for k, v in value.items())


_TYPES: dict[str, Any] = {
    "string": str, "integer": int, "number": (int, float), "float": (int, float), "boolean": bool,
    "array": (list, tuple), "tuple": (list, tuple), "object": Mapping, "dict": Mapping,
}  # fmt: skip


def type_ok(declared: Mapping[str, Any], value: Any) -> bool:
    """Whether `value` has the JSON-schema type `declared` says (``any`` and unknown types pass)."""
    kind = declared.get("type")
    if isinstance(kind, list):
        return any(type_ok({**declared, "type": k}, value) for k in kind)
    if kind == "null":
        return value is None
    python = _TYPES.get(kind) if isinstance(kind, str) else None
    if python is None:
        return True
    if isinstance(value, bool) and kind != "boolean":
        return False
    if not isinstance(value, python):
        return False
    items = declared.get("items")
    if kind in ("array", "tuple") and isinstance(items, Mapping):
        return all(type_ok(items, v) for v in value)
    return True


def match_calls(calls: Sequence[ToolCall], gold: Sequence[GoldCall], rules: ValueRules, *, ordered: bool) -> tuple[
        list[tuple[int, int, CallCheck]], list[int], list[int]]:  # fmt: skip
    """Pair candidate calls with gold calls.

    Ordered: the i-th call is compared with the i-th gold call. Unordered: a maximum matching
    of fully correct pairs (augmenting paths, so no valid pairing is missed), then the rest
    paired greedily by partial credit, best first.

    Returns:
        (pairs as (call index, gold index, check), unmatched call indices, unmatched gold indices)
    """
    checks = [[check_call(c, g, rules) for g in gold] for c in calls]
    if ordered:
        n = min(len(calls), len(gold))
        return ([(i, i, checks[i][i]) for i in range(n)], list(range(n, len(calls))), list(range(n, len(gold))))
    owner: dict[int, int] = {}  # gold index -> call index, fully correct pairs
    for i in range(len(calls)):
        _augment(i, checks, owner, set())
    pairs = [(i, j, checks[i][j]) for j, i in owner.items()]
    free_calls = [i for i in range(len(calls)) if i not in owner.values()]
    free_gold = [j for j in range(len(gold)) if j not in owner]
    ranked = sorted(((checks[i][j].partial, -i, -j) for i in free_calls for j in free_gold), reverse=True)
    used_c: set[int] = set()
    used_g: set[int] = set()
    for credit, ni, nj in ranked:
        i, j = -ni, -nj
        if (credit > 0 or checks[i][j].name) and i not in used_c and j not in used_g:  # a right name pairs, so its problems are reported
            used_c.add(i)
            used_g.add(j)
            pairs.append((i, j, checks[i][j]))
    pairs.sort(key=lambda p: p[1])
    return pairs, [i for i in free_calls if i not in used_c], [j for j in free_gold if j not in used_g]


def _augment(i: int, checks: list[list[CallCheck]], owner: dict[int, int], seen: set[int]) -> bool:
    """Kuhn's augmenting path from call `i` over fully correct pairs."""
    for j, check in enumerate(checks[i]):
        if check.correct and j not in seen:
            seen.add(j)
            if j not in owner or _augment(owner[j], checks, owner, seen):
                owner[j] = i
                return True
    return False
