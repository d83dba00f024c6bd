"""Static checks of candidate reward code, before it runs anywhere.

The sandbox (`rewardlab.sandbox`) is the security boundary: candidate code runs only there.
These checks are an allow-list that tells the author early, with a typed reason and a line,
that its code uses more of Python than a reward needs:

* syntax: only the node types of `ALLOWED_NODES` (functions without decorators, assignments,
  loops, conditionals, comprehensions, arithmetic, calls, literals, try/except). No classes,
  `match`, `with`, `global`, `yield`, `async`, ...;
* names: a builtin may be named (used, bound or shadowed) only if it is in `ALLOWED_BUILTINS`
  (`abs`, `min`, `float`...); names the code binds itself are free; no dunder names;
* attributes: only the method names of `ALLOWED_ATTRIBUTES` (`get`, `items`, `append`...) and
  the attributes of an imported allowed module (`math.hypot`). This is what closes the routes
  out through objects: `gen.gi_frame.f_builtins`, `str.format` with a `{0.attr}` field built
  at run time, `bytes.decode` of a hidden name, `__subclasses__` in a `match` class pattern;
* text: no string or bytes constant holding `__`;
* imports from `CodePolicy.allowed_imports` only; size; the `reward` signature.

What is not covered: what the allowed operations can still do (an endless loop, a huge
`10 ** 10 ** 9`, a large list) is contained by the sandbox's limits, not here.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from rewardlab.errors import RewardCodeRejected

__all__ = ["ALLOWED_ATTRIBUTES", "ALLOWED_BUILTINS", "ALLOWED_NODES", "SIGNATURE", "CodePolicy", "check_code"]

#: the fixed signature every candidate defines
SIGNATURE = "def reward(obs, action, next_obs, info) -> float | dict[str, float]"

#: the builtins a reward may name: arithmetic, containers, iteration and the usual exceptions
ALLOWED_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float", "frozenset", "int",
    "isinstance", "iter", "len", "list", "map", "max", "min", "next", "pow", "range", "reversed", "round",
    "set", "sorted", "str", "sum", "tuple", "zip", "chr", "ord", "True", "False", "None",
    "Exception", "ArithmeticError", "ZeroDivisionError", "ValueError", "TypeError", "KeyError",
    "IndexError", "LookupError", "OverflowError", "RuntimeError", "StopIteration",
})  # fmt: skip
_BUILTIN_NAMES = frozenset(dir(builtins))
#: the attribute names a reward may use, on any value: read-only or container methods
ALLOWED_ATTRIBUTES = frozenset({
    "get", "items", "keys", "values", "copy", "count", "index", "append", "extend", "insert", "pop",
    "remove", "reverse", "sort", "update", "setdefault", "add", "discard", "union", "intersection",
    "difference", "issubset", "issuperset", "join", "split", "strip", "lower", "upper", "startswith",
    "endswith", "replace", "find", "real", "imag", "conjugate", "is_integer",
})  # fmt: skip
_PRIORITY = ("dunder", "forbidden_name", "forbidden_syntax", "forbidden_attribute")
#: the syntax a reward may use (see the module doc)
ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.AugAssign, ast.AnnAssign,
    ast.For, ast.While, ast.If, ast.Break, ast.Continue, ast.Pass, ast.Expr, ast.Delete, ast.Raise, ast.Assert,
    ast.Try, ast.ExceptHandler, ast.Import, ast.ImportFrom, ast.alias,
    ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.keyword, ast.IfExp, ast.NamedExpr, ast.Lambda,
    ast.Dict, ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
    ast.comprehension, ast.Subscript, ast.Slice, ast.Starred, ast.Name, ast.Attribute, ast.Constant,
    ast.JoinedStr, ast.FormattedValue, ast.Load, ast.Store, ast.Del,
    ast.boolop, ast.operator, ast.unaryop, ast.cmpop,
)  # fmt: skip


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
    """Parse `source` and check it against `policy` and the allow-lists; return the tree.

    Raises:
        RewardCodeRejected: with `kind` one of `too_large`, `syntax`, `forbidden_syntax`,
            `forbidden_import`, `dunder`, `forbidden_name`, `forbidden_attribute`, `signature`,
            and the offending line.
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
    modules = _imported_modules(tree, policy)
    found: list[RewardCodeRejected] = []
    for node in ast.walk(tree):
        try:
            _check_node(node, modules)
        except RewardCodeRejected as exc:
            found.append(exc)
    if found:  # the most telling one: `open(p).read()` is about `open` before `read`
        raise min(found, key=lambda exc: (_PRIORITY.index(exc.kind), exc.line if exc.line is not None else 1 << 30))
    _check_signature(tree, policy)
    return tree


