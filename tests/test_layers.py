"""The import layers of ARCHITECTURE.md, enforced on every module's imports.

Every `import` and `from ... import` statement is read with `ast`, wherever it stands: at the
top, inside a function (lazy imports), or under `if TYPE_CHECKING:` (a type-only dependency is
still a dependency). Nothing is imported, so the test also covers extras that are not installed.

A package may import packages of a lower layer, plus the same-layer siblings listed in
`SIBLINGS`; anything else runs back up the layers and fails. `FORBIDDEN_THIRD_PARTY` holds the
rules about outside libraries.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "rewardlab"

# Layer of each top-level part of `rewardlab` (subpackage or module), lowest first. Keep in step
# with the table in ARCHITECTURE.md.
LAYERS: dict[str, int] = {
    "_version": 0,  # the version string; imports nothing
    "_lazy": 0,  # names a package imports on first use (PEP 562); missing extras as DependencyError
    "_seeding": 0,  # seeded torch (and numpy, random) blocks that give the caller's generators back
    "_progress": 0,  # the one progress bar (rich, imported when drawn)
    "errors": 0,  # every exception; imports nothing of the package
    "demo": 0,  # bundled demo data
    "core": 1,  # the contract: Sample, RewardResult, Reward, registry
    "compose": 2,  # specs and combinators; knows no concrete verifier
    "sandbox": 2,  # isolated execution; knows nothing of verifiers
    "templates": 2,  # prompt templates and score parsing, for judges and verify's graders
    "shape": 2,  # group transforms on arrays
    "credit": 3,  # advantages (over shape's transforms)
    "multiobj": 3,  # reward vectors: Pareto tools on groups, late scalarisation (over shape's transforms)
    "store": 3,  # the SQLite result cache and run store
    "runner": 4,  # scoring files and batches on a worker pool
    "verify": 5,  # model-free rewards (sources)
    "judges": 5,  # LLM judges (sources)
    "envs": 5,  # classic-RL rewards (sources)
    "models": 5,  # learned reward models (sources)
    "diffusion": 5,  # toy diffusion policies, noisy-latent reward model, DDPO-side credit loop
    "learn": 6,  # rewards learned from demonstrations (over envs and models)
    "agent": 5,  # rewards for agent trajectories: tool calls, state checks, subtasks (sources)
    "evaluate": 6,  # metrics, audits and reports over any reward
    "select": 7,  # test-time selection and search over any reward
    "author": 7,  # reward code written by an LLM or a template search, checked, sandboxed, trained on
    "serve": 7,  # HTTP server and client; contains no reward logic
    "integrations": 8,  # trainer adapters; contain no reward logic
    "cli": 9,  # the thin shell over everything
    "__init__": 9,  # the top-level facade `rewardlab.score` etc.; nothing inside imports it
}

# Same-layer imports that are part of the design (importer -> imported).
SIBLINGS: dict[tuple[str, str], str] = {
    ("judges", "verify"): "majority-vote pseudo-labels compare answers with the maths verifier",
    ("agent", "judges"): "the group ranking of trajectories asks its judge through judges.client",
    ("_lazy", "errors"): "a missing optional dependency becomes errors.DependencyError, naming its extra",
}

# Imports that run up the layers today and are being removed; each must still exist (so the
# entry is deleted when the import goes) and names where the code is meant to go.
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {
}

# Outside libraries a package must not import at module level (tensors are accepted lazily).
FORBIDDEN_AT_IMPORT: dict[str, tuple[str, ...]] = {
    "shape": ("torch",),
}

# Outside libraries a package must not import, even lazily.
FORBIDDEN_THIRD_PARTY: dict[str, tuple[str, ...]] = {
    "core": ("torch", "sympy", "fastapi", "httpx", "ray", "transformers"),  # `import rewardlab` needs only core deps
    "credit": ("torch",),  # accepts numpy; torch is converted at the edge (shape._arrays)
    "multiobj": ("torch",),  # like credit: numpy inside, tensors converted at the edge
    "compose": ("torch", "sympy"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _part(module: str) -> str:
    """`rewardlab.verify.math.extract` -> `verify`; the package itself -> `__init__`."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "__init__"


