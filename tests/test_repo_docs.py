"""ARCHITECTURE.md and CONTRIBUTING.md stay true to the code: their Python blocks run, their
links resolve, and the README links both."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("ARCHITECTURE.md", "CONTRIBUTING.md")


def _blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(encoding="utf-8"), flags=re.DOTALL)


def test_contributing_shows_how_to_add_a_reward():
    assert _blocks("CONTRIBUTING.md")


@pytest.mark.parametrize("code", [b for page in PAGES for b in _blocks(page)])
def test_python_blocks_run(code, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    module = types.ModuleType("repo_docs_example")  # a real module, as a user's file would be
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, "CONTRIBUTING.md", "exec"), module.__dict__)
    assert capsys.readouterr().out


@pytest.mark.parametrize("page", PAGES)
def test_local_links_and_paths_exist(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    links = [t for t in re.findall(r"\]\(([^)#]+)\)", text) if "://" not in t]
    paths = re.findall(r"`((?:src|tests|docs|bench)/[\w/.]+)`", text)
    assert links
    missing = [p for p in links + paths if not (ROOT / p).exists() and "*" not in p]
    assert not missing


# The README is also the package's page on a package index, where a relative link leads nowhere.
PROJECT_FILES = "https://github.com/rewardlab/rewardlab/blob/main/"


def test_readme_links_both_pages():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert f"]({PROJECT_FILES}{page})" in readme


def test_readme_links_are_absolute_and_name_files_that_exist():
    links = re.findall(r"\]\(([^)#]+)\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert links and not [link for link in links if "://" not in link]
    files = [link.removeprefix(PROJECT_FILES) for link in links if link.startswith(PROJECT_FILES)]
    assert len(files) >= 20 and not [f for f in files if not (ROOT / f).exists()]
