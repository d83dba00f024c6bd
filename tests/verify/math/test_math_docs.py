"""Every Python block in docs/math.md runs."""

from __future__ import annotations

import pytest

from doc_examples import block_params, fenced_blocks, python_blocks, run_block

PAGE = "math.md"


def test_doc_has_examples() -> None:
    assert len(python_blocks(PAGE)) >= 8


@pytest.mark.parametrize("code", block_params(PAGE))
def test_doc_block_runs(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run_block(code, PAGE, monkeypatch)


def test_spec_block_builds() -> None:
    from rewardlab.compose import build

    reward = build(fenced_blocks(PAGE, "toml")[0])
    assert "math.answer" in repr(reward) or "correct" in repr(reward)
