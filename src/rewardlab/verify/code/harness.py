"""HumanEval-style `check(candidate)` tests: preparing them, and running them in THIS process.

By default the tests run in a judge sandbox of their own (`judged.py`); this module parses
them for it (asserts, free names, literal calls) and runs them here only when a reward is told
its tests are trusted (`CodeTests(trusted_tests=True)`). Run here, `candidate` and every other
name the tests take from the program (HumanEval's `poly`, `encode_cyclic`) are proxies that
call into a sandbox session. Return values come back as plain builtin values, so every `==`
is evaluated here between plain values: an object whose `__eq__` always says True, a patched
harness or a forged "passed" line inside the sandbox cannot change a verdict.

Each `assert` of the tests is one test: it is rewritten into "evaluate, record, continue", so
a failing assert does not hide the ones after it (per-test verdicts, pass fraction). An
exception outside an assert ends `check`; asserts never reached count as failed, and so do all
of them when the program exits early (`sys.exit(0)`, `os._exit(0)`) or is killed. An assert
that holds although the program was not called since the previous one (HumanEval's
`assert True, "This prints if this assert fails"`) tests nothing: its verdict is `vacuous`
and it is not counted; if it fails, it counts as a failure all the same.

Helper functions of the prompt (HumanEval's `poly`, `encode_cyclic`) are dataset text like the
tests, and the tests call them to judge the candidate's answers: with `PromptHelpers` they run
here, from the prompt's own definitions, so a program that redefines them changes nothing.
"""

from __future__ import annotations

import ast
import builtins
import functools
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from rewardlab.errors import ScoringError
from rewardlab.sandbox import Session
from rewardlab.sandbox.session import CandidateError, SessionEnded
from rewardlab.verify.code._judge import AssertRewriter


@dataclass
class TestVerdict:
    """One assert of the tests: how often it ran, and how it went."""

    index: int
    line: int
    source: str
    runs: int = 0
    failures: int = 0
    detail: str = ""
    called: int = 0  # runs during or since the previous assert of which the program was called

    @property
    def verdict(self) -> str:
        if self.runs == 0:
            return "not_reached"
        if self.failures:
            return "fail"
        return "pass" if self.called else "vacuous"

    def to_info(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "test": self.index,
            "line": self.line,
            "assert": self.source,
            "verdict": self.verdict,
        }
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

    @property
    def counted(self) -> int:
        """Tests that count: all but the vacuous ones."""
        return sum(v.verdict != "vacuous" for v in self.verdicts)


class _Recorder:
    def __init__(self, verdicts: list[TestVerdict], session: Session):
        self.verdicts = verdicts
        self.session = session
        self.calls_seen = 0  # the session's call count at the previous assert

    def __call__(self, index: int, value: Any, exc: BaseException | None) -> None:
        v = self.verdicts[index]
        v.runs += 1
        if self.session.calls > self.calls_seen:
            v.called += 1
            self.calls_seen = self.session.calls
        ok = exc is None and bool(value)
        if not ok:
            v.failures += 1
            if not v.detail:
                v.detail = _describe(exc) if exc is not None else "assertion is false"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, CandidateError):
        return f"candidate raised {exc}"[:300]
    return f"{type(exc).__name__}: {exc}"[:300]


def free_names(tree: ast.Module) -> set[str]:
    """Names the tests read but never bind and that are not builtins: they come from the
    program (HumanEval's tests share one namespace with it)."""
    loaded: set[str] = set()
    bound: set[str] = set()
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


@dataclass(frozen=True)
class PreparedTests:
    """Tests parsed, rewritten and compiled once; reused for every response to a problem."""

    code: CodeType
    sites: tuple[tuple[int, str], ...]  # (line, assert source) per test
    free: frozenset[str]
    check_name: str
    # calls with literal arguments, in source order; name None stands for `candidate`
    literal_calls: tuple[tuple[str | None, tuple[Any, ...]], ...] = ()

    def prefetch(self, entry_point: str, *, trusted: frozenset[str] = frozenset()) -> list[tuple[str, tuple[Any, ...]]]:
        """Literal calls to send with the program (not those of `trusted` helpers: they run here)."""
        return [(name or entry_point, args) for name, args in self.literal_calls if name not in trusted]

    def fresh_verdicts(self) -> list[TestVerdict]:
        if not self.sites:  # no asserts: the whole check is one test
            return [TestVerdict(0, 1, f"{self.check_name}(candidate) completes")]
        return [TestVerdict(i, line, text) for i, (line, text) in enumerate(self.sites)]


