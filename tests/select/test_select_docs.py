"""Every ```python block in docs/select.md runs as written and prints something."""

from __future__ import annotations

import pytest
from completions_server import CompletionsServer

from doc_examples import python_blocks, run_block

BLOCKS = python_blocks("select.md")


def test_docs_have_examples():
    assert len(BLOCKS) >= 6


@pytest.fixture(scope="module")
def generator_server():
    """The loopback fake model the generator examples read from GENERATOR_BASE_URL."""
    with CompletionsServer() as server:
        yield server


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_doc_block_runs(code, capsys, monkeypatch, generator_server):
    monkeypatch.setenv("GENERATOR_BASE_URL", generator_server.base_url)
    run_block(code, "select.md", monkeypatch)
    assert capsys.readouterr().out
