"""Every Python block in docs/math.md runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "math.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_doc_has_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_block_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"{DOC}:block{index}", "exec"), {})


def test_spec_block_builds() -> None:
    from rewardlab.compose import build

    toml = re.findall(r"```toml\n(.*?)```", DOC.read_text(), re.DOTALL)[0]
    reward = build(toml)
    assert "math.answer" in repr(reward) or "correct" in repr(reward)
