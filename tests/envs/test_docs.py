"""Every python snippet in docs/envs.md runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "envs.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL) if DOC.exists() else []


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_doc_snippet_runs(code: str) -> None:
    exec(compile(code, str(DOC), "exec"), {})


def test_doc_has_snippets() -> None:
    assert len(SNIPPETS) >= 8
