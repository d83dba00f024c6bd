"""The python examples in docs/serve.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "serve.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL) if DOC.exists() else []


@pytest.mark.network
@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_doc_example_runs(code, capsys):
    exec(compile(code, str(DOC), "exec"), {"__name__": "docs_serve"})
    printed = capsys.readouterr().out
    for expected in re.findall(r"# (\[[^\]]*\]|\d+\.\d+)\s*$", code, flags=re.MULTILINE):
        assert expected in printed


def test_docs_have_examples():
    assert len(BLOCKS) >= 2
