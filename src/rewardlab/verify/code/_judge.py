"""The judge of HumanEval-style tests, INSIDE a sandbox of its own (standard library only).

This file's text is the module a judge session loads (`judged.py` on the host sends it); the
host imports it only for `AssertRewriter`, so both sides find the same asserts. The reference's
`check(candidate)` and the prompt's helpers are dataset text: they run here, never in the host
process, and never in the candidate's process either (the candidate cannot patch its judge).

Protocol (each host call gets one answer, as every session does):
    rl_judge_start(tests, helpers, check_name, entry_point, free, prefetched) -> step
    rl_judge_resume(kind, value) -> step
A step is `{"records": [[test, ok, called, detail], ...]}` plus either `"need": [name, args,
kwargs]` (the tests called the program: the host makes the call in the candidate's sandbox and
resumes with ("value", the answer) or ("raise", [type, message])), `"more": true` (records
flushed while the tests run on; resume with ("more", None)) or `"done": {...}` (how `check`
ended). Values arrive here decoded as plain builtins, so every `==` of the tests compares plain
values. `prefetched` holds the answers to the tests' literal calls (`prefetch` of the host's
candidate session) as [key, answer frame as JSON text], keyed as the host's `Session` keys
calls, so most tests finish in one step.
"""

from __future__ import annotations

import ast
import builtins
import json
import queue
import sys
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any


class AssertRewriter(ast.NodeTransformer):
    """`assert T, msg` -> try/except that records T's truth and continues (one assert, one test)."""

    def __init__(self, source: str):
        self.lines = source.splitlines()
        self.sites: list[tuple[int, str]] = []  # (line, assert source) per test

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        index = len(self.sites)
        self.sites.append((node.lineno, self._text(node.test)))

        # try: __rl_value__ = T / except Exception as __rl_exc__: record(i, False, exc)
        # else: record(i, __rl_value__, None)  -- built directly: re-parsing a template per
        # assert made preparing HumanEval's tests cost more than running them.
        def record(value: ast.expr, exc: ast.expr) -> ast.Expr:
            call = ast.Call(
                ast.Name("__rl_record__", ast.Load()), [ast.Constant(index), value, exc], []
            )
            return ast.Expr(call)

        stmt = ast.Try(
            body=[ast.Assign([ast.Name("__rl_value__", ast.Store())], node.test)],
            handlers=[ast.ExceptHandler(ast.Name("Exception", ast.Load()), "__rl_exc__",
                                        [record(ast.Constant(False), ast.Name("__rl_exc__", ast.Load()))])],
            orelse=[record(ast.Name("__rl_value__", ast.Load()), ast.Constant(None))],
            finalbody=[],
        )  # fmt: skip
        return ast.fix_missing_locations(ast.copy_location(stmt, node))

    def _text(self, node: ast.expr) -> str:
        """The assert's source, one line, cut to 160 characters (for info)."""
        end = node.end_lineno or node.lineno
        if end == node.lineno:
            text = self.lines[node.lineno - 1][node.col_offset : node.end_col_offset]
        else:
            text = " ".join(line.strip() for line in self.lines[node.lineno - 1 : end])
        return " ".join(text.split())[:160]


MODULE_NAME = "rewardlab_judge"  # the module's `__name__` inside the judge's sandbox

if TYPE_CHECKING or __name__ != MODULE_NAME:  # on the host: the one definition in rewardlab.errors
    from rewardlab.errors import CandidateError as CandidateError
else:  # inside the judge's sandbox only the standard library is importable

    class CandidateError(Exception):
        """The program raised; an instance is also of the builtin it raised (`except ValueError`)."""


_FLUSH = 4096  # records per step at most (well under the frame cap)
_FLUSH_SECONDS = 0.25  # records waiting longer than this are sent while the tests run on
_POLL_SECONDS = 0.02

_RAISED: dict[str, type[CandidateError]] = {}


def candidate_raised(type_name: str, message: str) -> CandidateError:
    cls = _RAISED.get(type_name)
    if cls is None:
        base = getattr(builtins, type_name, None)
        cls = CandidateError
        if isinstance(base, type) and issubclass(base, Exception) and base is not Exception:
            try:
                cls = type(f"Remote{type_name}", (CandidateError, base), {})
            except TypeError:  # a builtin that cannot be a second base (layout conflict)
                cls = CandidateError
        _RAISED[type_name] = cls
    return cls(message)


def describe(exc: BaseException) -> str:
    if isinstance(exc, CandidateError):
        return f"candidate raised {exc}"[:300]
    return f"{type(exc).__name__}: {exc}"[:300]


def _wire(name: str) -> Any:
    """`encode_value`/`decode_value` of the sandbox's own program (its `__main__`): the judge
    encodes a call exactly as the host's session does, so prefetched answers are found."""
    return getattr(sys.modules["__main__"], name)


