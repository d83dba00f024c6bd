"""CLI options generated from settings models (`rewardlab.cli._options`): one default, one help."""

from __future__ import annotations

import inspect

import pytest
import typer
from pydantic import BaseModel, Field

from rewardlab.cli._options import Flag, settings_options, settings_values, with_options
from rewardlab.cli.main import app
from rewardlab.cli.serve import SETTINGS
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore


def _serve_params(*argv: str) -> dict:
    command = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    return command.make_context("serve", ["spec.toml", *argv]).params


def _settings(*argv: str) -> ServeSettings:
    values = settings_values(SETTINGS, _serve_params(*argv))
    return ServeSettings(**{**values, "token": values["token"] or None})


def test_rewardlab_serve_without_options_uses_the_settings_defaults(monkeypatch):
    monkeypatch.delenv("REWARDLAB_TOKEN", raising=False)
    assert _settings() == ServeSettings()


def test_each_serve_flag_reaches_its_field(monkeypatch):
    monkeypatch.delenv("REWARDLAB_TOKEN", raising=False)
    got = _settings("-w", "3", "--timeout", "5", "--max-body-mb", "1.5", "--max-queue", "9", "--backend", "inline",
                    "--openrlhf-error-reward", "-1", "--token", "t")
    assert (got.workers, got.sample_timeout, got.max_queue, got.backend) == (3, 5.0, 9, "inline")
    assert got.max_body_bytes == int(1.5 * 1024 * 1024) and got.openrlhf_error_reward == -1.0 and got.token == "t"


def test_serve_help_is_the_field_description():
    command = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    helps = {p.name: p.help for p in command.params}
    assert helps["max_queue"] == "Queued samples per reward before 429."
    assert helps["max_queue"].lower().rstrip(".") == ServeSettings.model_fields["max_queue"].description


def test_cache_max_rows_default_is_the_result_stores():
    assert _serve_params()["cache_max_rows"] == inspect.signature(ResultStore).parameters["max_rows"].default


class _Model(BaseModel):
    size: int = Field(default=3, description="how many")
    mode: str | None = Field(default=None, description="which one.")
    limit_bytes: int = Field(default=2048, description="a limit")


def test_options_take_default_help_and_type_from_the_field():
    size, mode, limit = settings_options(
        _Model, [Flag("size"), Flag("mode", ("--mode", "-m")), Flag("limit_bytes", ("--limit-kb",), scale=1024)]
    )
    assert (size.name, size.annotation, size.default.default, size.default.help) == ("size", int, 3, "How many.")
    assert mode.annotation is str and mode.default.param_decls == ("--mode", "-m") and mode.default.help == "Which one."
    assert limit.annotation is float and limit.default.default == 2.0
    assert settings_values([Flag("limit_bytes", scale=1024)], {"limit_bytes": 1.5}) == {"limit_bytes": 1536}


def test_a_flag_for_a_missing_field_fails_when_the_command_is_defined():
    with pytest.raises(KeyError, match="no field 'sise'"):
        settings_options(_Model, [Flag("sise")])


def test_generated_options_go_after_the_named_parameter():
    @with_options(settings_options(_Model, [Flag("size")]), after="first")
    def command(first: int = 1, last: int = 2, **settings: object) -> None:
        pass

    assert list(inspect.signature(command).parameters) == ["first", "size", "last"]
