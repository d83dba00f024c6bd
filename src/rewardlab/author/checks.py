"""Static checks of candidate reward code, before it runs anywhere.

The sandbox (`rewardlab.sandbox`) is the security boundary; these checks are a cheap first
filter that rejects code which could only be hostile or broken, with a typed reason and a line
number the author can be told about: a syntax error, an import off the allow-list, a dunder
(`().__class__.__mro__` is the usual first step out of a restricted namespace), a call to a
name that reaches the interpreter (`eval`, `open`, `getattr`...), code too large, or a
`reward` function with the wrong signature.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from rewardlab.errors import RewardCodeRejected

__all__ = ["SIGNATURE", "CodePolicy", "check_code"]

#: the fixed signature every candidate defines
SIGNATURE = "def reward(obs, action, next_obs, info) -> float | dict[str, float]"

#: names that give access to the interpreter, the file system or other modules
FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "open", "input", "breakpoint", "help", "exit", "quit",
    "getattr", "setattr", "delattr", "globals", "locals", "vars", "dir", "memoryview",
    "__import__", "__builtins__", "type", "object", "super", "classmethod", "staticmethod",
})  # fmt: skip


@dataclass(frozen=True)
class CodePolicy:
    """What candidate code may contain.

    Attributes:
        allowed_imports: top-level modules that may be imported (pure computation only).
        max_bytes: longest source accepted (an author that writes 50 kB is not writing a reward).
        max_lines: most lines accepted.
        function: the name of the function the code must define.
    """

    allowed_imports: frozenset[str] = frozenset({"math"})
    max_bytes: int = 20_000
    max_lines: int = 400
    function: str = "reward"


def check_code(source: str, policy: CodePolicy | None = None) -> ast.Module:
    """Parse `source` and check it against `policy`; return the tree.

    Raises:
        RewardCodeRejected: with `kind` one of `too_large`, `syntax`, `forbidden_import`,
            `dunder`, `forbidden_name`, `signature`, and the offending line.
    """
    policy = policy or CodePolicy()
    if not isinstance(source, str) or not source.strip():
        raise RewardCodeRejected("no_code", "the candidate is empty; write a `reward` function")
    if len(source.encode("utf-8", "surrogatepass")) > policy.max_bytes or source.count("\n") + 1 > policy.max_lines:
        raise RewardCodeRejected(
            "too_large", f"the candidate has {len(source)} characters / {source.count(chr(10)) + 1} lines; "
            f"the limit is {policy.max_bytes} bytes and {policy.max_lines} lines"
        )  # fmt: skip
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise RewardCodeRejected("syntax", f"syntax error: {exc.msg}", line=exc.lineno) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        raise RewardCodeRejected("syntax", f"cannot parse: {type(exc).__name__}") from None
    for node in ast.walk(tree):
        _check_node(node, policy)
    _check_signature(tree, policy)
    return tree


def _check_node(node: ast.AST, policy: CodePolicy) -> None:
    line = getattr(node, "lineno", None)
    if isinstance(node, ast.Import | ast.ImportFrom):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if isinstance(node, ast.ImportFrom) and node.level:
            names = ["." * node.level + (node.module or "")]
        for name in names:
            if name.split(".")[0] not in policy.allowed_imports:
                allowed = ", ".join(sorted(policy.allowed_imports)) or "nothing"
                raise RewardCodeRejected("forbidden_import", f"import of {name!r}; only {allowed} may be imported", line=line)
    elif isinstance(node, ast.Attribute) and _is_dunder(node.attr):
        raise RewardCodeRejected("dunder", f"access to the attribute {node.attr!r}; dunder attributes are not allowed", line=line)
    elif isinstance(node, ast.Name) and (_is_dunder(node.id) or node.id in FORBIDDEN_NAMES):
        kind = "dunder" if _is_dunder(node.id) else "forbidden_name"
        raise RewardCodeRejected(kind, f"use of {node.id!r}; a reward needs only arithmetic on its arguments", line=line)
    elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef) and _is_dunder(node.name):
        raise RewardCodeRejected("dunder", f"definition of {node.name!r}; dunder names are not allowed", line=line)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "__" in node.value:
        raise RewardCodeRejected("dunder", "a string holding '__'; dunder names are not allowed, even spelled as text", line=line)


def _is_dunder(name: str) -> bool:
    return name.startswith("__")  # dunders and name-mangled privates alike


def _check_signature(tree: ast.Module, policy: CodePolicy) -> None:
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == policy.function]
    if not found:
        raise RewardCodeRejected("signature", f"no top-level `def {policy.function}(...)`; define {SIGNATURE}")
    fn = found[-1]
    args = fn.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    required = len(positional) - len(args.defaults)
    if args.vararg is None and (len(positional) < 4 or required > 4):
        raise RewardCodeRejected(
            "signature", f"`{policy.function}` takes ({', '.join(positional)}); it must accept "
            "(obs, action, next_obs, info)", line=fn.lineno,
        )  # fmt: skip
    if any(d is None for d in args.kw_defaults):
        raise RewardCodeRejected("signature", f"`{policy.function}` has a required keyword-only argument", line=fn.lineno)
