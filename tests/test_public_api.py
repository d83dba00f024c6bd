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


# Names kept in a face only because a module outside this change still imports them through it.
THROUGH_THE_FACE: dict[str, set[str]] = {}


def test_every_face_name_is_written_in_the_docs_or_is_a_type_of_a_documented_signature():
    """A sub-package's `__all__` holds what a reader of README.md, docs/ and examples/ types, and
    the types those names take or return; everything else is imported from its module
    (`python tests/face_usage.py` lists each face)."""
    from face_usage import doc_code, faces, unused

    code = doc_code()
    extra = {package: sorted(set(unused(package, names, code)) - THROUGH_THE_FACE.get(package, set()))
             for package, names in faces().items()}  # fmt: skip
    assert not {p: n for p, n in extra.items() if n}, "export these from their modules only, or document them"


def test_face_usage_sees_a_name_the_docs_do_not_use_and_keeps_a_signature_type():
    import ast

    from face_usage import _annotation_names, unused

    tree = ast.parse("def run(options: SearchOptions, *, how: Aggregate = 'min') -> 'Curves': ...")
    assert {"SearchOptions", "Aggregate", "Curves"} <= set(_annotation_names(tree.body[0]))

    names = ["selection_curves", "Curves", "METHODS"]
    assert unused("select", names, "curves = selection_curves(candidates)") == ["METHODS"]  # Curves: its return type