def _imported_modules(tree: ast.Module, policy: CodePolicy) -> frozenset[str]:
    """The names the code binds to allowed modules (`import math`, `import math as m`); an
    import off the allow-list is rejected here."""
    modules: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        line = node.lineno
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if isinstance(node, ast.ImportFrom) and node.level:
            names = ["." * node.level + (node.module or "")]
        for name in names:
            if name.split(".")[0] not in policy.allowed_imports:
                allowed = ", ".join(sorted(policy.allowed_imports)) or "nothing"
                raise RewardCodeRejected("forbidden_import", f"import of {name!r}; only {allowed} may be imported", line=line)
        if isinstance(node, ast.Import):
            modules |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
    return frozenset(modules)


def _check_node(node: ast.AST, modules: frozenset[str]) -> None:
    line = getattr(node, "lineno", None)
    if not isinstance(node, ALLOWED_NODES):
        raise RewardCodeRejected("forbidden_syntax", f"{type(node).__name__} is not allowed; a reward needs only functions, "
                                 "arithmetic, conditionals, loops and containers", line=line)  # fmt: skip
    if isinstance(node, ast.FunctionDef | ast.Lambda):
        _check_function(node)
        if isinstance(node, ast.FunctionDef):
            _check_not_a_module(node.name, modules, line)
    elif isinstance(node, ast.Attribute):
        _check_attribute(node, modules)
    elif isinstance(node, ast.Name):
        _check_name(node.id, line)
        if not isinstance(node.ctx, ast.Load):
            _check_not_a_module(node.id, modules, line)
    elif isinstance(node, ast.arg):
        _check_name(node.arg, line)
        _check_not_a_module(node.arg, modules, line)
    elif isinstance(node, ast.alias):
        _check_name(node.asname or node.name.split(".")[0], line)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        _check_name(node.name, line)
        _check_not_a_module(node.name, modules, line)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str | bytes) and ("__" in node.value if isinstance(node.value, str) else b"__" in node.value):
        raise RewardCodeRejected("dunder", "a string holding '__'; dunder names are not allowed, even spelled as text", line=line)


def _check_function(node: ast.FunctionDef | ast.Lambda) -> None:
    if isinstance(node, ast.FunctionDef):
        if node.decorator_list:
            raise RewardCodeRejected("forbidden_syntax", f"a decorator on {node.name!r}; decorators are not allowed", line=node.lineno)
        _check_name(node.name, node.lineno)


def _check_attribute(node: ast.Attribute, modules: frozenset[str]) -> None:
    if _is_dunder(node.attr):
        raise RewardCodeRejected("dunder", f"access to the attribute {node.attr!r}; dunder attributes are not allowed", line=node.lineno)
    on_module = isinstance(node.value, ast.Name) and node.value.id in modules
    if not on_module and node.attr not in ALLOWED_ATTRIBUTES:
        raise RewardCodeRejected("forbidden_attribute", f"access to the attribute {node.attr!r}; a reward may use the "
                                 "attributes of an imported module and container methods (get, items, append...)", line=node.lineno)  # fmt: skip


def _check_not_a_module(name: str, modules: frozenset[str], line: int | None) -> None:
    """Any attribute of a module name is allowed, so the name must stay the module's."""
    if name in modules:
        raise RewardCodeRejected("forbidden_name", f"{name!r} is bound to something other than the module imported under that name", line=line)


def _check_name(name: str, line: int | None) -> None:
    if _is_dunder(name):
        raise RewardCodeRejected("dunder", f"use of {name!r}; dunder names are not allowed", line=line)
    if name in _BUILTIN_NAMES and name not in ALLOWED_BUILTINS:
        raise RewardCodeRejected("forbidden_name", f"use of {name!r}; a reward needs only arithmetic on its arguments", line=line)


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
