"""OpenAI grader JSON -> rewardlab spec (`rewardlab import-grader grader.json`).

| OpenAI grader     | rewardlab component                                          |
|-------------------|--------------------------------------------------------------|
| `string_check`    | `graders.string_check` (same operation and templates)        |
| `text_similarity` | `graders.text_similarity` (fuzzy_match, bleu, rouge_*)       |
| `score_model`     | `judge.llm` with the grader's messages, model and range, raw scale |
| `python`          | `graders.python`: `grade(sample, item)` inside `rewardlab.sandbox` |
| `multi`           | one component per sub-grader, `combine = "formula"` with `calculate_output` |

What does not carry over, refused with a `SpecError` naming the key: `label_model` graders,
nested `multi` graders, the `gleu`/`meteor`/`cosine` metrics, and formulas using `floor` or
`ceil` (rewardlab's formula language has neither). `score_model` needs an endpoint: OpenAI's
by default (`--judge-base-url` for vLLM/Ollama), the key read from `$OPENAI_API_KEY` at run time.
`pass_threshold` is kept in the spec description (rewardlab scores, it does not pass/fail).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rewardlab._lazy import require
from rewardlab.errors import InputError, SpecError, SpecProblem

__all__ = ["grader_to_spec", "import_grader", "spec_to_toml"]

SUPPORTED = ("string_check", "text_similarity", "score_model", "python", "multi")
# A score_model answer: OpenAI's structured output {"result": N, ...}, or [[N]] / "score: N" / N.
_SCORE_PATTERN = r'"result"\s*:\s*(-?\d+(?:\.\d+)?)|\[\[\s*(-?\d+(?:\.\d+)?)\s*\]\]|(?i:score|rating)\s*[:=]\s*(-?\d+(?:\.\d+)?)|^\s*(-?\d+(?:\.\d+)?)\s*$'


def _identifier(name: str, taken: set[str]) -> str:
    base = re.sub(r"\W+", "_", name.strip()).strip("_") or "grader"
    if base[0].isdigit():
        base = f"g_{base}"
    out, n = base, 2
    while out in taken:
        out, n = f"{base}_{n}", n + 1
    taken.add(out)
    return out


def _need(grader: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in grader:
        raise SpecError([SpecProblem(f"{where}.{key}", f"{grader.get('type', 'grader')} grader needs {key!r}")])
    return grader[key]


def _content_text(content: Any, where: str) -> str:
    """A message content: a string, an `input_text` part, or a list of text parts."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content]
    texts = []
    for part in parts:
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            raise SpecError([SpecProblem(where, f"only text message content can be imported, got {part!r}"[:200])])
    return "".join(texts)


def _component(grader: Mapping[str, Any], where: str, *, base_url: str, api_key_env: str) -> tuple[str, dict[str, Any]]:
    """(registry name, params) for one non-multi grader."""
    kind = grader.get("type")
    if kind == "string_check":
        keys = ("operation", "input", "reference")
        return "graders.string_check", {k: _need(grader, k, where) for k in keys}
    if kind == "text_similarity":
        keys = ("evaluation_metric", "input", "reference")
        return "graders.text_similarity", {k: _need(grader, k, where) for k in keys}
    if kind == "python":
        return "graders.python", {"source": _need(grader, "source", where)}
    if kind == "score_model":
        messages = _need(grader, "input", where)
        if not isinstance(messages, list) or not messages:
            raise SpecError([SpecProblem(f"{where}.input", "score_model input must be a list of messages")])
        converted = [
            {"role": str(m.get("role", "user")), "content": _content_text(m.get("content", ""), f"{where}.input[{i}].content")}
            for i, m in enumerate(messages)
        ]
        sampling = grader.get("sampling_params") or {}
        scale = grader.get("range") or [0, 1]
        params: dict[str, Any] = {
            "base_url": base_url, "model": _need(grader, "model", where), "messages": converted,
            "scale": [float(scale[0]), float(scale[1])], "normalize": False, "score_pattern": _SCORE_PATTERN,
            "api_key_env": api_key_env,
        }  # fmt: skip
        if "temperature" in sampling:
            params["temperature"] = float(sampling["temperature"])
        if "max_completions_tokens" in sampling:
            params["max_tokens"] = int(sampling["max_completions_tokens"])
        return "judge.llm", params
    if kind == "multi":
        raise SpecError([SpecProblem(where, "nested multi graders cannot be imported; flatten them into one calculate_output")])
    raise SpecError([SpecProblem(f"{where}.type", f"grader type {kind!r} cannot be imported; supported: {', '.join(SUPPORTED)}")])


