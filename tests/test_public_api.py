"""The public surface is small and deliberate: `__all__` is checked here."""

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import rewardlab

EXPECTED = {
    "BaseReward",
    "ErrorKind",
    "Reward",
    "RewardError",
    "RewardResult",
    "Sample",
    "Status",
    "WorkerPool",
    "__version__",
    "build",
    "register",
    "registry",
    "reward",
    "score",
}


def test_all_is_exactly_the_public_surface():
    assert set(rewardlab.__all__) == EXPECTED
    for name in rewardlab.__all__:
        assert hasattr(rewardlab, name), name


def test_import_needs_only_core_dependencies():
    code = (
        "import sys, rewardlab; heavy = {'torch', 'transformers', 'sympy', 'fastapi', 'ray', 'gymnasium', 'scipy', 'matplotlib'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_py_typed_is_shipped():
    from importlib.resources import files

    assert files("rewardlab").joinpath("py.typed").is_file()


SURFACE = Path(__file__).with_name("public_surface.txt")


def _faces() -> list[str]:
    """`rewardlab.__all__` and the `__all__` of every public package and top-level module."""
    names = [f"rewardlab.{n}" for n in sorted(rewardlab.__all__)]
    for info in sorted(pkgutil.iter_modules(rewardlab.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"rewardlab.{info.name}")
        names += [f"rewardlab.{info.name}.{n}" for n in sorted(getattr(module, "__all__", ()))]
    return names


def test_the_public_faces_are_the_recorded_surface():
    """Growth of the public API is a decision: a name added to (or dropped from) a package's
    `__all__` is added to (or dropped from) tests/public_surface.txt in the same change."""
    recorded = [line for line in SURFACE.read_text().splitlines() if line and not line.startswith("#")]
    found = _faces()
    added, dropped = sorted(set(found) - set(recorded)), sorted(set(recorded) - set(found))
    assert not added and not dropped, f"new public names: {added}; removed: {dropped} (update {SURFACE.name})"