def _imports(path: Path, *, module_level: bool = False) -> Iterator[tuple[str, int]]:
    """Every module `path` imports, absolute, with its line number (only those that run on
    import of `path` if `module_level`)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    nodes = _module_level_nodes(tree.body) if module_level else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != "rewardlab":
                yield target, node.lineno
                continue
            for alias in node.names:  # `from rewardlab import errors` imports a submodule
                is_module = (PACKAGE / alias.name).is_dir() or (PACKAGE / f"{alias.name}.py").is_file()
                yield (f"rewardlab.{alias.name}" if is_module else "rewardlab"), node.lineno


def _module_level_nodes(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run on import: the body and its `if`/`try` blocks, not functions."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.Try):
            for block in (node.body, node.orelse, *([h.body for h in node.handlers] if isinstance(node, ast.Try) else [])):
                yield from _module_level_nodes(block)


SOURCES = sorted(PACKAGE.rglob("*.py"))


def _edges() -> list[tuple[str, str, int, str]]:
    """(importer module, imported rewardlab module, line, file) for every import in the package."""
    found = []
    for path in SOURCES:
        importer = _module_name(path)
        for target, line in _imports(path):
            if target == "rewardlab" or target.startswith("rewardlab."):
                found.append((importer, target, line, str(path.relative_to(SRC.parent))))
    return found


EDGES = _edges()


def test_every_part_of_the_package_has_a_layer():
    parts = {_part(_module_name(p)) for p in SOURCES}
    assert parts <= set(LAYERS), f"give these a layer in LAYERS and ARCHITECTURE.md: {sorted(parts - set(LAYERS))}"


def test_the_import_walk_sees_lazy_and_type_only_imports():
    edges = {(importer, target) for importer, target, _, _ in EDGES}
    assert ("rewardlab.judges.llm", "rewardlab.store") in edges  # inside a method
    assert any(importer.startswith("rewardlab.sandbox.session") and "pool" in target for importer, target in edges)


def test_no_import_runs_back_up_the_layers():
    wrong = []
    for importer, target, line, file in EDGES:
        src, dst = _part(importer), _part(target)
        if src == dst or (importer, target) in KNOWN_VIOLATIONS:
            continue
        if dst == "__init__":
            wrong.append(f"{file}:{line}: imports the top-level package; import the submodule instead")
        elif LAYERS[dst] > LAYERS[src] or (LAYERS[dst] == LAYERS[src] and (src, dst) not in SIBLINGS):
            wrong.append(f"{file}:{line}: {src} (layer {LAYERS[src]}) imports {target} (layer {LAYERS[dst]})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("edge", sorted(KNOWN_VIOLATIONS))
def test_known_violations_are_still_there(edge):
    """Delete the entry of KNOWN_VIOLATIONS when its import is gone."""
    assert edge in {(importer, target) for importer, target, _, _ in EDGES}


def test_core_imports_nothing_else_of_the_package():
    assert {
        _part(target) for importer, target, _, _ in EDGES if _part(importer) == "core"
    } <= {"core", "errors", "_version", "_lazy"}


def test_compose_knows_no_concrete_reward():
    concrete = {"verify", "judges", "envs", "models", "sandbox"}
    assert not {_part(t) for i, t, _, _ in EDGES if _part(i) == "compose"} & concrete


def test_sandbox_does_not_import_verify():
    assert not [t for i, t, _, _ in EDGES if _part(i) == "sandbox" and _part(t) == "verify"]


def test_nothing_below_the_shell_imports_serve_integrations_or_cli():
    shell = {"serve", "integrations", "cli"}
    wrong = [
        (i, t)
        for i, t, _, _ in EDGES
        if _part(t) in shell and _part(i) not in shell | {"__init__"} and (i, t) not in KNOWN_VIOLATIONS
    ]
    assert not wrong


@pytest.mark.parametrize("part", sorted(FORBIDDEN_THIRD_PARTY))
def test_forbidden_third_party_imports(part):
    wrong = []
    for path in SOURCES:
        if _part(_module_name(path)) != part:
            continue
        for target, line in _imports(path):
            if target.split(".")[0] in FORBIDDEN_THIRD_PARTY[part]:
                wrong.append(f"{path.relative_to(SRC.parent)}:{line}: {target}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("part", sorted(FORBIDDEN_AT_IMPORT))
def test_forbidden_module_level_imports(part):
    wrong = []
    for path in SOURCES:
        if _part(_module_name(path)) != part:
            continue
        for target, line in _imports(path, module_level=True):
            if target.split(".")[0] in FORBIDDEN_AT_IMPORT[part]:
                wrong.append(f"{path.relative_to(SRC.parent)}:{line}: {target}")
    assert not wrong, "\n".join(wrong)


def test_architecture_md_draws_the_same_layers():
    text = (SRC.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| `([\w_]+)` \|", text, flags=re.M)
    assert {name: int(layer) for layer, name in rows} == LAYERS
    for importer, imported in SIBLINGS:
        assert f"`{importer}` → `{imported}`" in text


# Rewards that the shell may define: they forward to a reward elsewhere and compute nothing.
SHELL_REWARDS = {
    "rewardlab.serve.client.RemoteReward": "scores by calling a reward server",
}
SHELL = ("serve", "integrations", "cli")


def _defined_rewards(module_name: str) -> Iterator[str]:
    """Rewards defined in a module: `BaseReward` subclasses and `@reward` functions."""
    import importlib

    from rewardlab.core import BaseReward
    from rewardlab.core.reward import FunctionReward

    module = importlib.import_module(module_name)
    for name, obj in vars(module).items():
        is_class = isinstance(obj, type) and issubclass(obj, BaseReward) and obj.__module__ == module_name
        is_function = isinstance(obj, FunctionReward) and obj.fn.__module__ == module_name
        if is_class or is_function:
            yield f"{module_name}.{name}"


def test_the_shell_defines_no_reward_logic():
    """Imports the shell's modules (serve, integrations, cli need their extras installed)."""
    found = {
        name
        for path in SOURCES
        if _part(module := _module_name(path)) in SHELL
        for name in _defined_rewards(module)
    }
    assert found == set(SHELL_REWARDS), f"rewards belong below the shell (ARCHITECTURE.md): {sorted(found - set(SHELL_REWARDS))}"