@functools.lru_cache(maxsize=4096)
def prepare_tests(tests: str, *, check_name: str = "check") -> PreparedTests:
    """Parse, rewrite and compile the tests (cached: a group of N responses shares them).

    Raises:
        ScoringError: `invalid_input` when the tests do not parse or define no `check_name`.
    """
    try:
        tree = ast.parse(tests, "<tests>")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:  # null bytes, deep nesting
        raise ScoringError("invalid_input", f"reference tests do not parse: {exc}") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == check_name for n in tree.body):
        raise ScoringError(
            "invalid_input", f"reference tests define no function {check_name!r}(candidate)"
        )
    check = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == check_name)
    candidate = check.args.args[0].arg if check.args.args else None
    free = frozenset(free_names(tree))
    calls = literal_calls(tree, candidate, free)
    rewriter = AssertRewriter(tests)
    tree = rewriter.visit(tree)
    sites = tuple(rewriter.sites)
    return PreparedTests(compile(tree, "<tests>", "exec"), sites, free, check_name, calls)


def literal_calls(
    tree: ast.Module, candidate: str | None, free: frozenset[str], *, limit: int = 512
) -> tuple[tuple[str | None, tuple[Any, ...]], ...]:
    """Calls of the program whose arguments are all literals (`candidate([1, 2]) == 3`), in
    source order. They are sent with the program and answered right after it loads, so most
    HumanEval tests need one round trip into the sandbox instead of one per assert. Only the
    timing changes: the answers are still compared here, call by call, in the order `check`
    makes them."""
    found: list[tuple[int, int, str | None, tuple[Any, ...]]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords):
            continue
        name = node.func.id
        if name != candidate and name not in free:
            continue
        try:
            args = tuple(ast.literal_eval(a) for a in node.args)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        found.append((node.lineno, node.col_offset, None if name == candidate else name, args))
    found.sort(key=lambda f: (f[0], f[1]))
    return tuple((name, args) for _, _, name, args in found[:limit])


@dataclass(frozen=True)
class PromptHelpers:
    """What a HumanEval-style prompt defines besides the entry point: imports, constants and
    helper functions, as source (re-bound in the sandbox after the program, as EvalPlus runs
    prompt helpers after the solution) and compiled (run in the tests' trusted namespace)."""

    source: str
    code: CodeType
    names: frozenset[str]


_HELPER_NODES = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@functools.lru_cache(maxsize=4096)
def prompt_helpers(prompt: str, entry_point: str) -> PromptHelpers | None:
    """The prompt's helpers, or None when it defines none (or is not Python)."""
    try:
        tree = ast.parse(prompt)
    except (SyntaxError, ValueError):
        return None
    keep: list[ast.stmt] = [n for n in tree.body if isinstance(n, _HELPER_NODES) and getattr(n, "name", None) != entry_point]
    names = frozenset(n.name for n in keep if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))
    if not names:
        return None
    module = ast.Module(body=keep, type_ignores=[])
    return PromptHelpers(ast.unparse(module), compile(module, "<prompt helpers>", "exec"), names)


def run_check(
    tests: str,
    entry_point: str,
    session: Session,
    *,
    check_name: str = "check",
    helpers: PromptHelpers | None = None,
) -> CheckReport:
    """Run the reference `check(candidate)` here against `entry_point` inside `session`;
    names of `helpers` resolve to the prompt's own definitions, run here too."""
    prepared = prepare_tests(tests, check_name=check_name)
    verdicts = prepared.fresh_verdicts()
    namespace: dict[str, Any] = {name: RemoteFunction(session, name) for name in prepared.free}
    namespace.update(
        {
            "__builtins__": builtins,
            "__name__": "__rewardlab_tests__",
            "__rl_record__": _Recorder(verdicts, session),
        }
    )
    report = CheckReport(verdicts, completed=False)
    try:
        if helpers is not None:
            namespace[entry_point] = RemoteFunction(session, entry_point)  # a helper may call it
            exec(helpers.code, namespace)
        exec(prepared.code, namespace)
        namespace[check_name](RemoteFunction(session, entry_point))
        report.completed = True
        if len(verdicts) == 1 and verdicts[0].runs == 0:
            verdicts[0].runs, verdicts[0].called = 1, int(session.calls > 0)
    except SessionEnded as ended:
        report.ended, report.stopped_by = ended, str(ended)
    except Exception as exc:
        report.stopped_by = f"check stopped: {_describe(exc)}"
        if len(verdicts) == 1 and verdicts[0].runs == 0:
            verdicts[0].runs, verdicts[0].failures, verdicts[0].detail = 1, 1, report.stopped_by
    report.calls = session.calls
    return report
