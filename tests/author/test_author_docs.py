"""Every ```python block in docs/author.md runs as written and prints something."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "author.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL) if DOC.exists() else []


def test_docs_have_examples():
    assert len(BLOCKS) >= 7


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_doc_block_runs(code, capsys, monkeypatch):
    monkeypatch.chdir(DOC.parents[1])  # examples name paths from the project root
    module = types.ModuleType("author_docs_example")  # a real module: dataclasses need one
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, str(DOC), "exec"), module.__dict__)
    assert capsys.readouterr().out
