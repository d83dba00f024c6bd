"""`code.tests`: run the program in a response against tests, inside the sandbox."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from rewardlab.core import BaseReward, ErrorKind, RewardResult, Sample
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.sandbox import (
    FALLBACK_WARNING,
    CandidateError,
    ExecResult,
    Limits,
    SandboxConfig,
    SandboxError,
    SandboxPool,
    SessionEnded,
)
from rewardlab.verify.code.extract import Pick, extract_code
from rewardlab.verify.code.harness import (
    CheckReport,
    PromptHelpers,
    prepare_tests,
    prompt_helpers,
    run_check,
)

_MIB = 1 << 20

# Compiled languages run through the same sandbox when their toolchain is on the host's /usr:
# the job compiles into its private /tmp and runs the binary (stdin/stdout cases only).
COMPILERS: dict[str, tuple[str, str, str]] = {
    "c": ("gcc", "main.c", "gcc -O2 -std=gnu17 -o /tmp/main main.c -lm"),
    "cpp": ("g++", "main.cpp", "g++ -O2 -std=gnu++17 -o /tmp/main main.cpp"),
}
# Keyed by pid too: a forked runner worker must start its own sandboxes, never talk through
# pipes it inherited from its parent's pool.
_POOLS: dict[tuple[int, int, SandboxConfig], SandboxPool] = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(size: int, config: SandboxConfig) -> SandboxPool:
    """One warm pool per (size, config) in this process, closed at exit."""
    key = (os.getpid(), size, config)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = SandboxPool(size, config)
        return pool


@atexit.register
def _close_pools() -> None:
    for (pid, _, _), pool in list(_POOLS.items()):
        if pid == os.getpid():
            pool.close()


def output_matches(expected: str, actual: str, *, strict_whitespace: bool = False) -> bool:
    """Compare program output with the expected output (trailing spaces and blank lines at the
    end are ignored unless `strict_whitespace`, as competitive-programming judges do)."""
    if strict_whitespace:
        return actual == expected

    def norm(text: str) -> list[str]:
        lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    return norm(actual) == norm(expected)


class CodeTests(BaseReward):
    """Runs the response's program in the sandbox against the reference tests.

    `reference` is either `{"cases": [{"input": ..., "output": ...}, ...]}` (stdin/stdout) or
    `{"entry_point": ..., "tests": "<source defining check(candidate)>"}` (HumanEval style; the
    `check` runs in the trusted process and calls the program through the sandbox). A JSON
    string holding either is accepted. The score is 1.0/0.0 for all tests passing
    (`score="all_pass"`) or the fraction passed (`score="pass_fraction"`); `info` carries both,
    the per-test verdicts, timeouts, memory kills and stderr excerpts. A sandbox that cannot
    start is an `error/sandbox` result, never a failing program.

    Args:
        score: "all_pass" (1.0 or 0.0) or "pass_fraction".
        language: "python"; "c" and "cpp" run stdin/stdout cases when gcc/g++ are installed.
        extract: which fenced block of a markdown response is the program ("last", "first",
            "all" joined, or "none": the whole response).
        prepend_prompt: run `prompt + code` (HumanEval completions continue the prompt).
        cpu_seconds: CPU-time limit per program run (per session for check tests); the verdict
            limit, unaffected by machine load.
        wall_seconds: wall-clock limit, for programs that wait instead of computing.
        memory_mb: address-space limit per process.
        output_kb: stdout+stderr kept; the program is killed past it.
        processes: processes (threads included) a program may run at once.
        tmp_mb: size of the program's private /tmp; also caps any single file at 16 MiB.
        workers: sandboxes in this process's warm pool (and samples scored at once).
        isolation: "auto" (bubblewrap if installed, else rlimits with a loud warning),
            "bubblewrap" (refuse to run without it) or "rlimits".
        strict_whitespace: compare stdout exactly instead of ignoring trailing blanks.
        check_name: the test function's name in HumanEval-style tests.
        python: interpreter inside the sandbox (default /usr/bin/python3 when present).
    """

    name = "code.tests"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        score: Literal["all_pass", "pass_fraction"] = "all_pass",
        language: Literal["python", "c", "cpp"] = "python",
        extract: Pick = "last",
        prepend_prompt: bool = False,
        cpu_seconds: float = 5.0,
        wall_seconds: float = 20.0,
        memory_mb: int = 1024,
        output_kb: int = 1024,
        processes: int = 32,
        tmp_mb: int = 64,
        workers: int = 2,
        isolation: Literal["auto", "bubblewrap", "rlimits"] = "auto",
        strict_whitespace: bool = False,
        check_name: str = "check",
        python: str | None = None,
    ):
        if score not in ("all_pass", "pass_fraction"):
            raise ConfigError(f"score must be 'all_pass' or 'pass_fraction', got {score!r}")
        if language != "python" and language not in COMPILERS:
            raise ConfigError(f"language {language!r} is not supported; use 'python', 'c' or 'cpp'")
        if language in COMPILERS and shutil.which(COMPILERS[language][0]) is None:
            raise ConfigError(f"language {language!r} needs {COMPILERS[language][0]} on PATH; install it (apt-get install build-essential)")
        if workers < 1:
            raise ConfigError(f"workers must be >= 1, got {workers}")
        self.limits = Limits(
            cpu_seconds=cpu_seconds, wall_seconds=wall_seconds, memory_bytes=memory_mb * _MIB,
            output_bytes=output_kb * 1024, processes=processes, tmp_bytes=tmp_mb * _MIB,
            file_size_bytes=min(16, tmp_mb) * _MIB,
        )  # fmt: skip
        self.config = SandboxConfig(isolation=isolation, python=python, limits=self.limits)

    # The pool lives in a per-process table, not on the reward: the reward pickles cleanly into
    # runner workers, and each process starts its own sandboxes on first use.
    @property
    def pool(self) -> SandboxPool:
        return shared_pool(int(self.params["workers"]), self.config)

    # -- scoring -------------------------------------------------------------------------------------
    def compute_batch(self, samples: Sequence[Sample]) -> Sequence[RewardResult | float | bool | None]:
        if len(samples) <= 1:
            return [self._safe_compute(s) for s in samples]
        with ThreadPoolExecutor(int(self.params["workers"])) as executor:
            return list(executor.map(self._safe_compute, samples))

    def compute(self, sample: Sample) -> RewardResult:
        reference = _reference(sample.reference)
        language = str(self.params["language"])
        extracted = extract_code(sample.response_text, pick=self.params["extract"], language=language)
        code = extracted.code
        helpers = None
        if self.params["prepend_prompt"]:
            prompt = sample.prompt if isinstance(sample.prompt, str) else ""
            code = f"{prompt}{code}"
            if "entry_point" in reference and (helpers := prompt_helpers(prompt, reference["entry_point"])):
                # re-bound after the program: its own functions call the prompt's helpers too
                code = f"{code}\n\n{helpers.source}\n"
        try:
            pool = self.pool
            if "cases" in reference:
                verdicts = self._run_cases(pool, code, reference["cases"])
            elif language != "python":
                raise ScoringError("invalid_input", f"check(candidate) tests need language='python'; {language} takes stdin/stdout cases")
            else:
                verdicts = self._run_check(pool, code, reference, helpers)
        except SandboxError as exc:
            return RewardResult.failure(ErrorKind.SANDBOX, f"{exc}", info={"extracted_from": extracted.source})
        return self._result(verdicts, extracted.source, pool)

    def _run_cases(self, pool: SandboxPool, code: str, cases: list[dict[str, str]]) -> dict[str, Any]:
        tests = []
        for i, case in enumerate(cases):
            run = self._run_one(pool, code, case["input"])
            same = output_matches(case["output"], run.stdout, strict_whitespace=bool(self.params["strict_whitespace"]))
            verdict = "pass" if run.ok and same else ("wrong_answer" if run.ok else run.outcome.value)
            if self.params["language"] != "python" and run.exit_code == 97 and "error" in run.stderr:
                verdict = "compile_error"
            entry: dict[str, Any] = {"test": i, "verdict": verdict}
            if verdict != "pass":
                entry["detail"] = run.reason() if not run.ok else f"got {run.stdout[:120]!r}"
                entry["stderr"] = run.stderr[-300:]
            entry["cpu_seconds"] = run.cpu_seconds
            tests.append(entry)
        return {"style": "stdio", "tests": tests}

    def _run_one(self, pool: SandboxPool, code: str, stdin: str) -> ExecResult:
        language = str(self.params["language"])
        if language == "python":
            return pool.run(code, stdin=stdin, limits=self.limits)
        _, filename, compile_cmd = COMPILERS[language]
        script = f"{compile_cmd} || exit 97; exec /tmp/main"  # 97: compile error (see stderr)
        return pool.run(argv=["/bin/sh", "-c", script], files={filename: code}, stdin=stdin, limits=self.limits)

    def _run_check(self, pool: SandboxPool, code: str, reference: Mapping[str, Any], helpers: PromptHelpers | None) -> dict[str, Any]:
        check_name = str(self.params["check_name"])
        prepared = prepare_tests(reference["tests"], check_name=check_name)  # bad tests fail here
        program: ExecResult | None = None
        report: CheckReport | None = None
        load_error = ""
        try:
            prefetch = prepared.prefetch(reference["entry_point"], trusted=helpers.names if helpers else frozenset())
            with pool.session(code, limits=self.limits, prefetch=prefetch) as session:
                report = run_check(reference["tests"], reference["entry_point"], session, check_name=check_name, helpers=helpers)
            program = session.result
        except CandidateError as exc:  # the program raised while loading
            load_error = str(exc)[-600:]
        except SessionEnded as ended:  # exited or was killed while loading (sys.exit before tests)
            program = ended.result
            load_error = f"the program ended before the tests ran: {ended.result.reason()}"
        if report is None:  # every test counts as failed, so pass fractions stay comparable
            tests: list[dict[str, Any]] = [{**v.to_info(), "detail": load_error} for v in prepared.fresh_verdicts()]
            return {"style": "check", "tests": tests, "load_error": load_error, "program": program.to_info() if program else None}
        tests = [v.to_info() for v in report.verdicts]
        out: dict[str, Any] = {"style": "check", "tests": tests, "calls": report.calls, "completed": report.completed}
        if report.stopped_by:
            out["stopped_by"] = report.stopped_by
        if program is not None:
            out["program"] = program.to_info()
        if program is not None and not program.ok and report.ended is None:
            # the tests finished but the program then died (e.g. at exit): not a clean pass
            out["tests"].append({"test": len(tests), "verdict": program.outcome.value, "detail": program.reason()})
        return out

    def _result(self, run: dict[str, Any], source: str, pool: SandboxPool) -> RewardResult:
        tests = run["tests"]
        passed = sum(t["verdict"] == "pass" for t in tests)
        total = sum(t["verdict"] != "vacuous" for t in tests)  # an assert that held without a call tests nothing
        all_pass = total > 0 and passed == total
        fraction = passed / total if total else 0.0
        info: dict[str, Any] = {
            "all_pass": all_pass, "pass_fraction": fraction, "passed": passed, "total": total,
            "extracted_from": source, "isolation": pool.isolation, **run,
        }  # fmt: skip
        if not pool.isolated:
            info["sandbox_warning"] = FALLBACK_WARNING
        score = float(all_pass) if self.params["score"] == "all_pass" else fraction
        return RewardResult.ok(score, info=info)


def _reference(ref: Any) -> dict[str, Any]:
    """Validate the reference; accept a JSON string holding it. Raises ScoringError."""
    if isinstance(ref, str):
        with contextlib.suppress(ValueError):
            ref = json.loads(ref)
    hint = "code.tests needs reference = {'cases': [{'input', 'output'}, ...]} or {'entry_point', 'tests'}"
    if not isinstance(ref, Mapping):
        raise ScoringError("invalid_input", f"{hint}; got {type(ref).__name__}")
    if "cases" in ref:
        cases = ref["cases"]
        if not isinstance(cases, list) or not cases:
            raise ScoringError("invalid_input", f"{hint}; 'cases' must be a non-empty list")
        for i, case in enumerate(cases):
            if not isinstance(case, Mapping) or not isinstance(case.get("input", ""), str) or not isinstance(case.get("output"), str):
                raise ScoringError("invalid_input", f"{hint}; cases[{i}] needs string 'input' and 'output'")
        return {"cases": [{"input": c.get("input", ""), "output": c["output"]} for c in cases]}
    tests = ref.get("tests", ref.get("test"))
    entry = ref.get("entry_point")
    if isinstance(tests, str) and isinstance(entry, str) and entry.isidentifier():
        return {"tests": tests, "entry_point": entry}
    raise ScoringError("invalid_input", f"{hint}; got keys {sorted(ref)}")
