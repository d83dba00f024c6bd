"""Every python snippet in docs/agents.md runs, in order (later blocks reuse earlier names)."""

from __future__ import annotations

import pytest

from doc_examples import run_blocks_in_order

PAGE = "agents.md"


def test_doc_snippets_run_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_blocks_in_order(PAGE, monkeypatch) >= 2
