from pathlib import Path

import pytest

from rewardlab.compose import build, check
from rewardlab.compose.spec import parse_spec
from rewardlab.core import Sample, Status
from rewardlab.errors import SpecError

MINIMAL = """
[reward]
name = "math-rlvr"
[[reward.components]]
name = "format"
use = "format.tags"          # registry name
weight = 0.1
[[reward.components]]
name = "correct"
use = "text.exact"
weight = 1.0
requires = ["format"]        # gate
on_error = "skip"            # zero | skip | fail
params = { extract = '<answer>(.*?)</answer>' }
"""

GOOD = "<think>t</think><answer>4</answer>"


def test_minimal_spec_from_the_issue_builds_and_scores():
    reward = build(MINIMAL)
    r = reward.score(Sample(response=GOOD, reference="4"))
    assert r.score == pytest.approx(1.1)
    assert r.components["correct"].info["extracted"] == "4"


def test_spec_from_file_and_dict_give_the_same_hash(tmp_path: Path):
    path = tmp_path / "spec.toml"
    path.write_text(MINIMAL + "\n# a comment does not change the hash\n")
    assert build(path).spec_hash == build(MINIMAL).spec_hash == build(str(path)).spec_hash
    changed = MINIMAL.replace("weight = 0.1", "weight = 0.2")
    assert build(changed).spec_hash != build(MINIMAL).spec_hash


def test_check_reports_every_problem_with_its_location():
    bad = """
[reward]
name = "x"
combine = "formula"
formula = "format + correctt"
extra_key = 1
[[reward.components]]
name = "format"
use = "format.tagz"
[[reward.components]]
name = "correct"
use = "text.exact"
requires = ["format", "missing"]
params = { case_sensitiv = true }
"""
    problems = {str(p) for p in check(bad)}
    assert any(p.startswith("reward.extra_key: unknown key") for p in problems)
    assert any("reward.components[0].use" in p and "did you mean 'format.tags'" in p for p in problems)
    assert any("reward.components[1].params.case_sensitiv" in p and "case_sensitive" in p for p in problems)


def test_structure_problems_are_all_reported():
    bad = """
[reward]
name = "x"
combine = "formula"
formula = "a + c"
[[reward.components]]
name = "a"
use = "format.tags"
requires = ["b"]
[[reward.components]]
name = "b"
use = "format.tags"
requires = ["a", "nope"]
"""
    problems = [str(p) for p in check(bad)]
    assert any("requirement cycle: a -> b -> a" in p for p in problems)
    assert any("unknown component 'nope'" in p for p in problems)
    assert any("reward.formula" in p and "unknown name 'c'" in p for p in problems)


@pytest.mark.parametrize(
    ("fragment", "message"),
    [
        ('name = "x"\n[[reward.components]]\nname = "a b"\nuse = "text.exact"', "components[0].name"),
        ('name = "x"\n[[reward.components]]\nname = "a"\nuse = "text.exact"\ncase_sensitive = true', "reward parameters go under `params`"),
        ('name = "x"\n[[reward.components]]\nname = "a"\nuse = "text.exact"\non_error = "ignore"', "components[0].on_error"),
        ('name = "x"\ncombine = "formula"\n[[reward.components]]\nname = "a"\nuse = "text.exact"', "needs a `formula`"),
        ('name = "x"\nclip = [1, 0]\n[[reward.components]]\nname = "a"\nuse = "text.exact"', "clip low"),
        ('name = "x"\ncomponents = []', "at least 1"),
        ('name = "x"\n[[reward.components]]\nname = "a"\nuse = "text.exact"\nweight = inf', "finite"),
    ],
)
def test_invalid_specs(fragment, message):
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("(", r"\(")):
        build("[reward]\n" + fragment + "\n")


def test_toml_syntax_error_names_line_and_column():
    with pytest.raises(SpecError, match=r"TOML syntax error.*line 2"):
        build("[reward]\nname = \n")


def test_missing_spec_file():
    with pytest.raises(SpecError, match="not found"):
        build("nowhere/spec.toml")


def test_parse_spec_defaults():
    spec = parse_spec(MINIMAL)
    assert spec.reward.combine == "weighted" and spec.reward.components[0].on_error == "fail"


def test_min_combine_from_spec():
    spec = MINIMAL.replace('name = "math-rlvr"', 'name = "m"\ncombine = "min"')
    r = build(spec).score(Sample(response=GOOD, reference="5"))
    assert r.status is Status.OK and r.score == 0.0
