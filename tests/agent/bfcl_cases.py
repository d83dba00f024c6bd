"""BFCL's AST checker and its possible-answer files, read from a mirror of ShishirPatil/gorilla.

Nothing of BFCL is vendored: the checker's module is loaded from the mirror's git objects at
test time (Apache-2.0), with one stand-in: `bfcl_eval.constants.model_config`, which BFCL
imports only to ask whether a model's names turn "." into "_" (it imports every model handler,
and so every provider SDK). The candidates are built here from the possible answers: the gold
calls and mutations of them (BFCL ships no model outputs).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MIRROR = Path("/work/.mirror/ShishirPatil+gorilla/repo")
ROOT = "berkeley-function-call-leaderboard/bfcl_eval"
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple",
              "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")  # fmt: skip


def available() -> bool:
    return (MIRROR / "HEAD").exists() or (MIRROR / ".git").exists()


def _show(path: str) -> str:
    return subprocess.run(["git", "--git-dir", str(MIRROR), "show", f"HEAD:{ROOT}/{path}"], check=True,
                          capture_output=True, text=True).stdout  # fmt: skip


def _module(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, f"<bfcl {name}>", "exec"), module.__dict__)  # BFCL's own code, from the mirror
    return module


def load_checker() -> types.ModuleType:
    """BFCL's `ast_checker` module, loaded from the mirror."""
    for package in ("bfcl_eval", "bfcl_eval.constants", "bfcl_eval.eval_checker", "bfcl_eval.eval_checker.ast_eval",
                    "bfcl_eval.eval_checker.ast_eval.type_convertor"):  # fmt: skip
        sys.modules.setdefault(package, types.ModuleType(package))
    _module("bfcl_eval.constants.enums", _show("constants/enums.py"))
    _module("bfcl_eval.constants.type_mappings", _show("constants/type_mappings.py"))
    stand_in = types.ModuleType("bfcl_eval.constants.model_config")
    stand_in.MODEL_CONFIG_MAPPING = {"rewardlab/test": types.SimpleNamespace(underscore_to_dot=False)}  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = stand_in
    for conv in ("java_type_converter", "js_type_converter"):
        _module(f"bfcl_eval.eval_checker.ast_eval.type_convertor.{conv}", _show(f"eval_checker/ast_eval/type_convertor/{conv}.py"))
    return _module("bfcl_eval.eval_checker.ast_eval.ast_checker", _show("eval_checker/ast_eval/ast_checker.py"))


def entries(category: str) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(question entry, possible-answer entry) pairs of a category."""
    questions = [json.loads(line) for line in _show(f"data/BFCL_v4_{category}.json").splitlines() if line.strip()]
    answers = {e["id"]: e for e in (json.loads(line) for line in _show(f"data/possible_answer/BFCL_v4_{category}.json").splitlines() if line.strip())}
    for question in questions:
        if question["id"] in answers:
            yield question, answers[question["id"]]


# -- candidates ---------------------------------------------------------------------------------
def _first(allowed: list[Any], declared: dict[str, Any]) -> Any:
    value = next(a for a in allowed if a != "")
    if isinstance(value, dict) and declared.get("type") in ("dict", "HashMap"):
        # a dict's values are lists of allowed values; a bare value (simple_java_64) is the one allowed
        listed = {k: v if isinstance(v, list) else [v] for k, v in value.items()}
        return {k: _first(v, {}) for k, v in listed.items() if any(x != "" for x in v)}
    if isinstance(value, list) and declared.get("items", {}).get("type") == "dict":
        return [{k: _first(v, {}) for k, v in d.items() if any(x != "" for x in v)} if isinstance(d, dict) else d for d in value]
    return copy.deepcopy(value)


def gold_output(answer: list[dict[str, Any]], functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model output BFCL's checker reads (``[{name: {param: value}}]``), from the first
    allowed value of each parameter (parameters whose only value is "" left out)."""
    schemas = {f["name"]: f for f in functions}
    out = []
    for call in answer:
        ((name, params),) = call.items()
        properties = schemas.get(name, {}).get("parameters", {}).get("properties", {})
        out.append({name: {p: _first(v, properties.get(p, {})) for p, v in params.items() if any(a != "" for a in v)}})
    return out


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + " zz"
    if isinstance(value, list):
        return [*value, value[0]] if value else ["zz"]
    if isinstance(value, dict):
        return {**value, "zz_key": 1}
    return "zz"


