"""Structured-output rewards: JSON validity, JSON-Schema validity, tool calls, XML.

The response text is parsed, never executed. Where the JSON sits is a choice (`locate`):
the whole response, the last fenced ```json block, or the first JSON value found anywhere.
An unparseable response is a *wrong answer* (ok, 0.0); a broken reference (an invalid
schema, a gold tool call that is not JSON) is an `error` for that row.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any, Literal

from rewardlab.core import JSON, BaseReward, RewardResult, Sample
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.verify._common import meta_or_reference, response_text

Locate = Literal["whole", "fenced", "anywhere"]
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
_TOOL_TAG = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_NOT_FOUND = object()


def find_json(text: str, *, locate: Locate = "anywhere") -> Any:
    """The JSON value in `text`, or raise `ValueError` saying why there is none.

    Args:
        text: the response.
        locate: `whole` (the stripped text must be JSON), `fenced` (the last ```json block),
            `anywhere` (the whole text, else the last fenced block, else the first `{`/`[`
            that starts a complete JSON value).
    """
    stripped = text.strip()
    if locate == "whole":
        return _parse(stripped)
    fences = _FENCE.findall(text)
    if locate == "fenced":
        if not fences:
            raise ValueError("no ```json fenced block in the response")
        return _parse(fences[-1])
    for candidate in (stripped, *reversed(fences)):
        try:
            return _parse(candidate)
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    # Each failed start costs the characters read before the error: unclosed brackets nested
    # `n` deep (`[1,[1,[1,...`) would cost n^2. The search stops at a budget: a fixed part (well
    # under a second) and a part linear in the text.
    budget, spent = _SEARCH_BUDGET_PER_CHAR * len(text) + _SEARCH_BUDGET, 0
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = _parse(text, decoder, match.start())
            return value
        except json.JSONDecodeError as exc:
            spent += exc.pos - match.start() + 1
        except ValueError:  # nested too deeply: read about as many characters as the depth it reached
            spent += sys.getrecursionlimit()
        if spent > budget:
            raise ScoringError("unsupported", f"no JSON value found before the search budget ran out ({budget:,} "
                               "characters read by failed parses: brackets that never close, nested deeply)")  # fmt: skip
    raise ValueError("no JSON object or array found in the response")


#: characters the `anywhere` search may read in failed parses: a fixed part (json reads ~10 M
#: characters a second of such input: about a second) and a part per character of the response
_SEARCH_BUDGET, _SEARCH_BUDGET_PER_CHAR = 10_000_000, 4


def _parse(text: str, decoder: json.JSONDecoder | None = None, start: int = 0) -> Any:
    """`json.loads(text)`, or with `decoder` the value at `start` and where it ends. A value
    nested deeper than the parser's recursion allows is a `ValueError` too (RFC 8259, 9: a
    parser may limit the depth): no JSON reader in Python would take it."""
    try:
        return json.loads(text) if decoder is None else decoder.raw_decode(text, start)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply to parse") from None


class JSONValid(BaseReward):
    """1.0 when the response holds valid JSON (optionally of a given top-level type)."""

    name = "structure.json"
    range = (0.0, 1.0)

    def __init__(self, *, locate: Locate = "whole", top_level: Literal["any", "object", "array"] = "any"):
        self._locate, self._top = locate, top_level

    def compute(self, sample: Sample) -> RewardResult:
        try:
            value = find_json(response_text(sample), locate=self._locate)
        except ValueError as exc:
            return RewardResult.ok(0.0, info={"reason": str(exc)})
        expected = {"object": dict, "array": list}.get(self._top)
        if expected is not None and not isinstance(value, expected):
            return RewardResult.ok(0.0, info={"reason": f"top-level value is {type(value).__name__}, not {self._top}"})
        return RewardResult.ok(1.0)


def _validator(schema: JSON) -> Any:
    """A jsonschema validator for `schema` (draft from `$schema`, default 2020-12)."""
    import jsonschema

    if not isinstance(schema, Mapping | bool):
        raise ConfigError(f"a JSON schema must be an object, got {type(schema).__name__}")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"invalid JSON schema: {exc.message} (at {'/'.join(map(str, exc.path)) or 'root'})") from exc
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


class JSONSchemaValid(BaseReward):
    """1.0 when the response's JSON validates against a JSON Schema (the `jsonschema` library).

    The schema is the `schema` parameter (checked when the spec is built), else the row's
    `schema` column (`meta` or an object reference; checked per row, an invalid one is an
    `invalid_input` error). With `partial`, the score is `1 / (1 + number of violations)`,
    so fewer violations score higher; unparseable JSON is 0 either way.
    """

    name = "structure.json_schema"
    range = (0.0, 1.0)

    def __init__(self, *, schema: dict[str, Any] | None = None, locate: Locate = "anywhere", partial: bool = False):
        self._fixed = _validator(schema) if schema is not None else None
        self._locate, self._partial = locate, partial

    def compute(self, sample: Sample) -> RewardResult:
        validator = self._fixed
        if validator is None:
            try:
                validator = _validator(meta_or_reference(sample, "schema"))
            except ValueError as exc:
                raise ScoringError("invalid_input", f"row schema: {exc}") from exc
        try:
            value = find_json(response_text(sample), locate=self._locate)
        except ValueError as exc:
            return RewardResult.ok(0.0, info={"reason": str(exc)})
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        messages = [f"{'/'.join(map(str, e.path)) or '<root>'}: {e.message}"[:200] for e in errors[:5]]
        if not errors:
            return RewardResult.ok(1.0)
        score = 1.0 / (1 + len(errors)) if self._partial else 0.0
        return RewardResult.ok(score, info={"violations": len(errors), "errors": messages})


# -- tool calls --------------------------------------------------------------------------------
def _normalise_call(call: Any) -> dict[str, Any]:
    """`{"name", "arguments": dict}` from the common shapes: plain, OpenAI `function`, string args."""
    if not isinstance(call, Mapping):
        raise ValueError(f"a tool call must be an object, got {type(call).__name__}")
    if "function" in call and isinstance(call["function"], Mapping):  # OpenAI tool_calls entry
        call = call["function"]
    name = call.get("name")
    if not isinstance(name, str):
        raise ValueError("a tool call needs a string 'name'")
    args = call.get("arguments", call.get("parameters", {}))
    if isinstance(args, str):  # OpenAI sends arguments as a JSON string
        args = json.loads(args) if args.strip() else {}
    if not isinstance(args, Mapping):
        raise ValueError(f"tool call {name!r}: arguments must be an object")
    return {"name": name, "arguments": dict(args)}


def parse_tool_calls(value: Any) -> list[dict[str, Any]]:
    """Tool calls from a JSON value: one call, a list of calls, or `{"tool_calls": [...]}`."""
    if isinstance(value, Mapping) and "tool_calls" in value:
        value = value["tool_calls"]
    calls = value if isinstance(value, list) else [value]
    return [_normalise_call(c) for c in calls]


def extract_tool_calls(sample: Sample) -> list[dict[str, Any]]:
    """Predicted calls: chat `tool_calls`, `<tool_call>` tags (Hermes/Qwen), or JSON in the text."""
    response = sample.response
    if isinstance(response, list) and response and isinstance(response[-1], dict) and response[-1].get("tool_calls"):
        return parse_tool_calls(list(response[-1]["tool_calls"]))
    text = response_text(sample)
    tagged = _TOOL_TAG.findall(text)
    if tagged:
        return [_normalise_call(json.loads(t)) for t in tagged]
    return parse_tool_calls(find_json(text))


def _jaccard(a: set[str], b: set[str]) -> float:
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def score_call(gold: dict[str, Any], pred: dict[str, Any] | None) -> tuple[float, float, float]:
    """(name, argument-keys, argument-values) agreement of one predicted call with a gold call.

    Keys: Jaccard of the key sets. Values: fraction of gold keys whose value the prediction
    gives exactly (JSON equality). A wrong name gives 0 for all three.
    """
    if pred is None or pred["name"] != gold["name"]:
        return 0.0, 0.0, 0.0
    gold_args, pred_args = gold["arguments"], pred["arguments"]
    keys = _jaccard(set(gold_args), set(pred_args))
    same = sum(1 for k, v in gold_args.items() if k in pred_args and pred_args[k] == v)
    values = 1.0 if not gold_args else same / len(gold_args)
    return 1.0, keys, values


class ToolCallMatch(BaseReward):
    """Tool-call correctness with partial credit for name, argument keys and argument values.

    The decomposition follows ToolRL (Qian et al. 2025, "ToolRL: Reward is All Tool Learning
    Needs", Sec. 3.3): name match, parameter-name overlap, parameter-value match. Gold calls
    (the reference, or its `tool_calls`) are paired in order with predicted calls of the same
    name; the total is divided by max(#gold, #predicted), so extra or missing calls cost.
    With `partial=False` the score is 1 only when every call matches exactly.
    """

    name = "structure.tool_call"
    range = (0.0, 1.0)

    def __init__(self, *, partial: bool = True, weights: tuple[float, float, float] = (0.2, 0.3, 0.5)):
        if len(weights) != 3 or min(weights) < 0 or sum(weights) <= 0:
            raise ConfigError(f"weights must be three non-negative numbers (name, keys, values), got {weights}")
        total = sum(weights)
        self._weights = tuple(w / total for w in weights)
        self._partial = partial

    def compute(self, sample: Sample) -> RewardResult:
        if sample.reference is None:
            raise ScoringError("invalid_input", "tool-call reward needs the gold call(s) as the reference")
        try:
            gold = parse_tool_calls(sample.reference)
        except ValueError as exc:
            raise ScoringError("invalid_input", f"reference tool call: {exc}") from exc
        try:
            pred = extract_tool_calls(sample)
        except ScoringError:
            raise
        except ValueError as exc:
            return RewardResult.ok(0.0, info={"reason": f"no parseable tool call: {exc}"})
        unused = list(pred)
        parts: list[tuple[float, float, float]] = []
        for call in gold:
            match = next((p for p in unused if p["name"] == call["name"]), None)
            if match is not None:
                unused.remove(match)
            parts.append(score_call(call, match))
        denominator = max(len(gold), len(pred))
        per_call = [sum(w * p for w, p in zip(self._weights, part, strict=True)) for part in parts]
        exact = all(p == (1.0, 1.0, 1.0) for p in parts) and len(pred) == len(gold)
        score = sum(per_call) / denominator if self._partial else float(exact)
        info = {"calls": [p["name"] for p in pred], "per_call": per_call, "exact": exact}
        return RewardResult.ok(min(1.0, score), info=info)


class XMLWellFormed(BaseReward):
    """1.0 when the response (or its last ```xml block) is well-formed XML.

    Parsed with the standard library's expat-based `ElementTree` (expat >= 2.4.1 refuses
    entity-expansion bombs). `root` additionally requires the root element's tag.
    """

    name = "structure.xml"
    range = (0.0, 1.0)
    _XML_FENCE = re.compile(r"```xml\s*\n(.*?)```", re.DOTALL)

    def __init__(self, *, root: str | None = None):
        self._root = root

    def compute(self, sample: Sample) -> RewardResult:
        text = response_text(sample)
        fences = self._XML_FENCE.findall(text)
        document = (fences[-1] if fences else text).strip()
        try:
            element = ET.fromstring(document)
        except ET.ParseError as exc:
            return RewardResult.ok(0.0, info={"reason": f"not well-formed: {exc}"})
        except UnicodeEncodeError as exc:  # a lone surrogate, which XML's Char production excludes
            where = f"U+{ord(document[exc.start]):04X} at position {exc.start}"
            return RewardResult.ok(0.0, info={"reason": f"not well-formed: a lone surrogate ({where}) is not an XML character"})
        if self._root is not None and element.tag != self._root:
            return RewardResult.ok(0.0, info={"reason": f"root element is <{element.tag}>, expected <{self._root}>"})
        return RewardResult.ok(1.0, info={"root": element.tag})
