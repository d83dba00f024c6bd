"""Every ```python block in docs/diffusion.md runs as written (torch blocks are marked slow)."""

from __future__ import annotations

import pytest

from doc_examples import block_params, python_blocks, run_block

PAGE = "diffusion.md"


def test_docs_have_examples():
    assert len(python_blocks(PAGE)) >= 9


def _slow_if_torch(block: str) -> list[pytest.MarkDecorator]:
    """Blocks that train the toy model take a few seconds on a loaded machine."""
    return [pytest.mark.slow] if "rewardlab.diffusion" in block else []


@pytest.mark.parametrize("code", block_params(PAGE, marks=_slow_if_torch))
def test_doc_block_runs(code, capsys, monkeypatch):
    run_block(code, PAGE, monkeypatch)
    assert capsys.readouterr().out  # every block shows something
