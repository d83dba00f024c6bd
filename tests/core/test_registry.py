import re

import pytest

from rewardlab.core import Sample, registry, reward
from rewardlab.core.registry import Registry, check_params
from rewardlab.errors import RegistryError, SpecError, UnknownRewardError


def test_builtins_are_listed_without_being_imported():
    reg = Registry(use_entry_points=False)
    assert {"text.exact", "text.regex", "format.tags", "length.tokens"} <= set(reg.names())


def test_unknown_name_suggests_close_ones():
    with pytest.raises(UnknownRewardError, match=r"did you mean 'text\.exact'"):
        registry.create("text.exat")


def test_parameter_typo_and_wrong_type_are_both_reported():
    with pytest.raises(SpecError) as err:
        registry.create("text.exact", {"case_sensitiv": True, "strip_punctuation": "maybe"})
    messages = [str(p) for p in err.value.problems]
    assert any("did you mean 'case_sensitive'" in m for m in messages)
    assert any("strip_punctuation" in m and "boolean" in m for m in messages)


def test_missing_required_parameter():
    with pytest.raises(SpecError, match="pattern: required parameter is missing"):
        registry.create("text.regex", {})


def test_invalid_value_raised_by_the_reward_becomes_a_spec_error():
    with pytest.raises(SpecError, match="invalid regular expression"):
        registry.create("text.regex", {"pattern": "("})


def test_register_function_reward_and_conflicts():
    reg = Registry(use_entry_points=False)

    @reward("acme.len")
    def length(sample, *, scale: float = 1.0):
        return scale * len(sample.response_text)

    reg.register("acme.len", length)
    assert reg.create("acme.len", {"scale": 2.0}).score(Sample(response="abc")).score == 6.0
    with pytest.raises(RegistryError):
        reg.register("acme.len", length)
    info = reg.info("acme.len")
    assert [p.name for p in info.params] == ["scale"]


def test_entry_points_of_an_installed_distribution_are_discovered(tmp_path, monkeypatch):
    # A real (minimal) installed distribution on sys.path, as pip would leave it.
    dist = tmp_path / "acme_rewards-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-rewards\nVersion: 0.1\n")
    (tmp_path / "acme_rewards.py").write_text(
        "from rewardlab import reward\n@reward('acme.shout', range=(0, 1))\ndef shout(sample):\n    return sample.response_text.isupper()\n"
    )
    (dist / "entry_points.txt").write_text("[rewardlab.rewards]\nacme.shout = acme_rewards:shout\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry(builtins={})
    assert "acme.shout" in reg.names()
    assert reg.create("acme.shout").score(Sample(response="HEY")).score == 1.0


def _package(tmp_path, **files):
    root = tmp_path / "rewardlab"
    for name, text in files.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "_registry.py").write_text(text)
    return root


def test_each_package_declares_its_builtins_in_its_registration_file(tmp_path):
    from rewardlab.core.registry import builtin_tables

    root = _package(
        tmp_path,
        alpha='BUILTINS: dict[str, str] = {"a.one": ".mod:One"}\nNEEDS = {"a.one": ("sympy",)}\n',
        beta='BUILTINS = {"b.two": "rewardlab.beta.deep.mod:Two"}\n',
    )
    tables = builtin_tables(root)
    assert dict(tables.builtins) == {"a.one": "rewardlab.alpha.mod:One", "b.two": "rewardlab.beta.deep.mod:Two"}
    assert dict(tables.needs) == {"a.one": ("sympy",)}


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"alpha": 'BUILTINS = {"x": ".m:X"}', "beta": 'BUILTINS = {"x": ".m:Y"}'}, "declared twice"),
        ({"alpha": 'BUILTINS = {"x": "rewardlab.beta.m:X"}'}, "outside rewardlab.alpha"),
        ({"alpha": 'BUILTINS = {"x": ".m"}'}, "not 'module:attribute'"),
        ({"alpha": "BUILTINS = dict(x='.m:X')"}, "literal dict"),
    ],
)
def test_a_registration_file_that_breaks_the_rules_is_refused(tmp_path, files, message):
    from rewardlab.core.registry import builtin_tables
    from rewardlab.errors import RegistryError

    with pytest.raises(RegistryError, match=message):
        builtin_tables(_package(tmp_path, **files))


def test_the_registration_files_are_the_registry_and_listing_imports_no_package():
    import importlib
    import subprocess
    import sys

    from rewardlab.core.registry import _PACKAGE_DIR, BUILTINS, NEEDS, REGISTRATION_FILE

    owners = sorted(path.parent.name for path in _PACKAGE_DIR.glob(f"*/{REGISTRATION_FILE}"))
    assert {"verify", "judges", "models", "envs"} <= set(owners)
    declared, needs = {}, {}
    for package in owners:
        module = importlib.import_module(f"rewardlab.{package}._registry")
        declared.update({k: f"rewardlab.{package}{v}" for k, v in module.BUILTINS.items()})
        needs.update(module.NEEDS)
    assert declared == BUILTINS and needs == NEEDS and len(BUILTINS) >= 44
    code = ("import sys; from rewardlab.core.registry import registry; names = registry.names(); "
            f"print(len(names), sorted(m for m in sys.modules if m.split('.')[1:2] in {[[o] for o in owners]!r}))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(maxsplit=1)
    assert int(out[0]) >= 44 and out[1].strip() == "[]"


def _number_params(name: str) -> list[str]:
    """The parameters `rewardlab list` shows as a number (`float`, `int | None`...)."""
    from rewardlab.core.registry import param_infos

    number = re.compile(r"(int|float)( \| (int|float|None))*")
    return [p.name for p in param_infos(registry.factory(name)) if number.fullmatch(p.annotation)]


NUMBER_PARAMS = [(name, param) for name in registry.names() for param in _number_params(name)]


def test_every_numeric_parameter_of_every_reward_is_checked_below():
    assert len(NUMBER_PARAMS) >= 30


@pytest.mark.parametrize(("name", "param"), NUMBER_PARAMS, ids=[f"{n}.{p}" for n, p in NUMBER_PARAMS])
def test_a_nan_number_parameter_is_a_spec_problem(name, param):
    # TOML writes `nan`; pydantic takes it for a float, and it passes every `x < 0` check after
    problems = check_params(registry.factory(name), {param: float("nan")}, location="c")
    assert any(p.location == f"c.params.{param}" and "got nan" in p.message for p in problems), problems
