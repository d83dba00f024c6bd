"""stdin/stdout tests: run a built program on each case in the sandbox and judge its output.

Verdicts per test: "pass", "partial" (a checker gave points), "wrong_answer", the sandbox
outcome of a failed run ("runtime_error", "cpu_timeout", "wall_timeout", "memory",
"output_limit", "signalled"), "compile_error" (every test, when the build failed), and
"not_run" (after the first failure, with `fail_fast`). Memory: a run is "memory" when the
runtime says it ran out (`Language.oom_markers`), or it ended abnormally with its peak resident
size at 80% of the budget or more (a C program that dereferences the NULL of a failed malloc).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rewardlab.errors import ScoringError
from rewardlab.sandbox import ExecResult, Limits, Outcome, SandboxPool
from rewardlab.verify.code.compile import Build
from rewardlab.verify.code.judges import Judge, Judgement, checker_judgement
from rewardlab.verify.code.languages import Language, language, run_env

OOM_RSS_FRACTION = 0.8  # an abnormal end at this share of the budget counts as out of memory


@dataclass(frozen=True)
class Checker:
    """A problem's checker program, built, run as `checker input.txt output.txt answer.txt`."""

    lang: Language
    build: Build
    source: str
    limits: Limits


@dataclass(frozen=True)
class Program:
    """The candidate, built, and the limits of one of its test runs."""

    lang: Language
    source: str
    build: Build | None  # None: Python, run from source
    limits: Limits
    memory_mb: int


def run_verdict(program: Program, run: ExecResult) -> str:
    """The verdict of a failed run (module doc)."""
    if run.outcome in (Outcome.RUNTIME_ERROR, Outcome.SIGNALLED):
        budget_kb = program.memory_mb * 1024
        markers = program.lang.oom_markers
        if any(marker in run.stderr[-2000:] for marker in markers) or (run.max_rss_kb or 0) >= OOM_RSS_FRACTION * budget_kb:
            return Outcome.MEMORY.value
    return run.outcome.value


@contextlib.contextmanager
def program_runs(pool: SandboxPool, program: Program, tests: int) -> Iterator[Callable[[str], ExecResult]]:
    """A function that runs the program on one stdin. A built program runs its tests in one
    batch (one job sandbox, a fresh process per test under the test's limits: see
    `rewardlab.sandbox.batch`); Python runs each from source in a job of its own (a fork of the
    sandbox's warm interpreter, already no dearer than starting python3)."""
    if program.build is None:
        yield lambda stdin: pool.run(program.source, stdin=stdin, limits=program.limits)
        return
    argv = program.lang.run_argv(program.source, program.memory_mb)
    env = run_env(program.lang, program.memory_mb)
    with pool.batch(argv, files=program.build.artifacts, env=env, limits=program.limits, size=tests) as batch:
        yield batch.run


def run_checker(pool: SandboxPool, checker: Checker, case: dict[str, str], output: str) -> Judgement:
    """testlib's convention: `checker <input> <contestant output> <jury answer>`.

    A checker that fails on this output (crashes, hangs, exits 3 or with an unknown status) is
    run again on the jury's own answer. If it accepts that, the failure is this output's doing
    (a checker that crashes on hostile output must not turn a wrong answer into an error a
    policy could prefer): a wrong answer. If it fails on the jury's answer too, no output could
    have passed, and the problem is broken: a ScoringError("crash")."""
    judgement, failure = _check_once(pool, checker, case, output)
    if judgement is not None:
        return judgement
    own, own_failure = _check_once(pool, checker, case, case["output"])
    if own is None or not own.passed:
        why = own_failure if own is None else f"it does not accept the jury's answer ({own.detail})"
        raise ScoringError("crash", f"the problem's checker failed ({failure}), and on the jury's own answer: {why}; fix the checker")
    return Judgement(False, 0.0, f"the checker failed on this output ({failure}) and accepts the jury's answer: a wrong answer")


def _check_once(pool: SandboxPool, checker: Checker, case: dict[str, str], output: str) -> tuple[Judgement | None, str]:
    """The checker's verdict on `output`, or None and how the checker failed."""
    files: dict[str, str | bytes] = {**checker.build.artifacts, "input.txt": case["input"], "output.txt": output, "answer.txt": case["output"]}
    argv = [*checker.lang.run_argv(checker.source, 256), "input.txt", "output.txt", "answer.txt"]
    run = pool.run(argv=argv, files=files, limits=checker.limits, env=run_env(checker.lang, 256))
    if run.outcome not in (Outcome.OK, Outcome.RUNTIME_ERROR):
        return None, run.reason()
    judgement = checker_judgement(run.exit_code, run.stderr or run.stdout)
    return judgement, "" if judgement is not None else f"exit {run.exit_code}: {run.stderr[-300:]}"


def run_cases(
    pool: SandboxPool, program: Program, cases: list[dict[str, str]], *, judge: Judge, checker: Checker | None, fail_fast: bool,
    checker_pool: SandboxPool | None = None,
) -> list[dict[str, Any]]:
    """Per-test verdicts of `program` on `cases` (module doc). The checker runs in
    `checker_pool` (default `pool`): the program's batch holds a worker of `pool` meanwhile."""
    tests: list[dict[str, Any]] = []
    failed = False
    with program_runs(pool, program, len(cases)) as run_program:
        for i, case in enumerate(cases):
            if failed and fail_fast:
                tests.append({"test": i, "verdict": "not_run", "score": 0.0})
                continue
            entry = _judged(program, run_program(case["input"]), checker_pool or pool, checker, judge, case)
            entry["test"] = i
            failed = failed or entry["verdict"] != "pass"
            tests.append(entry)
    return tests


def _judged(program: Program, run: ExecResult, pool: SandboxPool, checker: Checker | None, judge: Judge, case: dict[str, str]) -> dict[str, Any]:
    """The verdict of one run."""
    entry: dict[str, Any] = {"test": 0, "cpu_seconds": run.cpu_seconds}
    if run.ok:
        judged = run_checker(pool, checker, case, run.stdout) if checker else judge.judge(case["output"], run.stdout)
        entry["verdict"] = "pass" if judged.passed else ("partial" if judged.score > 0 else "wrong_answer")
        entry["score"] = judged.score
        if not judged.passed:
            entry["detail"] = judged.detail
    else:
        entry.update(verdict=run_verdict(program, run), score=0.0, detail=run.reason(), stderr=run.stderr[-300:])
    return entry


def compile_failed(cases: int) -> list[dict[str, Any]]:
    """Every test of a program that did not build counts as failed (fractions stay comparable)."""
    return [{"test": i, "verdict": "compile_error", "score": 0.0} for i in range(cases)]


def checker_language(name: str) -> Language:
    lang = language(name)
    if not lang.available():
        raise ScoringError("invalid_input", f"the checker is {name}, whose toolchain ({lang.toolchain}) is not installed: install {lang.package}")
    return lang
