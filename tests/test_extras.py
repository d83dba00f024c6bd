"""`rewardlab._lazy.OPTIONAL` (which extra provides which module) stays in step with
pyproject.toml's extras, and `DependencyError` says what to install."""

from __future__ import annotations

import pickle
import re
import tomllib
from pathlib import Path

import pytest

from rewardlab._lazy import OPTIONAL, dependency_error, extras_for, missing, require
from rewardlab.core.registry import BUILTINS, NEEDS
from rewardlab.errors import DependencyError, RewardLabError

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
EXTRAS = PYPROJECT["project"]["optional-dependencies"]


def _distribution(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _own(extra: str) -> set[str]:
    """The distributions an extra lists itself (not through `rewardlab[other]`)."""
    return {_distribution(r) for r in EXTRAS[extra] if not r.startswith("rewardlab")}


def test_every_optional_module_is_in_the_extra_it_names():
    for module, (extra, distribution) in OPTIONAL.items():
        assert extra in EXTRAS, f"{module}: no extra {extra!r} in pyproject.toml"
        assert distribution.lower().replace("_", "-") in _own(extra), f"{module}: {distribution} is not in [{extra}]"


def test_every_distribution_of_the_user_extras_has_its_module_listed():
    listed = {d.lower().replace("_", "-") for _, d in OPTIONAL.values()}
    for extra in EXTRAS:
        if extra in ("dev", "all"):
            continue
        assert _own(extra) <= listed, f"add the import names of {sorted(_own(extra) - listed)} ([{extra}]) to OPTIONAL"


def test_what_builtins_need_is_optional_and_registered():
    assert set(NEEDS) <= set(BUILTINS)
    assert {m for modules in NEEDS.values() for m in modules} <= set(OPTIONAL)


def test_dependency_error_is_an_import_error_that_names_the_extra():
    error = DependencyError("reward 'math.answer'", ["sympy", "latex2sympy2_extended"], ["math"])
    assert isinstance(error, ImportError) and isinstance(error, RewardLabError) and error.exit_code == 1
    assert str(error) == "reward 'math.answer' needs sympy, latex2sympy2_extended (not installed): pip install 'rewardlab[math]'"
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again), again.extras, again.modules) == (DependencyError, str(error), ("math",), error.modules)


def test_dependency_error_reads_the_missing_module_of_an_import_failure():
    deep = ModuleNotFoundError("No module named 'sympy.core'", name="sympy.core")
    found = dependency_error(deep, "x")
    assert found is not None and found.extras == ("math",) and found.modules == ("sympy",)
    try:
        try:
            raise ModuleNotFoundError("No module named 'fastapi'", name="fastapi")
        except ImportError as exc:
            raise RuntimeError("while starting") from exc
    except RuntimeError as wrapped:
        assert dependency_error(wrapped, "x").extras == ("serve",)  # type: ignore[union-attr]
    # an installed module that fails inside is a bug to see, not a missing extra
    assert dependency_error(ImportError("cannot import name 'x' from 'json'", name="json"), "x") is None


def test_require_imports_or_names_the_extra():
    assert require("json", needed_by="test").dumps([1]) == "[1]"
    with pytest.raises(DependencyError, match=r"test needs rewardlab_no_such_module .*pip install 'rewardlab\[demo\]'"):
        require("rewardlab_no_such_module", needed_by="test", extra="demo")
    assert missing("json", "rewardlab_no_such_module", "rewardlab_no_such_module.sub") == ["rewardlab_no_such_module", "rewardlab_no_such_module.sub"]
    assert extras_for(["torch", "sympy", "transformers", "json"]) == ["models", "math"]


def test_a_command_group_names_its_own_extra_only_for_what_it_provides():
    from rewardlab.cli.main import GROUP_EXTRAS

    for group, (extra, modules) in GROUP_EXTRAS.items():
        provided = _own(extra) | {d for r in EXTRAS[extra] if r.startswith("rewardlab[") for x in r[10:-1].split(",") for d in _own(x)}
        assert {OPTIONAL[m][1].lower().replace("_", "-") for m in modules} <= provided, group


# Run in a fresh interpreter where every optional module is unimportable (a None entry in
# sys.modules makes `import torch` raise ModuleNotFoundError, as on a core-only install).
_IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, sys
from rewardlab._lazy import OPTIONAL
for name in OPTIONAL:
    sys.modules[name] = None
import rewardlab
from rewardlab.errors import DependencyError
outcome = {}
for info in pkgutil.walk_packages(rewardlab.__path__, "rewardlab."):
    try:
        importlib.import_module(info.name)
    except DependencyError as exc:
        outcome[info.name] = ["dependency", list(exc.extras)]
    except ImportError as exc:
        outcome[info.name] = ["plain", f"{type(exc).__name__}: {exc}"]
    else:
        outcome[info.name] = ["ok", []]
print(json.dumps(outcome))
"""


@pytest.mark.slow
def test_importing_any_module_without_its_extra_names_the_extra():
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _IMPORT_EVERY_MODULE], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.splitlines()[-1])
    plain = {name: why for name, (kind, why) in outcome.items() if kind == "plain"}
    # the adapters that import a trainer (verl, OpenRLHF, TRL, imitation) fail as the trainer does:
    # it is the user's, not one of our extras
    trainers = ("verl", "openrlhf", "trl", "imitation")
    assert not {n: w for n, w in plain.items() if not any(t in n or t in w for t in trainers)}
    assert outcome["rewardlab.models.heads"] == ["dependency", ["models"]]
    assert outcome["rewardlab.serve.app"][0] == "dependency" and "serve" in outcome["rewardlab.serve.app"][1]
    assert outcome["rewardlab.verify.math.symbolic"] == ["dependency", ["math"]]
    assert outcome["rewardlab.envs.officeworld"] == ["dependency", ["rl"]]
    assert outcome["rewardlab.core.registry"] == ["ok", []]
    assert sum(kind == "dependency" for kind, _ in outcome.values()) >= 25
