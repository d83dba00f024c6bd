"""Every ```python block in docs/credit.md runs as written (torch/TRL blocks are marked slow)."""

from __future__ import annotations

import pytest

from doc_examples import block_params, python_blocks, run_block

PAGE = "credit.md"


def test_docs_have_examples():
    assert len(python_blocks(PAGE)) >= 13


def _slow_if_heavy(block: str) -> list[pytest.MarkDecorator]:
    """Blocks importing trl or torch take 5-20 s on a loaded machine: run them as slow tests."""
    return [pytest.mark.slow] if "from trl" in block or "import torch" in block else []


@pytest.mark.parametrize("code", block_params(PAGE, marks=_slow_if_heavy))
def test_doc_block_runs(code, capsys, monkeypatch):
    run_block(code, PAGE, monkeypatch)
    assert capsys.readouterr().out  # every block shows something


@pytest.mark.slow
def test_trl_hook_uses_real_trl_api_names():
    trl = pytest.importorskip("trl")
    for name in ("_calculate_rewards", "_generate_and_score_completions", "_compute_loss"):
        assert hasattr(trl.GRPOTrainer, name), f"TRL renamed {name}; update docs/credit.md"
