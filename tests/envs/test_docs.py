"""Every python snippet in docs/envs.md runs."""

from __future__ import annotations

import pytest

from doc_examples import block_params, python_blocks, run_block

PAGE = "envs.md"


@pytest.mark.parametrize("code", block_params(PAGE))
def test_doc_snippet_runs(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run_block(code, PAGE, monkeypatch)


def test_doc_has_snippets() -> None:
    assert len(python_blocks(PAGE)) >= 17
