"""The ```python blocks of a page in docs/, and how a docs test runs one as a reader would."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def python_blocks(page: str) -> list[str]:
    """Every ```python block of docs/`page`, in order (none if the page is missing)."""
    doc = DOCS / page
    return re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.DOTALL) if doc.exists() else []


def run_block(code: str, page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run one block from the project root, in a real module (dataclasses need one)."""
    monkeypatch.chdir(DOCS.parent)  # examples name paths from the project root
    module = types.ModuleType(f"{Path(page).stem}_docs_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, str(DOCS / page), "exec"), module.__dict__)
