"""Every python snippet in docs/demonstrations.md runs."""

from __future__ import annotations

import pytest

from doc_examples import block_params, python_blocks, run_block

PAGE = "demonstrations.md"


#: blocks that load the text backbone or fit the larger models take a few seconds each
SLOW = ("goal_baseline_text", "TemporalDistanceProgress.fit", 'kind="gaussian"')


def _marks(code: str) -> list[pytest.MarkDecorator]:
    return [pytest.mark.slow] if any(word in code for word in SLOW) else []


@pytest.mark.parametrize("code", block_params(PAGE, _marks))
def test_doc_snippet_runs(code: str, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    run_block(code, PAGE, monkeypatch, cwd=tmp_path)


def test_doc_has_snippets() -> None:
    assert len(python_blocks(PAGE)) >= 8
