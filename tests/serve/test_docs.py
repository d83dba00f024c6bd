"""The python examples in docs/serve.md run as written and print the values their comments show."""

from __future__ import annotations

import re

import pytest

from doc_examples import block_params, python_blocks, run_block

PAGE = "serve.md"


def test_docs_have_examples():
    assert len(python_blocks(PAGE)) >= 3


@pytest.mark.network
@pytest.mark.parametrize("code", block_params(PAGE))
def test_doc_example_runs(code, capsys, monkeypatch):
    run_block(code, PAGE, monkeypatch)
    printed = capsys.readouterr().out
    for expected in re.findall(r"# (\[[^\]]*\]|\d+\.\d+)\s*$", code, flags=re.MULTILINE):
        assert expected in printed
