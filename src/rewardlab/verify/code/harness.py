"""HumanEval-style `check(candidate)` tests, run in the TRUSTED process.

The reference tests (dataset text, never model output) run here; `candidate` and every other
name the tests take from the program (HumanEval's `poly`, `encode_cyclic`) are proxies that
call into a sandbox session. Return values come back as exact builtin types, so every `==`
is evaluated here between plain values: an object whose `__eq__` always says True, a patched
harness or a forged "passed" line inside the sandbox cannot change a verdict.

Each `assert` of the tests is one test: it is rewritten into "evaluate, record, continue", so
a failing assert does not hide the ones after it (per-test verdicts, pass fraction). An
exception outside an assert ends `check`; asserts never reached count as failed, and so do all
of them when the program exits early (`sys.exit(0)`, `os._exit(0)`) or is killed.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Any

from rewardlab.errors import ScoringError
from rewardlab.sandbox import CandidateError, Session, SessionEnded

_TEMPLATE = """
try:
    __rl_value__ = __RL_TEST__
except Exception as __rl_exc__:
    __rl_record__(__RL_INDEX__, False, __rl_exc__)
else:
    __rl_record__(__RL_INDEX__, __rl_value__, None)
"""


@dataclass
class TestVerdict:
    """One assert of the tests: how often it ran, and how it went."""

    index: int
    line: int
    source: str
    runs: int = 0
    failures: int = 0
    detail: str = ""

    @property
    def verdict(self) -> str:
        if self.runs == 0:
            return "not_reached"
        return "pass" if self.failures == 0 else "fail"

    def to_info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"test": self.index, "line": self.line, "assert": self.source, "verdict": self.verdict}
        if self.runs > 1:
            out["runs"] = self.runs
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass
class CheckReport:
    """Verdicts of one `check(candidate)` run."""

    verdicts: list[TestVerdict]
    completed: bool  # check returned normally
    stopped_by: str = ""  # why check did not complete
    ended: SessionEnded | None = None
    calls: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> int:
        return sum(v.verdict == "pass" for v in self.verdicts)


class _Recorder:
    def __init__(self, verdicts: list[TestVerdict]):
        self.verdicts = verdicts

    def __call__(self, index: int, value: Any, exc: BaseException | None) -> None:
        v = self.verdicts[index]
        v.runs += 1
        ok = exc is None and bool(value)
        if not ok:
            v.failures += 1
            if not v.detail:
                v.detail = _describe(exc) if exc is not None else "assertion is false"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, CandidateError):
        return f"candidate raised {exc}"[:300]
    return f"{type(exc).__name__}: {exc}"[:300]


class _AssertRewriter(ast.NodeTransformer):
    """`assert T, msg` -> try/except that records T's truth and continues."""

    def __init__(self, source: str):
        self.source = source
        self.verdicts: list[TestVerdict] = []

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        index = len(self.verdicts)
        text = ast.get_source_segment(self.source, node.test) or ast.unparse(node.test)
        self.verdicts.append(TestVerdict(index, node.lineno, " ".join(text.split())[:160]))
        stmt = ast.parse(_TEMPLATE).body[0]
        for sub in ast.walk(stmt):
            for name, value in ast.iter_fields(sub):
                if isinstance(value, ast.Name) and value.id == "__RL_TEST__":
                    setattr(sub, name, node.test)
            if isinstance(sub, ast.Call):
                sub.args = [ast.Constant(index) if isinstance(a, ast.Name) and a.id == "__RL_INDEX__" else a for a in sub.args]
        return ast.fix_missing_locations(ast.copy_location(stmt, node))


def free_names(tree: ast.Module) -> set[str]:
    """Names the tests read but never bind and that are not builtins: they come from the
    program (HumanEval's tests share one namespace with it)."""
    loaded, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return {n for n in loaded - bound if not hasattr(builtins, n) and not n.startswith("__rl_")}


class RemoteFunction:
    """A function of the sandboxed program, callable from the trusted tests."""

    def __init__(self, session: Session, name: str):
        self._session = session
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.call(self._name, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<sandboxed {self._name}>"


def prepare_tests(tests: str, *, check_name: str = "check") -> tuple[ast.Module, list[TestVerdict], set[str]]:
    """Parse and rewrite the tests once per sample; raises ScoringError(invalid_input)."""
    try:
        tree = ast.parse(tests, "<tests>")
    except SyntaxError as exc:
        raise ScoringError("invalid_input", f"reference tests do not parse: {exc}") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == check_name for n in tree.body):
        raise ScoringError("invalid_input", f"reference tests define no function {check_name!r}(candidate)")
    rewriter = _AssertRewriter(tests)
    tree = rewriter.visit(tree)
    return tree, rewriter.verdicts, free_names(tree)


def run_check(tests: str, entry_point: str, session: Session, *, check_name: str = "check") -> CheckReport:
    """Run the reference `check(candidate)` here against `entry_point` inside `session`."""
    tree, verdicts, free = prepare_tests(tests, check_name=check_name)
    if not verdicts:  # no asserts: the whole check is one test
        verdicts = [TestVerdict(0, 1, f"{check_name}(candidate) completes")]
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": "__rewardlab_tests__", "__rl_record__": _Recorder(verdicts)}
    namespace.update({name: RemoteFunction(session, name) for name in free})
    report = CheckReport(verdicts, completed=False)
    try:
        exec(compile(tree, "<tests>", "exec"), namespace)
        namespace[check_name](RemoteFunction(session, entry_point))
        report.completed = True
        if len(verdicts) == 1 and verdicts[0].runs == 0:
            verdicts[0].runs = 1
    except SessionEnded as ended:
        report.ended, report.stopped_by = ended, str(ended)
    except Exception as exc:
        report.stopped_by = f"check stopped: {_describe(exc)}"
        if len(verdicts) == 1 and verdicts[0].runs == 0:
            verdicts[0].runs, verdicts[0].failures, verdicts[0].detail = 1, 1, report.stopped_by
    report.calls = session.calls
    return report
