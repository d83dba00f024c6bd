"""Style and types are checked in CI: ruff on the whole tree, mypy strict on the foundation."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STRICT = ["src/rewardlab/core", "src/rewardlab/compose", "src/rewardlab/runner", "src/rewardlab/store", "src/rewardlab/errors.py",
          "src/rewardlab/models"]


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True)


def test_ruff_is_clean():
    result = run("ruff", "check", "src", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_mypy_strict_on_the_foundation():
    result = run("mypy", *STRICT)
    assert result.returncode == 0, result.stdout + result.stderr
