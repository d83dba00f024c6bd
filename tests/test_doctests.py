"""Every docstring example (`>>>`) in the package runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted((SRC / "rewardlab").rglob("*.py")):
        if ">>>" in path.read_text(encoding="utf-8"):
            names.append(".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__"))
    return names


MODULES = _modules_with_examples()


def test_the_package_has_examples():
    assert len(MODULES) >= 20


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(module) if t.examples]
    assert tests, f"{name} mentions >>> but doctest finds no example in its docstrings"
    out = io.StringIO()
    for test in tests:
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()