class _Program:
    """A function of the candidate's program, as the tests see it."""

    def __init__(self, judge: Judge, name: str):
        self._judge = judge
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._judge.call(self._name, args, kwargs)

    def __repr__(self) -> str:
        return f"<sandboxed {self._name}>"


class Judge:
    """One `check(candidate)` run on a thread of its own; the session's calls step it."""

    def __init__(self, prefetched: list[list[Any]]):
        self.records: list[list[Any]] = []
        self._lock = threading.Lock()
        self.calls = 0
        self._calls_seen = 0  # `calls` at the previous assert
        self._to_host: queue.Queue[dict[str, Any]] = queue.Queue(1)
        self._to_check: queue.Queue[tuple[str, Any]] = queue.Queue(1)
        self._prefetched: dict[str, deque[str]] = {}
        for key, reply in prefetched:
            self._prefetched.setdefault(str(key), deque()).append(str(reply))

    # -- the check thread --------------------------------------------------------------------------
    def record(self, index: int, value: Any, exc: BaseException | None) -> None:
        called = self.calls > self._calls_seen
        self._calls_seen = self.calls
        ok = exc is None and bool(value)
        detail = "" if ok else (describe(exc) if exc is not None else "assertion is false")
        with self._lock:
            self.records.append([index, ok, called, detail])

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        encode = _wire("encode_value")
        try:
            key_args = [encode(a) for a in args]
            key_kwargs = {k: encode(v) for k, v in kwargs.items()}
        except Exception as exc:
            raise TypeError(f"cannot pass this argument into the sandbox: {exc}") from None
        self.calls += 1
        pending = self._prefetched.get(json.dumps([name, key_args, key_kwargs], separators=(",", ":"), sort_keys=True))
        if pending:
            reply = json.loads(pending.popleft())
            if reply.get("op") == "raise":
                raise candidate_raised(str(reply.get("type")), f"{reply.get('type')}: {reply.get('message')}")
            return _wire("decode_value")(reply.get("value"))
        self._to_host.put({"need": [name, list(args), dict(kwargs)]})
        kind, value = self._to_check.get()
        if kind == "raise":
            type_name, message = value
            raise candidate_raised(str(type_name), str(message))
        return value

    def run(self, code: Any, helpers: Any, check_name: str, entry_point: str, free: list[str]) -> None:
        ns: dict[str, Any] = {name: _Program(self, name) for name in free}
        ns.update({"__builtins__": builtins, "__name__": "__rewardlab_tests__", "__rl_record__": self.record})
        done: dict[str, Any] = {"completed": False, "stopped_by": ""}
        try:
            if helpers is not None:
                ns[entry_point] = _Program(self, entry_point)  # a helper may call it
                exec(helpers, ns)
            exec(code, ns)
            ns[check_name](_Program(self, entry_point))
            done["completed"] = True
        except BaseException as exc:  # SystemExit too: the tests stop, the judge answers
            done["stopped_by"] = f"check stopped: {describe(exc)}"
        self._to_host.put({"done": done})

    # -- the session's side --------------------------------------------------------------------
    def step(self) -> dict[str, Any]:
        """The check thread's next event; meanwhile, records are sent on every `_FLUSH_SECONDS`
        (or `_FLUSH` records), so verdicts reached stand if the tests then run out of time."""
        flushed = time.monotonic()
        while True:
            try:
                event = self._to_host.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                due = time.monotonic() - flushed > _FLUSH_SECONDS
                if self.records and (due or len(self.records) >= _FLUSH):
                    event = {"more": True}
                else:
                    continue
            with self._lock:
                records, self.records = self.records, []
            return {"records": records, "calls": self.calls, **event}

    def resume(self, kind: str, value: Any) -> dict[str, Any]:
        if kind != "more":  # "more" acknowledges flushed records: the check thread is not waiting
            self._to_check.put((kind, value))
        return self.step()


_JUDGE: list[Judge] = []


def rl_judge_start(tests: str, helpers: str, check_name: str, entry_point: str, free: list[str],
                   prefetched: list[list[Any]]) -> dict[str, Any]:  # fmt: skip
    rewriter = AssertRewriter(tests)
    code = compile(rewriter.visit(ast.parse(tests, "<tests>")), "<tests>", "exec")
    helpers_code = compile(helpers, "<prompt helpers>", "exec") if helpers else None
    judge = Judge(prefetched)
    _JUDGE.append(judge)
    threading.Thread(target=judge.run, args=(code, helpers_code, check_name, entry_point, free), daemon=True).start()
    return {"sites": len(rewriter.sites), **judge.step()}


def rl_judge_resume(kind: str, value: Any) -> dict[str, Any]:
    return _JUDGE[-1].resume(kind, value)
