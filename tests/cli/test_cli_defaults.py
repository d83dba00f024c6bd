"""Every generated option's default is its class's default, and `rewardlab train --help` needs no torch."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from doc_examples import page_text
from rewardlab.cli import audit, score, serve, train
from rewardlab.cli import eval as eval_cli
from rewardlab.cli import select as select_cli
from rewardlab.cli._options import Flag, attribute_docs, field_defaults, settings_values
from rewardlab.cli.main import app
from rewardlab.evaluate.audit.options import ProbeOptions
from rewardlab.models.config import DEFAULT_BACKBONE, EncodeConfig, PRMConfig, TrainConfig
from rewardlab.models.data import graded_pairs, split_pairs
from rewardlab.runner.candidate_rows import CandidateColumns
from rewardlab.runner.options import ScoreFileOptions
from rewardlab.select.openai_generator import OpenAIStepGenerator
from rewardlab.select.options import (
    CurveOptions,
    PickOptions,
    SearchOptions,
    SimulationOptions,
    SimulatorConfig,
)
from rewardlab.select.problems import load_problems
from rewardlab.serve.launch import run_server
from rewardlab.serve.settings import ServeSettings

_SEARCH_ARGV = ["p.jsonl", "--base-url", "http://127.0.0.1:8000/v1", "--model", "m", "-o", "o.jsonl"]
# (command path, its required arguments, the flags it generates, the class they come from)
GENERATED = [
    (("serve",), ["spec.toml"], serve.SETTINGS, ServeSettings),
    (("serve",), ["spec.toml"], serve.SERVER, run_server),
    (("score",), ["spec.toml", "in.jsonl"], score.OPTIONS, ScoreFileOptions),
    (("train", "rm"), ["prefs.jsonl"], train.RM_OPTIONS, TrainConfig),
    (("train", "rm"), ["prefs.jsonl"], train.ENCODE_OPTIONS, EncodeConfig),
    (("train", "prm"), ["steps.jsonl"], train.PRM_OPTIONS, PRMConfig),
    (("train", "prm"), ["steps.jsonl"], train.ENCODE_OPTIONS, EncodeConfig),
    (("train", "prm"), ["steps.jsonl"], train.JOB_OPTIONS, train._Job),
    (("train", "pairs"), ["sets.jsonl", "--out", "pairs.jsonl"], train.PAIRS_OPTIONS, graded_pairs),
    (("eval",), ["--data", "sets.jsonl"], eval_cli.COLUMNS, CandidateColumns),
    (("select", "curves"), ["c.jsonl"], select_cli.COLUMNS, CandidateColumns),
    (("select", "pick"), ["c.jsonl", "-o", "p.jsonl"], select_cli.COLUMNS, CandidateColumns),
    (("select", "curves"), ["c.jsonl"], select_cli.SELECTION, PickOptions),
    (("select", "curves"), ["c.jsonl"], select_cli.CURVES, CurveOptions),
    (("select", "pick"), ["c.jsonl", "-o", "p.jsonl"], select_cli.METHOD, PickOptions),
    (("select", "pick"), ["c.jsonl", "-o", "p.jsonl"], select_cli.SELECTION, PickOptions),
    (("audit",), ["spec.toml", "--data", "data.jsonl"], audit.PROBE_OPTIONS, ProbeOptions),
    (("select", "search"), _SEARCH_ARGV, select_cli.SEARCH, SearchOptions),
    (("select", "search"), _SEARCH_ARGV, select_cli.ENDPOINT, OpenAIStepGenerator),
    (("select", "search"), _SEARCH_ARGV, select_cli.PROBLEMS, load_problems),
    (("select", "simulate"), [], select_cli.SIMULATE, SimulationOptions),
    (("select", "simulate"), [], select_cli.SIMULATOR, SimulatorConfig),
]


def _params(path: tuple[str, ...], argv: list[str]) -> dict:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command.make_context(" ".join(path), list(argv)).params


@pytest.mark.parametrize(("path", "argv", "flags", "model"), GENERATED, ids=lambda x: getattr(x, "__name__", None))
def test_every_generated_default_is_the_class_default(path, argv, flags, model, monkeypatch):
    monkeypatch.delenv("REWARDLAB_TOKEN", raising=False)
    defaults = field_defaults(model)
    flags = [f for f in flags if f.field in defaults]  # a field without a default is a required option
    got = settings_values(flags, _params(path, argv))
    expected = {f.field: list(d) if isinstance(d := defaults[f.field], tuple) else d for f in flags}  # repeatable: a list
    if model is ServeSettings:  # an unset token is the empty option
        got["token"] = got["token"] or None
    assert got == expected


def test_the_train_defaults_outside_the_configs_are_the_librarys():
    for path in (("train", "rm"), ("train", "prm")):
        params = _params(path, ["data.jsonl"])
        assert params["backbone"] == DEFAULT_BACKBONE
        assert params["val_fraction"] == inspect.signature(split_pairs).parameters["val_fraction"].default


# Options of eval and audit that are keyword arguments of run_eval / audit_reward: their modules
# import every metric (numpy), too much for start-up, so the CLI states them and this test holds
# them equal.
SIGNATURE_DEFAULTS = [
    (("eval",), ["--data", "sets.jsonl"], "rewardlab.evaluate.run_eval:run_eval", ("seed", "workers", "timeout", "threshold")),
    (("audit",), ["spec.toml", "--data", "d.jsonl"], "rewardlab.evaluate.audit.run_audit:audit_reward",
     ("limit", "seed", "workers", "timeout", "against", "label_field", "group_by")),
]


@pytest.mark.parametrize(("path", "argv", "target", "names"), SIGNATURE_DEFAULTS, ids=lambda x: str(x))
def test_eval_and_audit_defaults_are_their_functions_defaults(path, argv, target, names):
    import importlib

    module, _, attr = target.partition(":")
    parameters = inspect.signature(getattr(importlib.import_module(module), attr)).parameters
    params = _params(path, argv)
    assert {n: params[n] for n in names} == {n: parameters[n].default for n in names}


def test_pick_and_selection_curves_take_their_defaults_from_the_option_classes():
    """The CLI's defaults come from PickOptions and CurveOptions (above); so do the functions'."""
    from rewardlab.select.curves import selection_curves
    from rewardlab.select.pick import pick

    curves = inspect.signature(selection_curves).parameters
    picks = inspect.signature(pick).parameters
    shared = {name: d for name, d in field_defaults(PickOptions).items() if name != "method"}  # pick's method is required
    assert {name: picks[name].default for name in shared} == shared
    assert {name: curves[name].default for name in shared} == shared
    own = {name: d for name, d in field_defaults(CurveOptions).items() if name != "max_n"}  # the CLI's ns
    assert {name: curves[name].default for name in own} == own


def test_the_selection_option_classes_refuse_values_outside_their_range():
    from rewardlab.errors import ArrayError

    for bad in ({"weights": "softmax"}, {"method": "vote"}, {"keep": 0.0}, {"top_k": 0}):
        with pytest.raises(ArrayError, match=next(iter(bad))):
            PickOptions(**bad)  # type: ignore[arg-type]
    for bad in ({"max_n": -1}, {"max_subsets": 0}, {"confidence": 1.0}, {"n_resamples": 0}):
        with pytest.raises(ArrayError, match=next(iter(bad))):
            CurveOptions(**bad)


def test_each_train_rm_flag_reaches_its_field():
    params = _params(("train", "rm"), ["p.jsonl", "--layers", "2", "--center", "0.01", "--no-margin",
                                       "--aggregate", "min", "--no-bootstrap", "--member-hidden", "8",
                                       "--penalty", "0.5", "--pooling", "mean"])
    config = TrainConfig(**settings_values(train.RM_OPTIONS, params))
    encode = EncodeConfig(**settings_values(train.ENCODE_OPTIONS, params))
    assert (config.finetune_layers, config.center_coef, config.use_margin, config.ensemble_how) == (2, 0.01, False, "min")
    assert (config.ensemble_bootstrap, config.ensemble_hidden, config.ensemble_penalty) == (False, 8, 0.5)
    assert encode.pooling == "mean"


def test_train_help_is_the_attribute_description():
    command = typer.main.get_command(app).commands["train"].commands["prm"]  # type: ignore[attr-defined]
    helps = {p.name: p.help for p in command.params}
    assert helps["batch_size"] == "Steps per batch."
    assert attribute_docs(PRMConfig)["batch_size"] == "steps per batch."


def test_every_config_field_is_documented():
    for config in (TrainConfig, PRMConfig, EncodeConfig):
        assert set(attribute_docs(config)) == set(field_defaults(config)), config.__name__


def test_a_required_field_is_a_required_option_and_each_value_reaches_its_field():
    params = _params(("select", "search"), [*_SEARCH_ARGV, "--aggregate", "product", "-m", "dvts", "--retries", "0"])
    assert (params["base_url"], params["model"], params["retries"]) == ("http://127.0.0.1:8000/v1", "m", 0)
    options = SearchOptions(**settings_values(select_cli.SEARCH, params))
    assert (options.aggregate, options.method) == ("product", "dvts")
    with pytest.raises(Exception, match="Missing parameter: model"):
        _params(("select", "search"), ["p.jsonl", "--base-url", "http://x/v1", "-o", "o.jsonl"])


def test_a_literal_option_names_its_choices_in_its_help_once():
    command = typer.main.get_command(app).commands["select"].commands["search"]  # type: ignore[attr-defined]
    helps = {p.name: p.help for p in command.params}
    assert helps["aggregate"].endswith("One of: min, last, product, mean.")
    assert helps["equivalence"].endswith("One of: exact, normalized, math.")
    assert "One of" not in helps["method"]  # its description already names every method
    assert "beam" in helps["method"] and "early_rejection" in helps["method"]


def test_an_option_without_a_description_fails_when_the_command_is_defined():
    from dataclasses import dataclass

    from rewardlab.cli._options import settings_options

    @dataclass
    class Undocumented:
        """No attributes section."""

        size: int = 3

    with pytest.raises(ValueError, match=r"Undocumented\.size has no description"):
        settings_options(Undocumented, [Flag("size")])


def test_attribute_docs_joins_continuation_lines_and_stops_at_the_next_section():
    class Documented:
        """Summary.

        Attributes:
            size: how many, at most
                a thousand.
            mode (str): which one.

        Raises:
            ValueError: never.
        """

    assert attribute_docs(Documented) == {"size": "how many, at most a thousand.", "mode": "which one."}


_NO_TORCH = """
import sys
from rewardlab.cli.main import main
code = main({argv!r})
heavy = sorted({{'torch', 'transformers', 'safetensors', 'sklearn', 'numpy', 'sympy', 'fastapi'}} & set(sys.modules))
print(code, heavy)
"""


@pytest.mark.parametrize("argv", [["--help"], ["train", "rm", "--help"], ["train", "prm", "--help"], ["eval", "--help"], ["audit", "--help"],
                                  ["select", "search", "--help"], ["select", "simulate", "--help"],
                                  ["select", "curves", "--help"], ["select", "pick", "--help"]])
def test_cli_help_imports_no_torch_nor_numpy(argv):
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {"PYTHONPATH": src, "PATH": "/usr/bin:/bin", "COLUMNS": "100"}
    run = subprocess.run([sys.executable, "-c", _NO_TORCH.format(argv=argv)], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    last = run.stdout.strip().splitlines()[-1]
    assert last == "0 []", run.stdout[-2000:] + run.stderr[-2000:]
    assert "Usage:" in run.stdout


def _number(cell: str) -> float | str:
    text = cell.strip().strip("`").removesuffix(" s").replace(",", "")
    try:
        return float(text)
    except ValueError:
        return text


def test_the_defaults_in_docs_serve_table_are_the_cli_defaults():
    """docs/serve.md lists `rewardlab serve`'s options with their defaults; they must not drift."""
    import re

    command = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    defaults = {name: p.default for p in command.params for name in p.opts}
    table = page_text("serve.md")
    checked = 0
    for options_cell, default_cell in re.findall(r"^\| (`--[^|]+) \| ([^|]+) \|", table, flags=re.M):
        options = re.findall(r"`(--[\w-]+)", options_cell)
        cells = [c for c in default_cell.split(", ")]
        for option, cell in zip(reversed(options), reversed(cells), strict=False):  # a trailing option may have no default
            documented = _number(cell)
            if (isinstance(documented, str) and not re.fullmatch(r"[a-z]+", documented)) or documented == "none":
                continue  # prose ("first spec", a path with a variable)
            actual = defaults[option]
            assert (float(actual) if isinstance(documented, float) else actual) == documented, option
            checked += 1
    assert checked >= 10
