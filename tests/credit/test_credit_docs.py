"""Every ```python block in docs/credit.md runs as written (torch/TRL blocks are marked slow)."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "credit.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL) if DOC.exists() else []


def _ids() -> list[str]:
    return [f"block{i}" for i in range(len(BLOCKS))]


def test_docs_have_examples():
    assert len(BLOCKS) >= 10


def _heavy(block: str) -> bool:
    """Blocks importing trl or torch take 5-20 s on a loaded machine: run them as slow tests."""
    return "from trl" in block or "import torch" in block


@pytest.mark.parametrize("code", [pytest.param(b, marks=pytest.mark.slow) if _heavy(b) else b for b in BLOCKS], ids=_ids())
def test_doc_block_runs(code, capsys, monkeypatch):
    module = types.ModuleType("credit_docs_example")  # a real module: dataclasses need one
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, str(DOC), "exec"), module.__dict__)
    assert capsys.readouterr().out  # every block shows something


@pytest.mark.slow
def test_trl_hook_uses_real_trl_api_names():
    trl = pytest.importorskip("trl")
    for name in ("_calculate_rewards", "_generate_and_score_completions", "_compute_loss"):
        assert hasattr(trl.GRPOTrainer, name), f"TRL renamed {name}; update docs/credit.md"
