"""Style and types are checked in CI: ruff on the whole tree, mypy strict on the whole package."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True)


def test_ruff_is_clean():
    result = run("ruff", "check", "src", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_configured_strict_on_every_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["files"] == ["src/rewardlab"]
    strict = [o for o in config.get("overrides", []) if o.get("strict")]
    assert any({"rewardlab", "rewardlab.*"} <= set(o["module"]) for o in strict)
    assert not [o for o in config.get("overrides", []) if o.get("strict") is False or o.get("ignore_errors")]


@pytest.mark.slow
def test_mypy_strict_on_the_whole_package(mypy_result):
    """`mypy_result` (conftest.py) is mypy run on the files and strictness of pyproject.toml; it
    starts as the run begins, so it types the package while the other tests run."""
    assert mypy_result.returncode == 0, mypy_result.stdout + mypy_result.stderr


def test_code_cites_no_issue_numbers_and_no_docs_outside_the_repo():
    """Comments, docstrings and --help give reasons and cite files in the repo, not history."""
    pattern = re.compile(r"\bissue\s*#?\d+|\(issue\b|\bDESIGN\.md\b", re.IGNORECASE)
    files = [*sorted((ROOT / "src").rglob("*.py")), ROOT / "Makefile", ROOT / "pyproject.toml"]
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)
