"""Tests that are only data: judged here without running any of their code.

Most HumanEval-style tests are a list of `assert candidate(<literals>) == <literal>` (146 of
HumanEval's 164). Such tests need no judge: the program's answers arrive as plain builtin
values, the expected values are Python literals (`ast.literal_eval`: no names, no calls, no
operators but the signs of numbers), and comparing plain builtins runs no code of anyone. So
they are judged in this process and the program's session is the only sandboxed job; anything
else (a helper call, a loop, an import, a computed argument, `abs(...) < 1e-6`) goes to the
judge sandbox (`judged.py`). The verdicts are the judge's exactly: each assert one test, an
assert that holds without a call since the previous one is vacuous, a call that raises fails
its assert, and the program ending stops the tests.

Accepted, and nothing else: at module level docstrings and `NAME = <literal>` (HumanEval's
`METADATA`); in `check(candidate)` docstrings, `pass` and `assert T[, msg]` (the message is
never evaluated, as in the judge) where T is a constant, `C`, `not C`, `C == L`, `L == C`,
`C != L`, `L != C`, or `C is` / `is not` None, True or False, with C a call of the candidate
with literal positional arguments and L a literal.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from typing import Any

from rewardlab.sandbox import Session
from rewardlab.sandbox.session import CandidateError, SessionEnded
from rewardlab.verify.code.harness import CheckReport, prepare_tests

_SINGLETONS = (None, True, False)


@dataclass(frozen=True)
class LiteralAssert:
    """`assert T`: the call of the candidate in T (None: T is a constant) and how its answer is read."""

    args: tuple[Any, ...] | None
    op: str  # "const", "truth", "not", "==", "!=", "is", "is not"
    expected: Any = None


def _literal(node: ast.expr) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _call_args(node: ast.expr, candidate: str) -> tuple[Any, ...] | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == candidate and not node.keywords):
        return None
    args = []
    for arg in node.args:
        ok, value = _literal(arg)
        if not ok:
            return None
        args.append(value)
    return tuple(args)


def _assert(test: ast.expr, candidate: str) -> LiteralAssert | None:
    if isinstance(test, ast.Constant):
        return LiteralAssert(None, "const", test.value)
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    if (args := _call_args(test.operand if isinstance(test, ast.UnaryOp) and negated else test, candidate)) is not None:
        return LiteralAssert(args, "not" if negated else "truth")
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(op, ast.Eq | ast.NotEq):
        symbol = "==" if isinstance(op, ast.Eq) else "!="
        for call, other in ((left, right), (right, left)):
            ok, expected = _literal(other)
            if ok and (args := _call_args(call, candidate)) is not None:
                return LiteralAssert(args, symbol, expected)
        return None
    if isinstance(op, ast.Is | ast.IsNot) and isinstance(right, ast.Constant) and any(right.value is s for s in _SINGLETONS):
        args = _call_args(left, candidate)
        return None if args is None else LiteralAssert(args, "is" if isinstance(op, ast.Is) else "is not", right.value)
    return None


@functools.lru_cache(maxsize=4096)
def literal_plan(tests: str, check_name: str = "check") -> tuple[LiteralAssert, ...] | None:
    """The asserts of tests that are only data, in order; None when the tests need a judge."""
    prepare_tests(tests, check_name=check_name)  # bad tests fail as they do for the judge
    tree = ast.parse(tests, "<tests>")
    check: ast.FunctionDef | None = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == check_name and check is None:
            check = node
        elif not (_docstring(node) or _constant_assign(node, check_name)):
            return None
    if check is None or check.decorator_list or len(check.args.args) != 1 or _has_other_args(check.args):
        return None
    candidate = check.args.args[0].arg
    plan = []
    for stmt in check.body:
        if _docstring(stmt) or isinstance(stmt, ast.Pass):
            continue
        step = _assert(stmt.test, candidate) if isinstance(stmt, ast.Assert) else None
        if step is None:
            return None
        plan.append(step)
    return tuple(plan)


def _constant_assign(node: ast.stmt, check_name: str) -> bool:
    """`NAME = <literal>` (not rebinding the test function)."""
    return (isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id != check_name for t in node.targets)
            and _literal(node.value)[0])  # fmt: skip


def _docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _has_other_args(args: ast.arguments) -> bool:
    return bool(args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults)


def run_literal(plan: tuple[LiteralAssert, ...], tests: str, entry_point: str, session: Session,
                *, check_name: str = "check") -> CheckReport:  # fmt: skip
    """Judge `plan` (from `literal_plan(tests)`) against `entry_point` in `session`: the report
    `judged_check` would give, with no code of the tests run anywhere."""
    report = CheckReport(prepare_tests(tests, check_name=check_name).fresh_verdicts(), completed=False)
    seen = 0  # report.calls at the previous assert
    for verdict, step in zip(report.verdicts if plan else [], plan, strict=True):
        ok, detail = True, ""
        if step.args is not None:
            report.calls += 1
            try:
                answer = session.call(entry_point, *step.args)
            except SessionEnded as ended:  # the program ended: the tests stop here
                report.ended, report.stopped_by = ended, str(ended)
                return report
            except CandidateError as exc:
                ok, detail = False, f"candidate raised {exc}"[:300]
            except TypeError as exc:  # an argument the wire cannot carry (nested too deep): no call made
                report.calls -= 1
                ok, detail = False, f"TypeError: {exc}"[:300]
            else:
                ok = _holds(step, answer)
        else:
            ok = bool(step.expected)
        verdict.runs, verdict.called = 1, int(report.calls > seen)
        seen = report.calls
        if not ok:
            verdict.failures, verdict.detail = 1, detail or "assertion is false"
    report.completed = True
    if not plan:  # no asserts: `check` completing is the one test
        report.verdicts[0].runs = 1
    return report


def _holds(step: LiteralAssert, answer: Any) -> bool:
    """The assert's truth; `answer` and `expected` are plain builtins, so this runs no one's code."""
    if step.op == "truth":
        return bool(answer)
    if step.op == "not":
        return not answer
    if step.op == "==":
        return bool(answer == step.expected)
    if step.op == "!=":
        return bool(answer != step.expected)
    return (answer is step.expected) == (step.op == "is")
