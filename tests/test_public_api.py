"""The public surface is small and deliberate: `__all__` is checked here."""

import subprocess
import sys

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
