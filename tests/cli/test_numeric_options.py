"""Every numeric option of every command, given a negative number and NaN.

An option a command cannot use must be a usage error (exit 2) or an error naming it (exit 1);
one it can use runs (exit 0). Never a traceback: a negative seed reached numpy and a NaN reached
scikit-learn before their options checked them. The list of options is read from the CLI itself,
so an option added later is in this test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from rewardlab.cli.main import app, main

# Commands that serve forever, call a model server, or train for minutes on valid values.
LONG_RUNNING = {("serve",), ("demo",), ("select", "search"), ("author", "run"), ("author", "check"), ("train", "prm"),
                ("train", "rm")}  # fmt: skip
# What each positional argument gets (by its name); others get the scored file.
ARGUMENTS = {"spec": "spec.toml", "specs": "spec.toml", "data": "cands.jsonl", "scored": "scored.jsonl",
             "input": "scored.jsonl", "pairs": "pairs.jsonl"}  # fmt: skip
OUTPUTS = ("--output", "--out")


def commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from commands(sub, (*path, name))
    else:
        yield path, command


def numeric_options() -> list[Any]:
    """(command path, positional arguments, option, output option) for each numeric option."""
    out = []
    for path, command in commands(typer.main.get_command(app)):
        if path in LONG_RUNNING:
            continue
        arguments = [ARGUMENTS.get(p.name, "scored.jsonl") for p in command.params if type(p).__name__ == "TyperArgument"]
        options = [p for p in command.params if type(p).__name__ == "TyperOption" and not p.is_flag]
        output = next((p.opts[0] for p in options if p.opts[0] in OUTPUTS), None)
        for option in options:
            if _numeric(option.type_descriptor.annotation):
                out.append(pytest.param(path, arguments, option.opts[0], output, id=" ".join([*path, option.opts[0]])))
    return out


def _numeric(annotation: Any) -> bool:
    """`int`, `float`, or either or None (`int | None`)."""
    return annotation in (int, float) or (set(getattr(annotation, "__args__", ())) - {type(None)}) in ({int}, {float})


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.toml").write_text('[reward]\nname = "exact"\n[[reward.components]]\nname = "exact"\nuse = "text.exact"\n')
    cands = [{"idx": i, "question": f"q{i}", "gt": "4", "code": ["\\boxed{4}", "\\boxed{5}"], "score": [True, False],
              "pred_score": [[0.9], [0.2]]} for i in range(6)]  # fmt: skip
    scored = [{"response": "4", "reference": "4", "group": f"g{i // 2}", "reward": i / 8, "reward_status": "ok",
               "objective/a": i / 8, "objective/b": 1 - i / 8} for i in range(8)]  # fmt: skip
    pairs = [{"prompt": f"p{i}", "chosen": "good", "rejected": "bad"} for i in range(6)]
    for name, rows in (("cands.jsonl", cands), ("scored.jsonl", scored), ("pairs.jsonl", pairs)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_the_cli_has_numeric_options_to_check():
    assert len(numeric_options()) >= 20


@pytest.mark.parametrize("value", ["-1", "nan"])
@pytest.mark.parametrize(("path", "arguments", "option", "output"), numeric_options())
def test_a_negative_or_nan_numeric_option_is_refused_or_used_never_a_traceback(files, capfd, path, arguments, option, output, value):
    argv = [*path, *arguments, option, value, *([output, "out"] if output else [])]
    assert main(argv) in (0, 1, 2), capfd.readouterr().err[-2000:]  # main raises only on a bug
    assert "Traceback" not in capfd.readouterr().err
