"""Which names of the sub-package faces the docs use, read from the source and the pages as text.

A sub-package's face (its `__init__`'s `__all__`) holds what a reader of the docs types: a name
that README.md, docs/*.md or examples/ write as code (in a fenced block or in backticks), plus
the types in the signatures of those names (what a caller needs to annotate: a returned class,
an options class it takes, a protocol it implements). Everything else is imported from its
module. Nothing is imported here: the faces, the definitions and their annotations are parsed.

    python tests/face_usage.py     # every face's size, and the names neither rule keeps
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "rewardlab"
# modules whose every name is public by design: each exception is something a caller catches
WHOLE = {"errors"}


def doc_code() -> str:
    """The code a reader sees in the docs: fenced blocks and backticked spans of README.md,
    docs/*.md and the files of examples/."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    code = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    code += re.findall(r"`([^`\n]+)`", re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M))
    examples = ROOT / "examples"
    code += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(examples.rglob("*")) if p.is_file()]
    return "\n".join(code)


def faces() -> dict[str, list[str]]:
    """package -> the names of its `__init__`'s `__all__` (the packages, not the top level)."""
    out = {}
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        names = _all_of(ast.parse(init.read_text(encoding="utf-8")))
        if names:
            out[init.parent.name] = names
    return out


def _all_of(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]  # type: ignore[attr-defined]
    return []


def _definitions(package: str) -> dict[str, ast.AST]:
    """name -> its top-level definition (function, class) in the package's modules."""
    defs: dict[str, ast.AST] = {}
    for path in sorted((PACKAGE / package).rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defs.setdefault(node.name, node)
    return defs


def _annotation_names(node: ast.AST) -> Iterator[str]:
    """Every identifier in the annotations of a function's signature, or of a class's fields,
    bases and public methods' signatures."""
    if isinstance(node, ast.ClassDef):
        for base in node.bases:
            yield from _identifiers(base)
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and not item.target.id.startswith("_"):
                yield from _identifiers(item.annotation)
            elif isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                not item.name.startswith("_") or item.name == "__init__"
            ):
                yield from _annotation_names(item)
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None and arg.annotation is not None:
                yield from _identifiers(arg.annotation)
        if node.returns is not None:
            yield from _identifiers(node.returns)


def _identifiers(expr: ast.AST) -> Iterator[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):  # a quoted annotation
        try:
            expr = ast.parse(expr.value, mode="eval")
        except SyntaxError:
            return
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr


def unused(package: str, names: list[str], code: str) -> list[str]:
    """The names of `package`'s face that the docs do not write and that are no type in the
    signature of a name they do write (followed through those types' own signatures)."""
    if package in WHOLE:
        return []
    written = {n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}\b|\.{re.escape(n)}\b", code)}
    defs = _definitions(package)
    kept, todo = set(written), list(written)
    while todo:
        node = defs.get(todo.pop())
        for ident in _annotation_names(node) if node is not None else ():
            if ident in names and ident not in kept:
                kept.add(ident)
                todo.append(ident)
    return [n for n in names if n not in kept]


def report() -> tuple[int, int]:
    code = doc_code()
    total = dropped = 0
    for package, names in faces().items():
        left = unused(package, names, code)
        total += len(names)
        dropped += len(left)
        print(f"{package}: {len(names)} names, {len(left)} neither in the docs nor a signature type: {' '.join(left)}")
    print(f"{total} names in sub-package faces, {dropped} unused")
    return total, dropped


if __name__ == "__main__":
    report()