def test_registered_builtins_live_below_the_shell():
    from rewardlab.core.registry import BUILTINS

    wrong = {name: target for name, target in BUILTINS.items() if _part(target.partition(":")[0]) in SHELL}
    assert not wrong
    assert all(_part(target.partition(":")[0]) in LAYERS for target in BUILTINS.values())


def _module_paths_named(path: Path) -> set[str]:
    """Every ``rewardlab.X`` named in a string of `path` (a registry entry, an import by name)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(re.findall(r"\brewardlab\.([A-Za-z_]\w*)", node.value))
    return found


@pytest.mark.parametrize("part", [p for p, layer in LAYERS.items() if layer <= 2], ids=str)
def test_no_module_path_of_an_upper_layer_is_written_in_a_lower_one(part):
    """Not imported, but named: a ``"rewardlab.verify.text:ExactMatch"`` string in core is a
    dependency too (core would have to change for every new reward). Built-ins are declared by
    the package that owns them, in its `_registry.py`. Docstrings may name upper layers."""
    files = [p for p in SOURCES if _part(_module_name(p)) == part]
    named = {
        (str(path.relative_to(PACKAGE)), target)
        for path in files
        for target in _module_paths_named(path) - {"errors", "_lazy", "_version"}
        if target in LAYERS and LAYERS[target] > LAYERS[part]
        and not _in_docstrings(path, target)
    }
    assert not named, f"upper-layer module paths written in {part}: {sorted(named)}"


def _in_docstrings(path: Path, target: str) -> bool:
    """Whether every mention of ``rewardlab.target`` in `path`'s strings is in a docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    pattern = re.compile(rf"\brewardlab\.{re.escape(target)}\b")
    return all(
        id(node) in docstrings
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and pattern.search(node.value)
    )


def test_each_package_registers_only_its_own_rewards():
    from rewardlab.core.registry import REGISTRATION_FILE, builtin_tables

    tables = builtin_tables()
    owners = {path.parent.name for path in PACKAGE.glob(f"*/{REGISTRATION_FILE}")}
    assert owners == {"verify", "judges", "models", "envs", "multiobj", "learn", "agent"}
    assert all(_part(target.partition(":")[0]) in owners for target in tables.builtins.values())