def mutations(output: list[dict[str, Any]], answer: list[dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(name, candidate) for the gold output and mutations of it that probe each rule."""
    yield "gold", output
    first_name, first = next(iter(output[0].items()))
    gold_params = answer[0][first_name]
    optional = [p for p, v in gold_params.items() if "" in v and p in first]
    required = [p for p, v in gold_params.items() if "" not in v and p in first]
    if optional:
        yield "omit_optional", [{first_name: {k: v for k, v in first.items() if k not in optional}}, *output[1:]]
    if required:
        yield "drop_required", [{first_name: {k: v for k, v in first.items() if k != required[0]}}, *output[1:]]
    if first:
        key = next(iter(first))
        yield "wrong_value", [{first_name: {**first, key: _changed(first[key])}}, *output[1:]]
        if isinstance(first[key], int | float) and not isinstance(first[key], bool):
            yield "number_as_string", [{first_name: {**first, key: str(first[key])}}, *output[1:]]
            if isinstance(first[key], float) and first[key].is_integer():
                yield "int_for_float", [{first_name: {**first, key: int(first[key])}}, *output[1:]]
            if isinstance(first[key], int):
                yield "float_for_int", [{first_name: {**first, key: float(first[key])}}, *output[1:]]
        if isinstance(first[key], str) and first[key]:
            yield "string_case_and_punctuation", [{first_name: {**first, key: first[key].upper() + "."}}, *output[1:]]
    yield "extra_param", [{first_name: {**first, "zz_unexpected": 1}}, *output[1:]]
    yield "wrong_name", [{first_name + "_zz": first}, *output[1:]]
    yield "extra_call", [*output, output[0]]
    if len(output) > 1:
        yield "reversed", list(reversed(output))
        yield "missing_call", output[:-1]


def as_messages(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """BFCL's model output as one OpenAI assistant message with tool calls."""
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
             for i, call in enumerate(output) for name, args in call.items()]  # fmt: skip
    return [{"role": "assistant", "content": None, "tool_calls": calls}]


# -- Java and JavaScript: every argument is the source text of a value ------------------------------
LANGUAGE_CATEGORIES = {"simple_java": "JAVA", "simple_javascript": "JAVASCRIPT"}
_JAVA_ELEMENT = {"String": "String", "integer": "int", "long": "long", "char": "char", "any": "Object", "double": "double",
                 "float": "float", "boolean": "boolean"}  # fmt: skip


def _literal(value: Any, kind: Any, java: bool) -> str:
    """`value` as a literal inside a collection (strings quoted, Java longs and floats suffixed)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int | float) and java and kind == "long":
        return f"{int(value)}L"
    if isinstance(value, int | float) and java and kind == "float":
        return f"{float(value)}f"
    if isinstance(value, list):
        return ("new Object[]{" + ", ".join(_literal(v, None, java) for v in value) + "}") if java else (
            "[" + ", ".join(_literal(v, None, java) for v in value) + "]")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_literal(v, None, java)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def encode(value: Any, declared: dict[str, Any], java: bool, style: str = "plain") -> Any:
    """A typed value as the source text BFCL's parsers hand its checker for a parameter of the
    `declared` type: a top-level string bare, other values as literals. `style` picks another
    spelling of the same collection ("alt": Java double-brace `add`, JS `new Array`/quoted keys)."""
    kind, items = declared.get("type"), declared.get("items", {}).get("type")
    if isinstance(value, str) or value is None:
        return value if value is not None else "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if java and kind == "long":
            return f"{int(value)}L"
        if java and kind == "float":
            return f"{float(value)}f"
        if not java and kind == "Bigint":
            return f"{int(value)}n"
        return repr(value)
    if isinstance(value, list):
        parts = [_literal(v, items, java) for v in value]
        if java and kind == "ArrayList":
            if style == "alt":
                return "new ArrayList<>() {{ " + " ".join(f"add({p});" for p in parts) + " }}"
            return "new ArrayList<>(Arrays.asList(" + ", ".join(parts) + "))"
        if java:
            return f"new {_JAVA_ELEMENT.get(str(items), 'Object')}[]{{" + ("," if style == "alt" else ", ").join(parts) + "}"
        return ("new Array(" + ", ".join(parts) + ")") if style == "alt" else "[" + ", ".join(parts) + "]"
    if isinstance(value, dict):
        if java:
            puts = " ".join(f"put({json.dumps(k)}, {_literal(v, None, java)});" for k, v in value.items())
            return "new HashMap<String, Object>() {{ " + puts + " }}"
        key = (lambda k: json.dumps(k)) if style == "alt" else (lambda k: k)
        return "{" + ", ".join(f"{key(k)}: {_literal(v, None, java)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def encode_output(output: list[dict[str, Any]], functions: list[dict[str, Any]], java: bool) -> list[dict[str, Any]]:
    schemas = {f["name"]: f["parameters"]["properties"] for f in functions}
    return [{name: {p: encode(v, schemas[name].get(p, {}), java) for p, v in args.items()}} for call in output for name, args in call.items()]


def language_mutations(typed: list[dict[str, Any]], answer: list[dict[str, Any]], functions: list[dict[str, Any]],
                       java: bool) -> Iterator[tuple[str, list[dict[str, Any]]]]:  # fmt: skip
    """(name, candidate) for the encoded gold output, the structural mutations of `mutations`
    (values re-encoded), and mutations of the language conventions."""
    (name, args), = typed[0].items()
    properties = {f["name"]: f["parameters"]["properties"] for f in functions}[name]
    for label, candidate in mutations(typed, answer):
        if label in ("number_as_string", "int_for_float", "float_for_int"):
            continue  # these probe JSON types; their language forms follow
        schemas = {f["name"]: f["parameters"]["properties"] for f in functions}
        yield label, [{n: {p: encode(v, schemas.get(n, properties).get(p, {}), java) for p, v in a.items()}}
                      for call in candidate for n, a in call.items()]  # fmt: skip
    encoded = encode_output(typed, functions, java)
    first = encoded[0][name]

    def variant(param: str, text: Any) -> list[dict[str, Any]]:
        return [{name: {**first, param: text}}]

    for param, value in args.items():  # the first parameter of each kind that applies
        kind = properties.get(param, {}).get("type")
        if not isinstance(value, str) and not isinstance(value, type(None)):
            yield f"json_value:{kind}", variant(param, value)
        if kind == "String" and isinstance(value, str):
            yield "quoted_string", variant(param, json.dumps(value))
            yield "string_case_and_punctuation", variant(param, value.upper() + ".")
        if java and kind == "long" and isinstance(value, int):
            yield "long_without_L", variant(param, str(value))
        if java and kind in ("float", "double") and isinstance(value, float):
            yield f"{kind}_as_int_text", variant(param, str(int(value))) if value.is_integer() else variant(param, f"{value}d")
        if not java and kind == "float" and isinstance(value, float) and value.is_integer():
            yield "float_as_int_text", variant(param, str(int(value)))
        if isinstance(value, list | dict) and kind not in ("any", None):
            yield f"alt_syntax:{kind}", variant(param, encode(value, properties[param], java, style="alt"))
