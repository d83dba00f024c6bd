"""`code.tests`: run the program in a response against tests, inside the sandbox."""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Literal

from rewardlab.core import BaseReward, ErrorKind, RewardResult, Sample
from rewardlab.core.choices import check_choices
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.sandbox import ExecResult, Limits, SandboxConfig, SandboxError, SandboxPool
from rewardlab.sandbox.pool import FALLBACK_WARNING, job_files_limit
from rewardlab.sandbox.session import CandidateError, SessionEnded
from rewardlab.verify.code.compile import BuildCache, compile_program
from rewardlab.verify.code.extract import Pick, extract_code
from rewardlab.verify.code.formats import Problem, read_reference
from rewardlab.verify.code.harness import (
    CheckReport,
    PromptHelpers,
    prepare_tests,
    prompt_helpers,
    run_check,
)
from rewardlab.verify.code.judged import judge_limits, judge_session, judged_check
from rewardlab.verify.code.judges import Exact, Judge, Lines, make_judge
from rewardlab.verify.code.languages import Language, language
from rewardlab.verify.code.literal import literal_plan, run_literal
from rewardlab.verify.code.stdio import (
    Checker,
    Program,
    checker_language,
    compile_failed,
    run_cases,
)

_MIB = 1 << 20
TimeScale = Literal["none", "hackerearth"]
JudgeName = Literal["auto", "lines", "exact", "tokens", "float", "token_set", "code_contests", "live_code_bench", "apps", "taco"]
#: judge="auto": each format is judged as its data set's own grader judges it (official.py)
FORMAT_JUDGES = {"rewardlab": "lines", "code_contests": "code_contests", "live_code_bench": "live_code_bench",
                 "apps": "apps", "taco": "taco"}  # fmt: skip

# Keyed by pid too: a forked runner worker must start its own sandboxes, never talk through
# pipes it inherited from its parent's pool.
_POOLS: dict[tuple[int, int, SandboxConfig, str], SandboxPool] = {}
_POOLS_LOCK = threading.Lock()
_CACHES: dict[tuple[int, str | None], BuildCache] = {}


def shared_pool(size: int, config: SandboxConfig, *, role: str = "program") -> SandboxPool:
    """One warm pool per (size, config, role) in this process, closed at exit; judges
    (`role="judge"`) get pools of their own, apart from the programs they judge."""
    key = (os.getpid(), size, config, role)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = SandboxPool(size, config)
        return pool


def shared_build_cache(cache_dir: str | None) -> BuildCache:
    """One cache of builds per directory (None: in memory only) in this process."""
    key = (os.getpid(), cache_dir)
    with _POOLS_LOCK:
        cache = _CACHES.get(key)
        if cache is None:
            cache = _CACHES[key] = BuildCache(cache_dir=cache_dir)
        return cache


@atexit.register
def _close_pools() -> None:
    for (pid, *_), pool in list(_POOLS.items()):
        if pid == os.getpid():
            pool.close()


def output_matches(expected: str, actual: str, *, strict_whitespace: bool = False) -> bool:
    """Compare program output with the expected output (trailing spaces and blank lines at the
    end are ignored unless `strict_whitespace`, as competitive-programming judges do)."""
    return (Exact() if strict_whitespace else Lines()).judge(expected, actual).passed


