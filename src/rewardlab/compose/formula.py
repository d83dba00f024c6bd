"""A small, safe formula language for combining component scores.

    total = "0.1 * format + correct * (length > 0.5) - 0.01 * max(0, tokens - 500)"

Grammar: numbers, component names, `pi`, `e`; `+ - * /`, `^` and `**` (power, right
associative), unary `-`; comparisons `< <= > >= == !=` (give 1.0 or 0.0); `and`, `or`, `not`;
functions `min`, `max`, `abs`, `clip(x, lo, hi)`, `exp`, `log`, `sqrt`, `where(cond, a, b)`.

The text is parsed with Python's `ast` (after `^` → `**`, safe because the language has no
strings) and compiled into a tree of closures over a whitelist of node types. Nothing is ever
passed to `eval`. Runtime failures (division by zero, log of 0, overflow) raise `FormulaError`,
which the combinator turns into an `error/formula` result.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping

from rewardlab.errors import FormulaError as FormulaError

Env = Mapping[str, float]
Node = Callable[[Env], float]

MAX_LENGTH = 2_000  # characters: formulas are written by people, not generated
MAX_DEPTH = 64  # nesting: bounds recursion in the compiler and at evaluation

_CONSTANTS = {"pi": math.pi, "e": math.e}
_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type[ast.cmpop], Callable[[float, float], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def _clip(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


def _where(cond: float, a: float, b: float) -> float:
    return a if cond else b


_FUNCTIONS: dict[str, tuple[Callable[..., float], int | None]] = {
    # name: (function, number of arguments or None for "one or more")
    "min": (min, None),
    "max": (max, None),
    "abs": (abs, 1),
    "clip": (_clip, 3),
    "exp": (math.exp, 1),
    "log": (math.log, 1),
    "sqrt": (math.sqrt, 1),
    "where": (_where, 3),
}


class Formula:
    """A compiled formula: `Formula("a + 2*b", names={"a", "b"})({"a": 1, "b": 2}) == 5`."""

    def __init__(self, text: str, *, names: set[str] | frozenset[str]):
        if len(text) > MAX_LENGTH:
            raise FormulaError(f"formula is {len(text)} characters long; the limit is {MAX_LENGTH}")
        self.text = text
        self.names = frozenset(names)
        try:
            tree = ast.parse(text.replace("^", "**"), mode="eval")
        except SyntaxError as exc:
            raise FormulaError(f"cannot parse formula {text!r}: {exc.msg} at column {exc.offset}") from exc
        except RecursionError as exc:
            raise FormulaError("formula is nested too deeply") from exc
        self.used: set[str] = set()
        self._root = self._compile(tree.body, depth=0)

    def __call__(self, env: Env) -> float:
        try:
            value = float(self._root(env))
        except ZeroDivisionError as exc:
            raise FormulaError(f"division by zero in {self.text!r}") from exc
        except (ValueError, OverflowError, TypeError) as exc:
            raise FormulaError(f"{exc} in {self.text!r}") from exc
        if not math.isfinite(value):
            raise FormulaError(f"{self.text!r} evaluated to {value}")
        return value

    def __repr__(self) -> str:
        return f"Formula({self.text!r})"

    # -- compiler ----------------------------------------------------------------------------
    def _compile(self, node: ast.AST, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise FormulaError(f"formula nests deeper than {MAX_DEPTH} levels")
        d = depth + 1
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            value = float(node.value)
            return lambda env: value
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return self._binary(_BINARY[type(node.op)], self._compile(node.left, d), self._compile(node.right, d))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
            operand = self._compile(node.operand, d)
            if isinstance(node.op, ast.USub):
                return lambda env: -operand(env)
            if isinstance(node.op, ast.Not):
                return lambda env: float(not operand(env))
            return operand
        if isinstance(node, ast.Compare):
            return self._compare(node, d)
        if isinstance(node, ast.BoolOp):
            parts = [self._compile(v, d) for v in node.values]
            if isinstance(node.op, ast.And):
                return lambda env: float(all(p(env) for p in parts))
            return lambda env: float(any(p(env) for p in parts))
        if isinstance(node, ast.Call):
            return self._call(node, d)
        raise FormulaError(f"unsupported syntax {ast.unparse(node)!r} in formula {self.text!r}")

    def _name(self, name: str) -> Node:
        if name in self.names:
            self.used.add(name)
            return lambda env: env[name]
        if name in _CONSTANTS:
            value = _CONSTANTS[name]
            return lambda env: value
        known = ", ".join(sorted(self.names)) or "none"
        raise FormulaError(f"unknown name {name!r} in formula (components: {known}; constants: pi, e)")

    @staticmethod
    def _binary(fn: Callable[[float, float], float], left: Node, right: Node) -> Node:
        if fn is operator.pow:
            # Guard huge powers: 10 ** 10 ** 10 would hang the interpreter on big ints.
            def power(env: Env) -> float:
                base, exponent = float(left(env)), float(right(env))
                return math.pow(base, exponent)

            return power
        return lambda env: fn(left(env), right(env))

    def _compare(self, node: ast.Compare, depth: int) -> Node:
        left = self._compile(node.left, depth)
        pairs = [(_COMPARE[type(op)], self._compile(c, depth)) for op, c in zip(node.ops, node.comparators, strict=True) if type(op) in _COMPARE]
        if len(pairs) != len(node.ops):
            raise FormulaError(f"unsupported comparison in formula {self.text!r}")

        def compare(env: Env) -> float:
            a = left(env)
            for fn, right in pairs:
                b = right(env)
                if not fn(a, b):
                    return 0.0
                a = b
            return 1.0

        return compare

    def _call(self, node: ast.Call, depth: int) -> Node:
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords:
            allowed = ", ".join(sorted(_FUNCTIONS))
            raise FormulaError(f"unsupported call {ast.unparse(node)!r}; functions: {allowed}")
        fn, arity = _FUNCTIONS[node.func.id]
        if (arity is None and not node.args) or (arity is not None and len(node.args) != arity):
            want = "one or more" if arity is None else str(arity)
            raise FormulaError(f"{node.func.id}() takes {want} arguments, got {len(node.args)}")
        args = [self._compile(a, depth) for a in node.args]
        if node.func.id == "where":  # lazy branches
            cond, a, b = args
            return lambda env: a(env) if cond(env) else b(env)
        if arity is None:
            return lambda env: fn([arg(env) for arg in args])
        return lambda env: fn(*(arg(env) for arg in args))
