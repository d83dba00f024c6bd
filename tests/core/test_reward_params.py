"""A reward's parameters are declared once, in its `__init__` signature: `params` (describe,
spec_hash, repr) is recorded from the call, and the registry (`rewardlab list-rewards`, spec
checks) reads the same signature."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

from rewardlab.core import BaseReward, Sample, registry, spec_hash
from rewardlab.envs.officeworld import OFFICE_TASKS

ROOT = Path(__file__).resolve().parents[2]


class Budget(BaseReward):
    name = "t.budget"

    def __init__(self, *, budget: int = 10, unit: str = "words", **extra: object):
        self.budget = budget

    def compute(self, sample: Sample) -> float:
        return 1.0


class StrictBudget(Budget):
    def __init__(self, *, budget: int = 3):
        super().__init__(budget=budget, unit="chars")


class Resolved(BaseReward):
    def __init__(self, *, order: tuple[str, ...] | None = None):
        self.params = {**self.params, "order": list(order or ("a", "b"))}


def test_params_are_the_call_with_defaults_filled_in():
    assert Budget(budget=4).params == {"budget": 4, "unit": "words"}


def test_a_reward_argument_is_a_collaborator_not_a_parameter():
    class Scaled(BaseReward):
        def __init__(self, inner: BaseReward, *, factor: float = 2.0):
            self.inner = inner

    assert Scaled(Budget()).params == {"factor": 2.0}


def test_open_keyword_arguments_are_spread_into_params():
    assert Budget(style="terse").params == {"budget": 10, "unit": "words", "style": "terse"}


def test_the_outermost_init_records_its_own_signature():
    assert StrictBudget().params == {"budget": 3}


def test_a_resolved_value_replaces_the_recorded_one():
    assert Resolved().params == {"order": ["a", "b"]}


def test_paths_and_tuples_are_recorded_as_json():
    class Paths(BaseReward):
        def __init__(self, *, path: Path = Path("/tmp/m"), pair: tuple[int, int] = (1, 2)):
            pass

    assert Paths().params == {"path": "/tmp/m", "pair": [1, 2]}


def test_a_wrong_call_raises_the_init_error_not_a_recording_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'budgett'"):
        StrictBudget(budgett=1)


def test_unpickling_keeps_params_without_calling_init():
    copy = pickle.loads(pickle.dumps(Budget(budget=7)))
    assert copy.params == {"budget": 7, "unit": "words"} and copy.budget == 7


# required parameters of the built-ins (the rest keep their defaults)
REQUIRED = {
    "agent.judge": {"params": {"base_url": "http://127.0.0.1:9", "model": "m"}},
    "agent.rank": {"base_url": "http://127.0.0.1:9", "model": "m"},
    "graders.python": {"source": "def grade(sample, item):\n    return 1.0\n"},
    "graders.string_check": {"operation": "eq"},
    "graders.text_similarity": {"evaluation_metric": "fuzzy_match"},
    "judge.llm": {"base_url": "http://127.0.0.1:9", "model": "m"},
    "judge.pairwise": {"base_url": "http://127.0.0.1:9", "model": "m"},
    "judge.rubric": {"criteria": [{"name": "c", "judge": "Is it right?"}], "judge": {"base_url": "http://127.0.0.1:9", "model": "m"}},
    "multiobj.curve": {"meta": "x"},
    "shaping.adaptive_length": {"max_length": 100},
    "shaping.cosine": {"max_length": 100},
    "shaping.soft_overlong": {"max_length": 100, "cache": 10},
    "text.regex": {"pattern": "a+"},
}
NEEDS_A_FILE = {"model.rm", "model.prm", "rm.trace", "model.hf", "model.hf_prm"}  # model.hf*: a model directory; batch sizes stay out of their params
NEEDS_A_FILE |= {"learn.demo", "learn.goal_baseline_text"}  # a saved learner; the text backbone: checked in tests/learn


@pytest.mark.parametrize("name", sorted(set(registry.names()) - NEEDS_A_FILE))
def test_every_builtin_describes_exactly_the_parameters_list_rewards_shows(name):
    built = registry.create(name, REQUIRED.get(name, {}))
    listed = {p.name for p in registry.info(name).params}
    described = set(built.describe()["params"])  # type: ignore[arg-type]
    if name == "judge.rubric":  # a rubric file is read into criteria/mode/threshold: its content is hashed
        listed.discard("file")
    assert described == listed


def test_rm_trace_params_are_its_signature(tmp_path):
    machine = tmp_path / "coffee.txt"
    machine.write_text(OFFICE_TASKS["coffee"])
    built = registry.create("rm.trace", {"machine": str(machine)})
    assert built.params == {"machine": str(machine), "trace_key": None, "legacy_fall_off_reward": False}


# spec hashes of built-ins as the explicit params dicts gave them before params were recorded
# from the signature: the same reward with the same parameters keeps its hash across versions
HASHES = {
    ("math.answer", ()): "2c5d3405070d44c8c338c1fc71039ebf",  # with approximate (the decimal convention changed verdicts)
    ("code.tests", ()): "dc28902b7691894d085cf1d1f19b507a",  # with the language, judge, limit and standard parameters (judge="auto", 8 MiB output by default)
    ("text.exact", ()): "de1ed8bec7556d2675dc888fe98f9d24",
    ("format.tags", ()): "ecead7fcadb375e2122278ff2bd0baa0",
    ("format.tags", (("allow_empty", True),)): "4523f5c5abc75092f2aebbb1603b77a2",
    ("length.tokens", ()): "985283751ef3bc80a4c88b13085494f9",
    ("length.tokens", (("budget", 513),)): "20b20b7362cbe8a28e9053c5b3ca2257",
    ("structure.tool_call", ()): "0daa687f625e0e374865bc54dab0d018",
    ("shaping.cosine", (("max_length", 100),)): "1ace474dbc94d7763ebd08f911b3d3f5",
    ("similarity.bleu", ()): "fbd2fec1e4506f138ed5d3480a53da85",
}


@pytest.mark.parametrize(("name", "params"), list(HASHES), ids=lambda x: str(x))
def test_spec_hash_of_a_builtin_is_unchanged(name, params):
    assert spec_hash(registry.create(name, dict(params))) == HASHES[name, params]


# Rewards that still state their params by hand: each with its reason, or where it goes.
HAND_STATED = {
    "src/rewardlab/serve/client.py": "RemoteReward: its token and client options are not parameters (a secret must not be hashed or printed)",
    "src/rewardlab/models/hf_reward.py": "model.hf: batch sizes change no score, so they stay out of the hash; the chat template and combine rule are recorded as resolved from the model",
    "src/rewardlab/models/hf_prm.py": "model.hf_prm: batch sizes change no score, so they stay out of the hash; the chat template and step placement are recorded as resolved from the model",
    "src/rewardlab/judges/rubric.py": "a rubric file is read into criteria: the content, not the path, is the parameter",
}
_RESTATED = re.compile(r"self\.params\s*=(?!\s*\{\*\*self\.params)")


def test_no_reward_restates_its_signature_as_a_params_dict():
    found = {
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "src" / "rewardlab").rglob("*.py"))
        if path.name != "reward.py" or path.parent.name != "core"  # core.reward records them
        if _RESTATED.search(path.read_text(encoding="utf-8"))
    }
    assert found == set(HAND_STATED), "record params from __init__ (BaseReward does) instead of restating them"
