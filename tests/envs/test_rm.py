"""Reward machines: guard parser, format, determinism check, text importer, no-match policies."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardlab.envs.rm import (
    NoTransitionError,
    RewardMachine,
    parse_guard,
    parse_text_rm,
    to_text_rm,
)
from rewardlab.envs.rm.counterfactual import counterfactual_experiences
from rewardlab.envs.rm.shaping import rm_values
from rewardlab.errors import InputError, SpecError

T1 = """0 # initial state
[2] # terminal state
(0,0,'!f&!n',ConstantRewardFunction(0))
(0,1,'f&!n',ConstantRewardFunction(0))
(1,1,'!g&!n',ConstantRewardFunction(0))
(1,2,'g&!n',ConstantRewardFunction(1))
"""


@pytest.mark.parametrize(
    ("guard", "labels", "expected"),
    [
        ("a", {"a"}, True),
        ("a", set(), False),
        ("!a", set(), True),
        ("a & !b", {"a", "b"}, False),
        ("a|b&c", {"a"}, True),  # & binds tighter than |
        ("(a|b)&c", {"a"}, False),
        ("!!a", {"a"}, True),
        ("True", set(), True),
        ("False", {"a"}, False),
        ("coffee.hot & !office_2", {"coffee.hot"}, True),
    ],
)
def test_guard_truth_table(guard: str, labels: set[str], expected: bool) -> None:
    assert parse_guard(guard)(frozenset(labels)) is expected


@pytest.mark.parametrize("bad", ["", "a &", "& a", "(a", "a)", "a b", "__import__('os').system('x')", "a ^ b"])
def test_guard_malformed_is_spec_error(bad: str) -> None:
    with pytest.raises(SpecError, match="guard"):
        parse_guard(bad, where="edges[0].guard")


def test_guard_never_evaluates_python() -> None:
    # a name that looks like code is just a proposition (or an error), never executed
    g = parse_guard("os.system")
    assert g.props == {"os.system"} and g(frozenset({"os.system"}))


def test_text_importer_office_coffee() -> None:
    rm = parse_text_rm(T1)
    assert rm.initial == "0" and rm.accepting == {"2"} and rm.no_match == "reject"
    steps = rm.run([set(), {"f"}, set(), {"g"}])
    assert [s.state for s in steps] == ["0", "1", "1", "2"]
    assert steps[-1].accepted and steps[-1].reward == 1.0
    assert sum(s.reward for s in steps) == 1.0


def test_fall_off_is_failure_with_zero_reward_by_default() -> None:
    step = parse_text_rm(T1).run([{"f"}, {"n"}])[-1]
    assert step.rejected and step.reward == 0.0 and step.edge is None


def test_legacy_fall_off_reward_reproduces_original_code() -> None:
    rm = parse_text_rm(T1, legacy_fall_off_reward=True)
    assert rm.run([{"f"}, {"n"}])[-1].reward == 1.0  # the state owning the accepting edge
    assert rm.run([{"n"}])[-1].reward == 0.0  # other states: 0


def test_text_roundtrip() -> None:
    rm = parse_text_rm(T1)
    again = parse_text_rm(to_text_rm(rm))
    assert again.to_dict() | {"name": ""} == rm.to_dict() | {"name": ""}


def test_text_importer_names_bad_line() -> None:
    bad = T1 + "(1,2,'g',__import__('os').system('echo pwned'))\n"
    with pytest.raises(InputError, match=r"t1.txt:7"):
        parse_text_rm(bad, source="t1.txt")


def test_text_importer_old_format_without_terminal_line() -> None:
    text = "0\n(0,0,'!a',ConstantRewardFunction(0))\n(0,1,'a',ConstantRewardFunction(1))\n(1,1,'True',ConstantRewardFunction(0))\n"
    rm = parse_text_rm(text)
    assert rm.accepting == {"1"} and rm.run([{"a"}])[-1].accepted


def test_determinism_check_rejects_overlapping_guards() -> None:
    edges = [{"from": "u", "to": "v", "guard": "a", "reward": 0}, {"from": "u", "to": "w", "guard": "b", "reward": 1}]
    with pytest.raises(SpecError, match=r"non-deterministic.*\['a', 'b'\]"):
        RewardMachine(edges, initial="u")


def test_determinism_check_names_text_line() -> None:
    text = "0\n[2]\n(0,1,'a',ConstantRewardFunction(0))\n(0,2,'a&b',ConstantRewardFunction(1))\n"
    with pytest.raises(InputError, match="line 4: non-deterministic"):
        parse_text_rm(text, source="bad.txt")


def test_exclusive_guards_pass_determinism_check() -> None:
    edges = [{"from": "u", "to": "v", "guard": "a & !b", "reward": 0}, {"from": "u", "to": "w", "guard": "b", "reward": 1}]
    assert RewardMachine(edges, initial="u").n_states == 3


def test_no_match_policies() -> None:
    edges = [{"from": "u", "to": "v", "guard": "a", "reward": 1}]
    stay = RewardMachine(edges, initial="u", accepting=["v"], no_match="stay").step("u", {"b"})
    assert (stay.state, stay.reward, stay.terminal) == ("u", 0.0, False)
    rej = RewardMachine(edges, initial="u", accepting=["v"], no_match="reject").step("u", {"b"})
    assert rej.rejected and rej.reward == 0.0
    with pytest.raises(NoTransitionError, match="no edge from 'u' matches"):
        RewardMachine(edges, initial="u", accepting=["v"], no_match="error").step("u", {"b"})


def test_stepping_a_terminal_state_is_an_error() -> None:
    rm = parse_text_rm(T1)
    with pytest.raises(NoTransitionError, match="terminal state"):
        rm.step("2", set())


def test_dict_format_errors_are_listed_together() -> None:
    with pytest.raises(SpecError) as err:
        RewardMachine.from_dict({"edgez": [], "no_match": "skip"})
    text = str(err.value)
    assert "edgez: unknown key" in text and "initial: required" in text and "edges: required" in text


def test_bad_reward_and_edges_from_terminal(tmp_path) -> None:
    with pytest.raises(SpecError, match=r"edges\[0\].reward: not a number"):
        RewardMachine([{"from": "u", "to": "v", "guard": "a", "reward": "lots"}], initial="u")
    with pytest.raises(SpecError, match="leaves terminal state"):
        RewardMachine([{"from": "v", "to": "u", "guard": "a"}], initial="u", accepting=["v"])


def test_load_toml_json_and_txt(tmp_path) -> None:
    rm = parse_text_rm(T1)
    (tmp_path / "t.json").write_text(json.dumps(rm.to_dict()))
    (tmp_path / "t.txt").write_text(T1)
    (tmp_path / "t.toml").write_text(
        'initial = "0"\naccepting = ["2"]\nno_match = "reject"\n'
        + "".join(
            f'[[edges]]\nfrom = "{e["from"]}"\nto = "{e["to"]}"\nguard = "{e["guard"]}"\nreward = {e["reward"]}\n'
            for e in rm.to_dict()["edges"]
        )
    )
    trace = [set(), {"f"}, {"g"}]
    for name in ("t.json", "t.txt", "t.toml"):
        loaded = RewardMachine.load(tmp_path / name)
        assert [s.reward for s in loaded.run(trace)] == [0.0, 0.0, 1.0], name
    (tmp_path / "broken.toml").write_text("initial = ")
    with pytest.raises(InputError, match=r"broken\.toml"):
        RewardMachine.load(tmp_path / "broken.toml")
    with pytest.raises(InputError, match="cannot read"):
        RewardMachine.load(tmp_path / "missing.toml")


def test_rm_values_coffee() -> None:
    v = rm_values(parse_text_rm(T1), gamma=0.9)
    assert v.tolist() == pytest.approx([0.9, 1.0, 0.0])


_labels = st.frozensets(st.sampled_from("abcdefgn"), max_size=2)


@given(st.lists(_labels, max_size=30))
def test_counterfactuals_are_valid_product_transitions(trace: list[frozenset[str]]) -> None:
    """Every counterfactual experience equals a real machine step from that state."""
    from rewardlab.envs.officeworld import OFFICE_TASKS, office_task

    rms = [office_task(name) for name in OFFICE_TASKS]
    for labels in trace:
        for exp in counterfactual_experiences(rms, labels):
            real = rms[exp.task].step(exp.state, labels)
            assert (exp.next_state, exp.reward, exp.terminated) == (real.state, real.reward, real.terminal)
        n_live = sum(sum(not rm.is_terminal(s) for s in rm.states) for rm in rms)
        assert len(counterfactual_experiences(rms, labels)) == n_live


def test_history_dependent_task_needs_the_rm() -> None:
    """'a then b' pays 1 after the trace (a, b) but 0 after (b, a)... and the last base state is
    the same in both, so no Markov reward on the base state can tell them apart."""
    rm = RewardMachine(
        [
            {"from": "0", "to": "1", "guard": "a", "reward": 0},
            {"from": "1", "to": "2", "guard": "b", "reward": 1},
        ],
        initial="0",
        accepting=["2"],
    )
    ab = sum(s.reward for s in rm.run([{"a"}, {"b"}]))
    ba = sum(s.reward for s in rm.run([{"b"}, {"a"}]))
    assert (ab, ba) == (1.0, 0.0)


@pytest.mark.parametrize(
    "module",
    [
        "rewardlab.envs", "rewardlab.envs.rm", "rewardlab.envs.officeworld", "rewardlab.envs.tabular",
        "rewardlab.envs.preferences", "rewardlab.envs.intrinsic", "rewardlab.envs.redistribution",
        "rewardlab.envs.starc", "rewardlab.envs.gridworld", "rewardlab.envs.rm.wrapper",
        "rewardlab.envs.rm.hierarchical", "rewardlab.envs.rm.timed", "rewardlab.envs.rm.counterfactual",
        "rewardlab.envs.rm.compiled", "rewardlab.envs.rm.labels", "rewardlab.envs.rm.observations",
        "rewardlab.envs.rm.sb3", "rewardlab.envs.persist", "rewardlab.envs.vec", "rewardlab.envs.rewardnet",
        "rewardlab.envs.pebble",
    ],
)  # fmt: skip
def test_public_surface_exists(module: str) -> None:
    import importlib

    mod = importlib.import_module(module)
    missing = [name for name in mod.__all__ if not hasattr(mod, name)]
    assert not missing, f"{module}.__all__ lists missing names {missing}"


def test_every_name_the_docs_import_is_public() -> None:
    import importlib
    import re

    from doc_examples import page_text

    doc = page_text("envs.md")
    imports = re.findall(r"from (rewardlab\.envs[\w.]*) import \(?([\w\s,]+?)\)?\n(?!\s)", doc)
    assert len(imports) >= 10
    private = [
        (module, name)
        for module, names in imports
        for name in (n.strip() for n in names.replace("\n", ",").split(","))
        if name and name not in importlib.import_module(module).__all__
    ]
    assert not private, f"docs/envs.md imports names missing from __all__: {private}"


def test_import_envs_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = "import sys, rewardlab.envs, rewardlab.envs.tabular, rewardlab.envs.officeworld; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