class CodeTests(BaseReward):
    """Runs the response's program in the sandbox against the reference tests.

    `reference` is stdin/stdout cases (`{"cases": [{"input", "output"}, ...]}`, or a
    CodeContests, LiveCodeBench or TACO row as the data set ships it: see `formats.py`), or
    `{"entry_point", "tests": "<source defining check(candidate)>"}` (HumanEval style, Python
    only; `check` and the prompt's helpers run in a judge sandbox of their own and call the
    program in its sandbox through this process). A
    JSON string holding either is accepted. Compiled languages are built once per distinct
    source, in the sandbox, under their own limits; a program that does not build scores 0
    with the compiler's message in `info["compile"]`. The score is 1.0/0.0 for all tests
    passing (`score="all_pass"`) or the mean test score (`score="pass_fraction"`: partial
    credit, a checker's points included); `info` carries both and the per-test verdicts. A
    sandbox that cannot start is an `error/sandbox` result, a broken checker `error/crash`,
    never a failing program.

    Args:
        score: "all_pass" (1.0 or 0.0) or "pass_fraction".
        language: "python", "c", "cpp", "java", "javascript", "typescript", "go" or "rust".
        standard: the C or C++ standard to compile as ("c++17", "gnu++23", "c11"...; None: the
            language's default, gnu++20 and gnu17); a problem's own `"standard"` overrides it.
        extract: which fenced block of a markdown response is the program ("last", "first",
            "all" joined, or "none": the whole response).
        prepend_prompt: run `prompt + code` (HumanEval completions continue the prompt).
        judge: how stdout is compared when the problem has no checker: "auto" (the data
            set's own grader for a CodeContests, LiveCodeBench, APPS or TACO row, "lines" for
            `cases`), "lines" (trailing blanks ignored), "exact", "tokens", "float" (testlib's
            doubleCompare: within `abs_tol` or `rel_tol`), "token_set" (any order), or one data
            set's grader for every row: "code_contests", "live_code_bench", "apps", "taco".
        abs_tol, rel_tol: tolerances of the "float" judge.
        fail_fast: stop at the first failing test (the rest are "not_run", counted as failed).
        cpu_seconds: CPU-time limit per program run (per session for check tests); the verdict
            limit, unaffected by machine load. A problem's own time limit replaces it when
            `use_reference_limits`.
        time_scale: "none", or "hackerearth": multiply the time limit by the language's factor
            (C/C++ 1, Go/Java 2, Rust 2.5, JavaScript/TypeScript/Python 5).
        wall_seconds: wall-clock limit, for programs that wait instead of computing.
        memory_mb: memory the program may use per process (RLIMIT_DATA; runtimes get their
            own allowance on top, see `languages.py`).
        use_reference_limits: take the time and memory limits a data set states
            (CodeContests `time_limit`, `memory_limit_bytes`) over `cpu_seconds`/`memory_mb`.
        output_kb: stdout+stderr kept; the program is killed past it (8 MiB: DOMjudge's and
            Kattis problemtools' default output limit, so a correct multi-megabyte answer passes).
        processes: processes (threads included) a program may run at once.
        tmp_mb: size of the program's private /tmp; also caps any single file at 16 MiB.
        workers: sandboxes in this process's warm pool (and samples scored at once).
        isolation: "auto" (bubblewrap if installed, else rlimits with a loud warning),
            "bubblewrap" (refuse to run without it) or "rlimits".
        strict_whitespace: same as judge="exact" (kept for older specs).
        check_name: the test function's name in HumanEval-style tests.
        python: interpreter inside the sandbox (default /usr/bin/python3 when present).
        compile_cache: directory that keeps builds across processes and runs (keyed by a hash
            of language, toolchain and source); None keeps them in this process only.
        checker_headers: header name -> host path, put next to every checker while it compiles
            (`{"testlib.h": "/path/to/testlib.h"}`: rewardlab does not ship testlib).
        trusted_tests: run `check(candidate)` tests and prompt helpers in THIS process instead
            of a judge sandbox of their own: only for data sets you have audited line by line
            (a test can then do anything this process can). `rewardlab serve` refuses it.
    """

    name = "code.tests"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        score: Literal["all_pass", "pass_fraction"] = "all_pass",
        language: str = "python",
        standard: str | None = None,
        extract: Pick = "last",
        prepend_prompt: bool = False,
        judge: JudgeName = "auto",
        abs_tol: float = 1e-6,
        rel_tol: float = 1e-6,
        fail_fast: bool = False,
        cpu_seconds: float = 5.0,
        time_scale: TimeScale = "none",
        wall_seconds: float = 20.0,
        memory_mb: int = 1024,
        use_reference_limits: bool = True,
        output_kb: int = 8192,
        processes: int = 32,
        tmp_mb: int = 64,
        workers: int = 2,
        isolation: Literal["auto", "bubblewrap", "rlimits"] = "auto",
        strict_whitespace: bool = False,
        check_name: str = "check",
        python: str | None = None,
        compile_cache: str | None = None,
        checker_headers: Mapping[str, str] | None = None,
        trusted_tests: bool = False,
    ):
        check_choices(CodeTests.__init__, score=score, time_scale=time_scale)
        lang = _language(language).with_standard(standard)
        if workers < 1:
            raise ConfigError(f"workers must be >= 1, got {workers}")
        chosen = "exact" if strict_whitespace else judge
        self.judge: Judge | None = None if chosen == "auto" else make_judge(chosen, abs_tol=abs_tol, rel_tol=rel_tol)
        self.limits = Limits(
            cpu_seconds=cpu_seconds, wall_seconds=wall_seconds, memory_bytes=memory_mb * _MIB,
            output_bytes=output_kb * 1024, processes=processes, tmp_bytes=tmp_mb * _MIB,
            file_size_bytes=min(16, tmp_mb) * _MIB,
        )  # fmt: skip
        self.lang = lang
        self._headers = _read_headers(checker_headers or {})
        self.config = SandboxConfig(isolation=isolation, python=python, limits=self.limits)

    # The pool lives in a per-process table, not on the reward: the reward pickles cleanly into
    # runner workers, and each process starts its own sandboxes on first use.
    @property
    def pool(self) -> SandboxPool:
        return shared_pool(int(self.params["workers"]), self.config)

    @property
    def judges(self) -> SandboxPool:
        """The pool the reference's `check(candidate)` tests run in: not the program's pool,
        so a session never waits for a worker its own program holds."""
        return shared_pool(int(self.params["workers"]), self.config, role="judge")

    @property
    def builds(self) -> BuildCache:
        return shared_build_cache(self.params["compile_cache"])

    # -- scoring -------------------------------------------------------------------------------------
    def compute_batch(self, samples: Sequence[Sample]) -> Sequence[RewardResult | float | bool | None]:
        if len(samples) <= 1:
            return [self._safe_compute(s) for s in samples]
        with ThreadPoolExecutor(int(self.params["workers"])) as executor:
            return list(executor.map(self._safe_compute, samples))

    def compute(self, sample: Sample) -> RewardResult:
        reference = read_reference(sample.reference)
        extracted = extract_code(sample.response_text, pick=self.params["extract"], language=self.lang.name)
        code = extracted.code
        helpers = None
        if self.params["prepend_prompt"]:
            prompt = sample.prompt if isinstance(sample.prompt, str) else ""
            code = f"{prompt}{code}"
            if isinstance(reference, Mapping) and (helpers := prompt_helpers(prompt, reference["entry_point"])):
                # re-bound after the program: its own functions call the prompt's helpers too
                code = f"{code}\n\n{helpers.source}\n"
        if isinstance(reference, Mapping):  # the data set's environment around the program
            code = f"{reference.get('prelude', '')}{code}{reference.get('postlude', '')}"
        try:
            pool = self.pool
            if isinstance(reference, Problem):
                verdicts = self._run_problem(pool, code, reference)
            elif self.lang.name != "python":
                raise ScoringError("invalid_input", f"check(candidate) tests need language='python'; {self.lang.name} takes stdin/stdout cases")
            else:
                verdicts = self._run_check(pool, code, reference, helpers)
        except SandboxError as exc:
            return RewardResult.failure(ErrorKind.SANDBOX, f"{exc}", info={"extracted_from": extracted.source})
        return self._result(verdicts, extracted.source, pool)

    def _run_problem(self, pool: SandboxPool, code: str, problem: Problem) -> dict[str, Any]:
        program = self._program(pool, code, problem)
        out: dict[str, Any] = {"style": "stdio", "format": problem.source_format,
                               "limits": {"cpu_seconds": program.limits.cpu_seconds, "memory_mb": program.memory_mb}}  # fmt: skip
        if program.lang.standard:
            out["standard"] = program.lang.standard
        if program.build is not None:
            out["compile"] = program.build.to_info()
            if program.build.status == "unreadable":  # not the program's fault: no score, an error
                raise ScoringError("sandbox", program.build.message[-600:])
            if not program.build.ok:
                return {**out, "tests": compile_failed(len(problem.cases))}
        checker = self._checker(pool, problem.checker) if problem.checker else None
        judge = self.judge or make_judge(FORMAT_JUDGES[problem.source_format])
        out["judge"] = "checker" if checker else judge.name
        tests = run_cases(pool, program, problem.cases, judge=judge, checker=checker, fail_fast=bool(self.params["fail_fast"]),
                          checker_pool=self.judges if checker else None)  # fmt: skip
        return {**out, "tests": tests}

    def _program(self, pool: SandboxPool, code: str, problem: Problem) -> Program:
        """The program's limits for this problem (module doc of languages.py), its standard, and
        its build."""
        try:
            lang = self.lang.with_standard(problem.standard)
        except ConfigError as exc:  # the row asks for what this language cannot do: bad input
            raise ScoringError("invalid_input", f"the problem's 'standard': {exc}") from None
        by_reference = bool(self.params["use_reference_limits"])
        cpu = float(problem.time_limit if by_reference and problem.time_limit else self.params["cpu_seconds"])
        if self.params["time_scale"] == "hackerearth":
            cpu *= lang.time_factor
        memory_mb = int(problem.memory_mb if by_reference and problem.memory_mb else self.params["memory_mb"])
        limits = lang.limits(cpu_seconds=cpu, wall_seconds=float(self.params["wall_seconds"]), memory_mb=memory_mb, base=self.limits)
        build = compile_program(pool, lang, code, memory_mb=memory_mb, cache=self.builds) if lang.compile else None
        if build is not None and build.ok and (size := sum(map(len, build.artifacts.values()))) > job_files_limit(limits):
            # the build is fine (and stays cached) but no test run under these limits can hold it
            build = replace(build, status="compile_limit", message=f"the build is {size} bytes, more than a test run's /tmp takes "
                            f"({job_files_limit(limits)} bytes; raise tmp_mb)\n{build.message}")  # fmt: skip
        if lang.name == "python":  # the data set's grader's imports, as it runs the program
            code = problem.python_source(code)
        return Program(lang, code, build, limits, memory_mb)

    def _checker(self, pool: SandboxPool, spec: Mapping[str, Any]) -> Checker:
        """The problem's checker, built (a checker that does not build is the problem's fault);
        its `files` (and `checker_headers`, e.g. testlib.h) sit next to it while it compiles."""
        lang = checker_language(spec["language"])
        if lang.compile is None:
            raise ScoringError("invalid_input", f"checker language {lang.name!r} is not supported; write the checker in a compiled language")
        headers = {**self._headers, **spec.get("files", {})}
        build = compile_program(pool, lang, spec["source"], memory_mb=256, cache=self.builds, headers=headers)
        if build.status == "unreadable":
            raise ScoringError("sandbox", build.message[-600:])
        if not build.ok:
            raise ScoringError("invalid_input", f"the problem's checker does not build: {build.message[-600:]}")
        limits = lang.limits(cpu_seconds=max(5.0, float(self.params["cpu_seconds"])), wall_seconds=30.0, memory_mb=256, base=self.limits)
        return Checker(lang, build, spec["source"], limits)

    def _check_report(self, pool: SandboxPool, code: str, reference: Mapping[str, Any], helpers: PromptHelpers | None,
                      prefetch: list[tuple[str, tuple[Any, ...]]]) -> tuple[CheckReport, ExecResult | None]:  # fmt: skip
        """The tests' report and how the program ended: tests that are only data are judged here
        (`literal.py`), any other in a judge sandbox, or in this process with `trusted_tests`."""
        tests, entry_point, check_name = reference["tests"], reference["entry_point"], str(self.params["check_name"])
        trusted = bool(self.params["trusted_tests"])
        plan = None if trusted else literal_plan(tests, check_name)
        with pool.session(code, limits=self.limits, prefetch=prefetch) as session:
            if plan is not None:
                report = run_literal(plan, tests, entry_point, session, check_name=check_name)
            elif trusted:  # the opt-in: the tests run in this process
                report = run_check(tests, entry_point, session, check_name=check_name, helpers=helpers)
            else:
                with judge_session(self.judges, judge_limits(self.limits)) as judge:
                    report = judged_check(tests, entry_point, session, judge, check_name=check_name, helpers=helpers)
        return report, session.result

    def _run_check(self, pool: SandboxPool, code: str, reference: Mapping[str, Any], helpers: PromptHelpers | None) -> dict[str, Any]:
        check_name = str(self.params["check_name"])
        prepared = prepare_tests(reference["tests"], check_name=check_name)  # bad tests fail here
        program: ExecResult | None = None
        report: CheckReport | None = None
        load_error = ""
        try:
            prefetch = prepared.prefetch(reference["entry_point"], trusted=helpers.names if helpers else frozenset())
            report, program = self._check_report(pool, code, reference, helpers, prefetch)
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
        counted = [t for t in tests if t["verdict"] != "vacuous"]  # an assert that held without a call tests nothing
        total = len(counted)
        all_pass = total > 0 and passed == total
        fraction = sum(t.get("score", float(t["verdict"] == "pass")) for t in counted) / total if total else 0.0
        info: dict[str, Any] = {
            "all_pass": all_pass, "pass_fraction": fraction, "passed": passed, "total": total,
            "extracted_from": source, "isolation": pool.isolation, **run,
        }  # fmt: skip
        if not pool.isolated:
            info["sandbox_warning"] = FALLBACK_WARNING
        score = float(all_pass) if self.params["score"] == "all_pass" else fraction
        return RewardResult.ok(score, info=info)


def _language(name: str) -> Language:
    """A supported language whose toolchain is installed (ConfigError saying what to install)."""
    lang = language(name)
    if lang.compile is not None and not lang.available():
        raise ConfigError(f"language {name!r} needs {lang.toolchain} under /usr (where the sandbox sees it); install {lang.package} (make system-deps)")
    return lang


def _read_headers(paths: Mapping[str, str]) -> dict[str, str]:
    """The text of each checker header (ConfigError naming a file that cannot be read)."""
    headers = {}
    for name, path in paths.items():
        if not name or "/" in name:
            raise ConfigError(f"checker_headers keys are file names as the checker includes them, got {name!r}")
        try:
            with open(path, encoding="utf-8") as f:
                headers[name] = f.read()
        except OSError as exc:
            raise ConfigError(f"checker_headers[{name!r}]: cannot read {path}: {exc.strerror}") from None
    return headers
