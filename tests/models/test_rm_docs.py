"""Every python snippet in docs/models.md runs."""

import pytest

from doc_examples import block_params, python_blocks, run_block

PAGE = "models.md"


def test_the_doc_has_snippets():
    assert len(python_blocks(PAGE)) >= 7


@pytest.mark.parametrize("code", block_params(PAGE))
def test_snippet_runs(code, monkeypatch):
    run_block(code, PAGE, monkeypatch)
