"""A starter spec to edit (what `rewardlab init` writes).

    >>> print(starter_spec(["text.exact"]).split("[[reward.components]]")[1].strip())
    name = "text_exact"
    use = "text.exact"
    weight = 1.0
    on_error = "fail"    # zero | skip | fail: what an error becomes in the total
    # params: the reward's own parameters, with their defaults (`rewardlab list text.exact`)
    # params.case_sensitive = false  # bool
    # params.strip_punctuation = false  # bool
    # params.collapse_whitespace = true  # bool
    # params.extract =   # str | None, no default
    # params.reference_key =   # str | None, no default

Without names it is the bundled demo spec: format-gated maths correctness with a length term.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from importlib.resources import files
from typing import Any

from rewardlab.core.registry import Registry, registry

__all__ = ["starter_spec"]

_HEADER = """\
# A reward spec: components are registered rewards (`rewardlab list`), combined by weight.
# Check it with `rewardlab check {path}`, score with `rewardlab score {path} data.jsonl`.
# The spec language: https://github.com/rewardlab/rewardlab/blob/main/docs/spec.md
[reward]
name = "{name}"
"""


def starter_spec(uses: Sequence[str] = (), *, path: str = "reward.toml", registry_: Registry | None = None) -> str:
    """TOML text of a spec with one component per registered name in `uses`, each with its
    parameters as comments (defaults filled in), or the bundled demo spec when `uses` is empty.

    Raises:
        UnknownRewardError: a name in `uses` is not registered (with suggestions).
    """
    if not uses:
        return (files("rewardlab.demo") / "rlvr.toml").read_text(encoding="utf-8")
    reg = registry_ or registry
    parts = [_HEADER.format(path=path, name=re.sub(r"\W+", "-", "-".join(uses)))]
    for use in uses:
        parts.append(_component(use, reg))
    return "\n".join(parts)


def _component(use: str, reg: Registry) -> str:
    info = reg.info(use)
    name = re.sub(r"\W", "_", use)
    lines = [
        "[[reward.components]]",
        f'name = "{name}"',
        f'use = "{use}"',
        "weight = 1.0",
        'on_error = "fail"    # zero | skip | fail: what an error becomes in the total',
    ]
    if info.params:
        lines.append(f"# params: the reward's own parameters, with their defaults (`rewardlab list {use}`)")
    for p in info.params:
        if p.required:
            lines.append(f"# params.{p.name} =   # {p.annotation}, REQUIRED: fill it in and uncomment")
        else:
            value = _toml_value(p.default)
            lines.append(f"# params.{p.name} = {value}  # {p.annotation}" if value is not None else f"# params.{p.name} =   # {p.annotation}, no default")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str | None:
    """`value` written as TOML, or None when TOML has no way to write it (None, mixed tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) and value == value and abs(value) != float("inf"):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string uses the same escapes
    if isinstance(value, list | tuple):
        items = [_toml_value(v) for v in value]
        return None if any(i is None for i in items) else "[" + ", ".join(i for i in items if i is not None) + "]"
    if isinstance(value, dict) and all(isinstance(k, str) and re.fullmatch(r"[A-Za-z0-9_-]+", k) for k in value):
        pairs = [(k, _toml_value(v)) for k, v in value.items()]
        if any(v is None for _, v in pairs):
            return None
        return "{ " + ", ".join(f"{k} = {v}" for k, v in pairs) + " }"
    return None
