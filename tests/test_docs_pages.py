"""Every page of docs/ with ```python blocks has a docs test that runs them through doc_examples."""

from __future__ import annotations

import ast

from doc_examples import DOCS, ROOT, fenced_blocks

TESTS = ROOT / "tests"
RUNNERS = {"block_params", "run_block", "run_blocks_in_order"}  # what runs a page's python blocks


def _pages_read_by_tests() -> dict[str, list[str]]:
    """Page name -> the test files that import a runner of doc_examples and name the page."""
    readers: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "doc_examples" for a in n.names}
        if not imported & RUNNERS:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".md"):
                readers.setdefault(node.value, []).append(str(path.relative_to(ROOT)))
    return readers


def _pages_with_python() -> list[str]:
    pages = []
    for doc in sorted(DOCS.glob("*.md")):
        try:
            fenced_blocks(doc.name, "python")
        except LookupError:
            continue
        pages.append(doc.name)
    return pages


def test_every_page_with_python_blocks_has_a_docs_test():
    pages = _pages_with_python()
    assert len(pages) >= 15  # the docs/ pages with examples today
    readers = _pages_read_by_tests()
    unread = [page for page in pages if page not in readers]
    assert not unread, f"no docs test runs the python blocks of {unread}: add one (tests/doc_examples.py)"


def test_the_readme_has_a_docs_test():
    assert "README.md" in _pages_read_by_tests()
