"""The python snippets of docs/code.md run as written."""

from __future__ import annotations

import re

import pytest

from doc_examples import block_params, python_blocks, run_block
from rewardlab.sandbox.config import find_bwrap

PAGE = "code.md"


@pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it")
@pytest.mark.parametrize("snippet", block_params(PAGE))
def test_doc_snippet_runs(snippet: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run_block(snippet, PAGE, monkeypatch)
    printed = capsys.readouterr().out
    for expected in re.findall(r"#\s*(.+)$", snippet, re.MULTILINE):
        if expected.startswith(("0.5 [", "0.0 [", "1.0 [", "1.1", "bubblewrap", "ok HELLO", "[1, 2, 1, 2]", "['compile_error", "1.0 code_contests")):
            assert expected.strip() in printed


def test_docs_have_snippets() -> None:
    assert len(python_blocks(PAGE)) >= 8
