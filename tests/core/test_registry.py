import pytest

from rewardlab.core import Registry, Sample, registry, reward
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
