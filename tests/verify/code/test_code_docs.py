"""The python snippets of docs/code.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rewardlab.sandbox import find_bwrap

DOC = Path(__file__).resolve().parents[3] / "docs" / "code.md"
SNIPPETS = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), re.DOTALL | re.MULTILINE)


@pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed; CI installs it")
@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_doc_snippet_runs(snippet: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(snippet, str(DOC), "exec"), {"__name__": "__doc__"})
    printed = capsys.readouterr().out
    for expected in re.findall(r"#\s*(.+)$", snippet, re.MULTILINE):
        if expected.startswith(("0.5 [", "0.0 [", "1.0 [", "1.1", "bubblewrap", "ok HELLO", "[1, 2, 1, 2]", "['compile_error", "1.0 code_contests")):
            assert expected.strip() in printed


def test_docs_have_snippets() -> None:
    assert len(SNIPPETS) >= 3
