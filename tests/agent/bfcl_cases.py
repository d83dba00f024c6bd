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
    if isinstance(value, dict) and declared.get("type") == "dict":
        return {k: _first(v, {}) for k, v in value.items() if any(x != "" for x in v)}
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
