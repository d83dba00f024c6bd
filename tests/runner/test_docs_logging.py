"""The python examples in docs/logging.md run as written and print what their comments show."""

from __future__ import annotations

import re

import pytest

from doc_examples import block_params, python_blocks, run_block

PAGE = "logging.md"


def test_docs_have_examples():
    assert len(python_blocks(PAGE)) >= 3


@pytest.mark.parametrize("code", block_params(PAGE))
def test_doc_example_runs(code, capsys, monkeypatch, tmp_path):
    pytest.importorskip("tensorboard")
    if "wandb" in code.lower():
        pytest.importorskip("wandb")
        monkeypatch.setenv("WANDB_SILENT", "true")
    run_block(code, PAGE, monkeypatch, cwd=tmp_path)
    printed = capsys.readouterr().out
    for expected in re.findall(r"# (\[[^\]]*\]|\d+\.\d+(?: \d+\.\d+)*)\s*(?:#.*)?$", code, flags=re.MULTILINE):
        assert expected in printed