def grader_to_spec(
    grader: Mapping[str, Any],
    *,
    judge_base_url: str = "https://api.openai.com/v1",
    api_key_env: str = "OPENAI_API_KEY",
) -> dict[str, Any]:
    """The rewardlab spec (as a dict, the shape `rewardlab.compose.build` takes) of a grader.

    Raises:
        SpecError: an unsupported grader type, metric or formula, or a missing field.
    """
    if not isinstance(grader, Mapping):
        raise SpecError("an OpenAI grader must be a JSON object")
    name = str(grader.get("name") or grader.get("type") or "grader")
    notes = [f"imported from an OpenAI {grader.get('type')} grader"]
    if "pass_threshold" in grader:
        notes.append(f"pass_threshold = {grader['pass_threshold']}")
    options = {"base_url": judge_base_url, "api_key_env": api_key_env}
    if grader.get("type") != "multi":
        use, params = _component(grader, "grader", **options)
        component = {"name": _identifier(name, set()), "use": use, "params": params}
        return {"reward": {"name": name, "description": "; ".join(notes), "components": [component]}}
    subgraders = _need(grader, "graders", "grader")
    if isinstance(subgraders, list):  # some SDKs send a list of named graders
        subgraders = {str(g.get("name", f"grader_{i}")): g for i, g in enumerate(subgraders)}
    if not isinstance(subgraders, Mapping) or not subgraders:
        raise SpecError([SpecProblem("grader.graders", "multi grader needs a non-empty object of graders")])
    formula = str(_need(grader, "calculate_output", "grader"))
    if re.search(r"\b(floor|ceil)\s*\(", formula):
        raise SpecError([SpecProblem("grader.calculate_output", "floor() and ceil() are not in rewardlab's formula language")])
    taken: set[str] = set()
    components = []
    for key, sub in subgraders.items():
        ident = _identifier(str(key), taken)
        if ident != key:  # keep the formula's variable names in step with the components
            formula = re.sub(rf"\b{re.escape(str(key))}\b", ident, formula)
        use, params = _component(sub, f"grader.graders.{key}", **options)
        components.append({"name": ident, "use": use, "params": params, "on_error": "fail"})
    return {"reward": {"name": name, "description": "; ".join(notes), "combine": "formula", "formula": formula, "components": components}}


def spec_to_toml(spec: Mapping[str, Any]) -> str:
    """TOML text of a spec dict (multi-line strings kept readable)."""
    require("tomli_w", needed_by="writing an imported grader's spec")
    import tomli_w

    return tomli_w.dumps(dict(spec), multiline_strings=True)


def import_grader(path: str | Path, **options: Any) -> tuple[dict[str, Any], str]:
    """Read a grader JSON file; return its spec dict and TOML text (checked by building it).

    Raises:
        InputError: the file is missing or not JSON.
        SpecError: the grader cannot be imported, or the spec it gives does not build.
    """
    from rewardlab.compose import build

    path = Path(path)
    try:
        grader = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("grader file not found", source=str(path)) from None
    except ValueError as exc:
        raise InputError(f"not valid JSON: {exc}", source=str(path)) from exc
    if isinstance(grader, Mapping) and "grader" in grader and "type" not in grader:
        grader = grader["grader"]  # the body of a /graders/run request
    spec = grader_to_spec(grader, **options)
    build(spec)  # every problem surfaces now, not at scoring time
    return spec, spec_to_toml(spec)
