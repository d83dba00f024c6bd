"""docs/rewards.md stays true: its Python blocks run, in order, in one namespace, and its TOML
judge example builds."""

from __future__ import annotations

from doc_examples import fenced_blocks, run_blocks_in_order
from rewardlab import build

PAGE = "rewards.md"


def test_python_blocks_run_in_order(monkeypatch):
    assert run_blocks_in_order(PAGE, monkeypatch) >= 7


def test_judge_toml_example_builds():
    component = fenced_blocks(PAGE, "toml")[0]
    reward = build('[reward]\nname = "judged"\n' + component)
    assert reward.components[0].reward.name == "judge.llm"
