"""Run Python or the `rewardlab` command in a real interpreter where optional dependencies cannot
be imported, as in an install without the extras.

A `sitecustomize` module, first on the child's path, puts a meta-path finder in front of every
other one; it raises `ModuleNotFoundError` (with `name` set, as a missing package does) for the
blocked top-level names, so `import sympy` and `importlib.util.find_spec("sympy")` both fail
there as they would with sympy not installed. The package under test is imported from this
checkout's `src`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from rewardlab._lazy import OPTIONAL

SRC = Path(__file__).resolve().parents[1] / "src"
EVERY_EXTRA = tuple(OPTIONAL)

_SITECUSTOMIZE = '''
import os
import sys

_BLOCKED = frozenset(os.environ["REWARDLAB_TEST_BLOCKED"].split(","))


class _NotInstalled:
    """Behaves for the blocked names as if they were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
'''


def _environment(tmp_path: Path, blocked: Iterable[str]) -> dict[str, str]:
    site = tmp_path / "_blocked_site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "COLUMNS"))}
    env.update(PYTHONPATH=f"{site}{os.pathsep}{SRC}", REWARDLAB_TEST_BLOCKED=",".join(blocked), COLUMNS="100")
    return env


def run_python(code: str, tmp_path: Path, *, blocked: Iterable[str] = EVERY_EXTRA) -> subprocess.CompletedProcess[str]:
    """`python -c code` with `blocked` not importable, in `tmp_path`."""
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=_environment(tmp_path, blocked),
        capture_output=True, text=True, timeout=300,
    )


def run_cli(args: list[str], tmp_path: Path, *, blocked: Iterable[str] = EVERY_EXTRA) -> subprocess.CompletedProcess[str]:
    """`rewardlab ARGS` (the console script's entry point) with `blocked` not importable."""
    return run_python(f"from rewardlab.cli.main import run; import sys; sys.argv[1:] = {args!r}; run()", tmp_path, blocked=blocked)

