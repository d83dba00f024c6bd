"""HumanEval-style tests judged in a sandbox of their own; this process only relays and parses.

The reference's `check(candidate)` and the prompt's helpers are code that arrives with the data:
a downloaded data set or a server request. They run in a judge session (`_judge.py`, loaded in
a fresh sandboxed child of a pool of its own), never here; the program runs in its own session.
When the tests call the program, the judge asks this process, which makes the call in the
program's session and hands the answer back; both sides see only plain builtin values, decoded
with bounded size and depth. So the candidate cannot reach its judge (another process, another
sandbox), and the judge cannot reach this process: what it sends is checked as hostile data
(test numbers in range, known function names, the frame cap), anything else is an `error`.

The verdicts keep the meaning they had when the tests ran in-process (see `harness.py`): one
test per assert, vacuous asserts (no call of the program since the previous one) not counted,
asserts not reached count as failed, and the tests' own definitions of the prompt's helpers
are the ones they call, whatever the program redefines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rewardlab.errors import ScoringError
from rewardlab.sandbox import Limits, SandboxError, SandboxPool, Session
from rewardlab.sandbox.session import CandidateError, SessionEnded
from rewardlab.verify.code import _judge
from rewardlab.verify.code.harness import CheckReport, PromptHelpers, TestVerdict, prepare_tests

JUDGE_SOURCE = Path(_judge.__file__).read_text(encoding="utf-8")


def judge_limits(program: Limits) -> Limits:
    """The judge's limits: the program's, with at least 1 GiB of memory and 5 s more on the wall
    clock (it starts after the program and waits while the program computes), so a program that
    runs out of time is seen as the program's doing, not the tests'."""
    return Limits(
        cpu_seconds=program.cpu_seconds, wall_seconds=program.wall_seconds + 5.0,
        memory_bytes=max(1 << 30, program.memory_bytes), output_bytes=program.output_bytes,
        processes=program.processes, tmp_bytes=program.tmp_bytes, file_size_bytes=program.file_size_bytes,
        frame_bytes=program.frame_bytes,
    )  # fmt: skip


@contextlib.contextmanager
def judge_session(judges: SandboxPool, limits: Limits) -> Iterator[Session]:
    """A judge session of `judges` (the judge module loaded, no tests yet).

    Open it while holding the program's session, never before: every caller then takes a
    program sandbox first and a judge sandbox second, so callers in more threads than either
    pool has sandboxes wait their turn instead of each holding one kind and waiting for the
    other.

    Raises:
        SandboxError: the judge could not start or load (not the program's fault).
    """
    with contextlib.ExitStack() as stack:
        try:
            judge = stack.enter_context(judges.session(JUDGE_SOURCE, limits=limits, module_name=_judge.MODULE_NAME))
        except (CandidateError, SessionEnded) as exc:
            raise SandboxError(f"the judge's sandbox did not load: {exc}") from None
        yield judge


def judged_check(
    tests: str,
    entry_point: str,
    session: Session,
    judge: Session,
    *,
    check_name: str = "check",
    helpers: PromptHelpers | None = None,
) -> CheckReport:
    """Run the reference `check(candidate)` in `judge` (see `judge_session`) against `entry_point` of the program in `session`; the same report as
    `harness.run_check`.

    Raises:
        ScoringError: `invalid_input` for tests that do not parse; `crash` when the judge
            cannot load the tests (the reference's fault, not the program's).
    """
    prepared = prepare_tests(tests, check_name=check_name)
    report = CheckReport(prepared.fresh_verdicts(), completed=False)
    single = not prepared.sites  # no asserts: `check` completing is the one test
    allowed = prepared.free | {entry_point}
    forwarded = [[key, reply] for key, reply in session.take_prefetched(judge.limits.frame_bytes // 2)]
    started = False
    try:
        step = judge.call("rl_judge_start", tests, helpers.source if helpers else "", check_name,
                          entry_point, sorted(prepared.free), forwarded)  # fmt: skip
        started = True
        if isinstance(step, dict) and step.get("sites") != len(prepared.sites):
            raise ScoringError("crash", f"the judge found {step.get('sites')!r} asserts in the tests where this process found {len(prepared.sites)}")
        while (need := _apply(step, report, allowed, single)) is not None:
            if need == _MORE:
                step = judge.call("rl_judge_resume", "more", None)
                continue
            try:
                kind, answer = _call_program(session, *need)
            except SessionEnded as ended:  # the program ended during the call: the tests stop
                report.ended, report.stopped_by = ended, str(ended)
                break
            step = judge.call("rl_judge_resume", kind, answer)
    except CandidateError as exc:  # the judge module itself raised
        if not started:  # the tests did not load: the reference's fault, not the program's
            raise ScoringError("crash", f"the reference tests could not run: {str(exc)[-600:]}") from None
        report.stopped_by = f"check stopped: the tests' sandbox raised {str(exc)[:300]}"  # e.g. a step over the frame cap
        _fail_single(report, single)
    except SessionEnded as ended:  # the judge ended (its limits, or the tests exited)
        report.stopped_by = f"check stopped: the tests' sandbox ended: {ended.result.reason()}"
        _fail_single(report, single)
    return report


_MORE: tuple[str, list[Any], dict[str, Any]] = ("", [], {})  # records flushed, the tests go on


def _call_program(session: Session, name: str, args: list[Any], kwargs: dict[str, Any]) -> tuple[str, Any]:
    """The program's answer to one call of the tests, as the judge's `resume` takes it: the
    value is passed on its own (not inside another value), so it is no deeper than it came."""
    try:
        return "value", session.call(name, *args, **kwargs)
    except CandidateError as exc:
        return "raise", [getattr(exc, "remote_type", "Exception"), str(exc)]
    except TypeError as exc:  # an argument the wire cannot carry back (nested too deep)
        return "raise", ["TypeError", str(exc)[:300]]


def _apply(step: Any, report: CheckReport, allowed: frozenset[str], single: bool) -> tuple[str, list[Any], dict[str, Any]] | None:
    """Fold a judge step into `report`; the call the tests wait for, or None once they ended.
    Anything malformed is the judge's fault (ScoringError `crash`)."""
    if not isinstance(step, dict) or not isinstance(records := step.get("records"), list):
        raise _malformed("a step without records")
    for record in records:
        _record(report.verdicts, record)
    if type(calls := step.get("calls")) is int:
        report.calls = calls
    if step.get("more") is True:
        return _MORE
    need = step.get("need")
    if need is not None:
        if not (isinstance(need, list) and len(need) == 3 and need[0] in allowed
                and isinstance(need[1], list) and isinstance(need[2], dict)):  # fmt: skip
            raise _malformed(f"a call of something other than the program's {sorted(allowed)}")
        return str(need[0]), need[1], need[2]
    done = step.get("done")
    if not isinstance(done, dict):
        raise _malformed("a step that neither calls the program nor ends")
    report.completed = done.get("completed") is True
    verdicts = report.verdicts
    if report.completed:
        if single:
            verdicts[0].runs, verdicts[0].called = 1, int(report.calls > 0)
    else:
        report.stopped_by = str(done.get("stopped_by") or "check stopped")[:400]
        _fail_single(report, single)
    return None


def _record(verdicts: list[TestVerdict], record: Any) -> None:
    if not (isinstance(record, list) and len(record) == 4 and type(record[0]) is int
            and 0 <= record[0] < len(verdicts) and all(type(r) is bool for r in record[1:3])):  # fmt: skip
        raise _malformed("a test record that is not [test, ok, called, detail]")
    v = verdicts[record[0]]
    v.runs += 1
    v.called += int(record[2])
    if not record[1]:
        v.failures += 1
        if not v.detail:
            v.detail = str(record[3])[:300]


def _fail_single(report: CheckReport, single: bool) -> None:
    """Tests without asserts are one test: `check` completing. Stopped, it failed."""
    if single:
        verdict = report.verdicts[0]
        verdict.runs, verdict.failures, verdict.detail = 1, 1, report.stopped_by


def _malformed(what: str) -> ScoringError:
    return ScoringError("crash", f"the tests' sandbox sent {what}")

