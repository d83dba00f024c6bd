"""docs/rewards.md stays true: its Python blocks run, in order, in one namespace, and its TOML
judge example builds."""

from __future__ import annotations

import re
from pathlib import Path

from rewardlab import build

DOC = (Path(__file__).resolve().parents[2] / "docs" / "rewards.md").read_text()


def test_python_blocks_run_in_order():
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", DOC, flags=re.DOTALL):
        exec(compile(block, "docs/rewards.md", "exec"), namespace)


def test_judge_toml_example_builds():
    component = re.findall(r"```toml\n(.*?)```", DOC, flags=re.DOTALL)[0]
    reward = build('[reward]\nname = "judged"\n' + component)
    assert reward.components[0].reward.name == "judge.llm"
