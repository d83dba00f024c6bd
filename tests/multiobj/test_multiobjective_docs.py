"""Every python block of docs/multiobjective.md runs, in order (later blocks use earlier results)."""

from __future__ import annotations

from pathlib import Path

import pytest

from doc_examples import python_blocks, run_blocks_in_order

PAGE = "multiobjective.md"


def test_page_runs_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert run_blocks_in_order(PAGE, monkeypatch, cwd=tmp_path) == len(python_blocks(PAGE)) >= 8
    assert (tmp_path / "front-report" / "front.html").is_file()
