"""Every python snippet in docs/hf_models.md runs (offline: the models are config-built)."""

import pytest

from doc_examples import block_params, python_blocks, run_block

PAGE = "hf_models.md"


def test_the_doc_has_snippets():
    assert len(python_blocks(PAGE)) >= 4


@pytest.mark.parametrize("code", block_params(PAGE))
def test_snippet_runs(code, monkeypatch):
    run_block(code, PAGE, monkeypatch)
