"""The public surface of `rewardlab.select`, and what importing it costs."""

from __future__ import annotations

import subprocess
import sys

import rewardlab.select as select


def test_all_names_exist():
    assert len(select.__all__) == len(set(select.__all__))
    for name in select.__all__:
        assert hasattr(select, name), name


def test_import_pulls_in_no_heavy_dependency():
    code = (
        "import sys, rewardlab.select; heavy = {'torch', 'sympy', 'matplotlib', 'httpx', 'sklearn', 'scipy', 'fastapi'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_nothing_below_select_imports_it():
    # DESIGN.md: select is a later package; core, verify, shape, evaluate... never depend on it
    from pathlib import Path

    src = Path(select.__file__).resolve().parents[1]
    offenders = [str(p.relative_to(src)) for p in src.rglob("*.py")
                 if "rewardlab.select" in p.read_text(encoding="utf-8")
                 and not p.is_relative_to(src / "select") and p.name != "select.py"]  # fmt: skip
    assert offenders == []


def test_the_curve_and_pick_methods_are_the_literals_the_cli_offers():
    from rewardlab.core.choices import choices_of
    from rewardlab.select.curves import METHODS
    from rewardlab.select.options import CurveMethod, PickMethod

    assert tuple(METHODS) == choices_of(CurveMethod)
    assert set(choices_of(PickMethod)) == set(METHODS) - {"oracle"}  # pick runs every selector, not pass@n
