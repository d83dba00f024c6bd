"""docs/integrations.md stays true: its Python blocks run, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"


def test_python_blocks_run_in_order(monkeypatch):
    monkeypatch.chdir(DOC.parents[1])  # the README snippet names examples/quickstart.toml
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 5
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
