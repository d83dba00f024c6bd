"""Every ```python block in docs/author.md runs as written and prints something."""

from __future__ import annotations

import pytest

from doc_examples import python_blocks, run_block

BLOCKS = python_blocks("author.md")


def test_docs_have_examples():
    assert len(BLOCKS) >= 7


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_doc_block_runs(code, capsys, monkeypatch):
    run_block(code, "author.md", monkeypatch)
    assert capsys.readouterr().out
