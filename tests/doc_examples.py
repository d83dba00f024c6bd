"""The fenced blocks of a docs page, and how a docs test runs a ```python block as a reader would.

A page is named as a file of docs/ (`"credit.md"`), or `"README.md"`, the project's front page.
Every docs test reads its page here, so a page's blocks are found one way for all of them.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Collection
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = "```"


def page_path(page: str) -> Path:
    """The file of a page: docs/`page`, or the project's README.md."""
    return ROOT / page if page == "README.md" else DOCS / page


def page_text(page: str) -> str:
    """The text of a page (a missing page raises: a docs test must not pass on no page)."""
    return page_path(page).read_text(encoding="utf-8")


def fenced_blocks(page: str, language: str = "python") -> list[str]:
    """Every block of the page fenced as ```language (`""`: a plain ``` fence), in order.

    A fence opens at the start of a line and closes on a line that is only ```, as in
    CommonMark, so a ``` inside a block (a markdown answer in a string) neither ends it nor
    opens another. A page without such a block raises: a docs test over no blocks would pass
    without checking anything.
    """
    blocks: list[str] = []
    info: str | None = None  # the open fence's language, None outside a block
    lines: list[str] = []
    for line in page_text(page).splitlines(keepends=True):
        if info is None:
            if line.startswith(FENCE):
                info, lines = line[len(FENCE) :].strip(), []
        elif line.rstrip() == FENCE:
            if info == language:
                blocks.append("".join(lines))
            info = None
        else:
            lines.append(line)
    if not blocks:
        raise LookupError(f"{page_path(page)} has no {FENCE}{language} block")
    return blocks


def python_blocks(page: str) -> list[str]:
    """Every ```python block of the page, in order (raises if there is none)."""
    return fenced_blocks(page, "python")


def block_params(
    page: str, marks: Callable[[str], Collection[pytest.MarkDecorator]] = lambda code: ()
) -> list:
    """The page's python blocks as pytest parameters with ids block0, block1, ...

    `marks(code)` gives the marks of one block, e.g. `slow` for the blocks that import torch.
    """
    blocks = python_blocks(page)
    return [pytest.param(code, id=f"block{i}", marks=marks(code)) for i, code in enumerate(blocks)]


def run_block(
    code: str,
    page: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    cwd: Path = ROOT,
    module: types.ModuleType | None = None,
) -> types.ModuleType:
    """Run one block as a reader would and return the module it ran in.

    It runs in a real module (dataclasses and pickling look their class's module up in
    `sys.modules`), from `cwd`: the project root by default, since examples name their paths
    from there; a directory of the test's own for a block that writes files. Pass the module an
    earlier block returned to run a page's blocks in one namespace, as a reader going down it.
    """
    monkeypatch.chdir(cwd)
    if module is None:
        module = types.ModuleType(f"{Path(page).stem}_docs_example")
        monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, str(page_path(page)), "exec"), module.__dict__)
    return module


def run_blocks_in_order(page: str, monkeypatch: pytest.MonkeyPatch, *, cwd: Path = ROOT) -> int:
    """Run every python block of the page in order in one module; return how many ran."""
    module = None
    blocks = python_blocks(page)
    for code in blocks:
        module = run_block(code, page, monkeypatch, cwd=cwd, module=module)
    return len(blocks)
