"""`check_choices` reads a parameter's choices from its own `Literal` annotation, so a
constructor never restates its signature; every reward that used a hand-written check does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from rewardlab.core.choices import check_choice, check_choices
from rewardlab.errors import ConfigError

Mode = Literal["fast", "exact"]


@dataclass(frozen=True)
class _Options:
    mode: Mode = "fast"
    side: Literal["left", "right"] | None = None

    def __post_init__(self) -> None:
        check_choices(type(self), mode=self.mode, side=self.side)


def _run(*, mode: Mode = "fast", missing: UndefinedName = None) -> None:  # type: ignore[name-defined]  # noqa: F821
    check_choices(_run, mode=mode)


def test_a_dataclass_field_and_a_function_parameter_are_checked_against_their_literal():
    assert _Options(side="left").side == "left" and _Options().side is None  # `| None` admits None
    with pytest.raises(ConfigError, match=r"side must be one of 'left', 'right'; got 'up'"):
        _Options(side="up")  # type: ignore[arg-type]
    _run(mode="exact")
    with pytest.raises(ConfigError, match=r"mode must be one of 'fast', 'exact'; got 'slow'"):
        _run(mode="slow")  # type: ignore[arg-type]  # an unresolvable annotation elsewhere is not read


def test_a_type_that_is_not_a_literal_is_a_programming_error():
    with pytest.raises(TypeError):
        check_choice("n", 1, int)


@pytest.mark.parametrize(
    ("build", "name"),
    [
        ("rewardlab.judges.consensus:MajorityVote", "mode"),
        ("rewardlab.verify.math.reward:MathAnswer", "approximate"),
        ("rewardlab.verify.code.reward:CodeTests", "time_scale"),
        ("rewardlab.sandbox.config:SandboxConfig", "isolation"),
        ("rewardlab.verify.math.extract:ExtractOptions", "hedging"),
    ],
)
def test_built_ins_name_the_parameter_and_its_choices(build, name):
    import importlib

    module, _, attr = build.partition(":")
    cls = getattr(importlib.import_module(module), attr)
    with pytest.raises(ConfigError, match=rf"{name} must be one of '.*; got 'bogus'"):
        cls(**{name: "bogus"})


def test_the_array_packages_raise_array_error_naming_the_argument():
    import numpy as np

    from rewardlab.credit.outcome import reinforce_pp
    from rewardlab.errors import ArrayError
    from rewardlab.select.batch import SearchOptions

    with pytest.raises(ArrayError, match=r"^baseline: must be one of 'group', 'none'; got 'x'$"):
        reinforce_pp(np.ones((2, 3)), baseline="x")  # type: ignore[arg-type]
    with pytest.raises(ArrayError, match=r"^aggregate: must be one of 'min', 'last', 'product', 'mean'; got 'x'$"):
        SearchOptions(aggregate="x")  # type: ignore[arg-type]
