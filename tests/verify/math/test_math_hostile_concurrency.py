"""Bounded time on hostile input, from any thread or process; workers restart after a kill."""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from rewardlab.verify.math import CheckOptions, Outcome, SympyPool, check
from rewardlab.verify.math.screen import screen


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("9^9^9^9", "power tower"),
        ("2^{3^{10}}", "power tower"),  # 2^59049: the exponent is estimated, not computed
        ("9**9**9", "power tower"),  # Python's spelling
        ("x^{2^{100}}", "power tower"),
        ("10^{1000000}", "exponent"),
        ("2004!", "factorial"),
        ("(10!)!", "nested factorial"),
        ("(" * 10_000 + "1" + ")" * 10_000, "nested"),
        ("1" * 5000, "digits"),
        ("x+" * 600_000 + "1", "characters"),
    ],
)
def test_screen_refuses(answer: str, why: str) -> None:
    problem = screen(answer, max_chars=100_000)
    assert problem is not None and why in problem


@pytest.mark.parametrize(
    "answer",
    ["2^{10}", "(n+1)!", "5!", "\\frac{1}{2^{99}}", "x^2+2x+1", "3^{2^{2}}", "e^{-x^2/2}", "\\sum_{k=1}^{10^{9}} k", "2^{3^{4}}"],
)
def test_screen_lets_ordinary_answers_through(answer: str) -> None:
    assert screen(answer) is None


@pytest.mark.parametrize(
    "hostile",
    ["9^9^9^9", "2004!", "(" * 10_000 + "1" + ")" * 10_000, "1" * 1_000_000, "\\frac{" * 5000 + "1"],
)
def test_hostile_candidate_returns_fast_and_undecided_or_wrong(hostile: str, pool: SympyPool) -> None:
    started = time.perf_counter()
    verdict = check("5", hostile, CheckOptions(timeout=2.0), pool=pool)
    assert time.perf_counter() - started < 3.0
    assert verdict.outcome in (Outcome.UNDECIDED, Outcome.NOT_EQUIVALENT)
    if verdict.outcome is Outcome.UNDECIDED:
        assert verdict.error_kind in ("unsupported", "timeout")


def test_hostile_reference_is_undecided_not_wrong(pool: SympyPool) -> None:
    verdict = check("9^9^9^9", "5", pool=pool)
    assert verdict.outcome is Outcome.UNDECIDED and verdict.error_kind == "unsupported"
    assert "power tower" in verdict.reason


@pytest.mark.slow
def test_timeout_kills_the_worker_and_a_new_one_answers() -> None:
    # Each factor passes the screen (exponent 9999), but evaluating the sine of their product
    # to 30 digits makes sympy work on a 400,000-digit argument for a long time.
    pool = SympyPool(max_workers=1)
    try:
        pool.warm_up()
        hard = "\\sin(" + "*".join(["10^{9999}"] * 40) + ")"
        started = time.perf_counter()
        verdict = check("\\frac{1}{3}", hard, CheckOptions(timeout=1.0), pool=pool)
        elapsed = time.perf_counter() - started
        assert verdict.outcome is Outcome.UNDECIDED and verdict.error_kind == "timeout", verdict.reason
        assert elapsed < 3.0
        assert pool.restarts == 1
        again = check("\\sqrt{8}", "2\\sqrt{2}", CheckOptions(timeout=60), pool=pool)
        assert again.equivalent
    finally:
        pool.close()


@pytest.mark.slow
def test_timeouts_are_not_cached() -> None:
    from rewardlab.verify.math.equivalence import _VERDICTS

    hard = "\\sin(" + "*".join(["10^{9999}"] * 40) + ")"
    opts = CheckOptions(timeout=0.5)
    verdict = check("\\frac{1}{4}", hard, opts)  # default pool, cached path
    assert verdict.error_kind == "timeout"
    assert _VERDICTS.get(("\\frac{1}{4}", hard, opts)) is None  # a transient timeout is retried next time
    check("\\frac{1}{4}", "0.25", opts)
    assert _VERDICTS.get(("\\frac{1}{4}", "0.25", opts)) is not None


def test_from_many_threads(pool: SympyPool) -> None:
    cases = [("\\sqrt{8}", "2\\sqrt{2}", True), ("x^2-1", "(x-1)(x+1)", True), ("\\sqrt{2}", "\\sqrt{3}", False)] * 6
    with ThreadPoolExecutor(max_workers=6) as ex:
        verdicts = list(ex.map(lambda c: check(c[0], c[1], CheckOptions(timeout=60), pool=pool), cases))
    assert [v.equivalent for v in verdicts] == [c[2] for c in cases]
    assert all(v.method == "sympy" for v in verdicts)


def test_default_pool_from_a_non_main_thread() -> None:
    # Math-Verify's signal.alarm raises here; our verdict must be computed, not refused.
    out: list[bool] = []
    t = threading.Thread(target=lambda: out.append(check("\\frac{\\sqrt3}{3}", "\\frac{1}{\\sqrt{3}}", timeout=60).equivalent))
    t.start()
    t.join(120)
    assert out == [True]


def _in_child(queue: mp.Queue) -> None:  # type: ignore[type-arg]
    queue.put(check("x^2+2x+1", "(x+1)^2", timeout=60).equivalent)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_from_child_processes(method: str) -> None:
    check("\\sqrt{2}", "\\sqrt{2}+0", timeout=60)  # parent owns a worker before forking
    ctx = mp.get_context(method)
    queue = ctx.Queue()
    proc = ctx.Process(target=_in_child, args=(queue,), daemon=True)  # daemonic, like pool workers
    proc.start()
    assert queue.get(timeout=120) is True
    proc.join(30)
    assert proc.exitcode == 0


@pytest.mark.slow
def test_inside_the_runner_worker_pool() -> None:
    from rewardlab.core import Sample, Status
    from rewardlab.runner import WorkerPool
    from rewardlab.verify.math import MathAnswer

    samples = [
        Sample(response="\\boxed{2\\sqrt{2}}", reference="\\sqrt{8}"),
        Sample(response="\\boxed{(x+1)^2}", reference="x^2+2x+1"),
        Sample(response="\\boxed{3}", reference="4"),
        Sample(response="\\boxed{9^9^9^9}", reference="4"),
    ] * 3
    with WorkerPool(MathAnswer(timeout=30), workers=2, timeout=60) as runner:
        results = runner.map(samples)
    assert [r.score for r in results] == [1.0, 1.0, 0.0, None] * 3
    assert [r.status for r in results][3] is Status.ERROR


def test_worker_that_cannot_start_is_a_crash_verdict_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDLAB_MATH_WORKER_MEM_MB", "1")  # too little to import sympy
    pool = SympyPool(max_workers=1)
    verdict = check("\\sqrt{8}", "2\\sqrt{2}", pool=pool)
    assert verdict.outcome is Outcome.UNDECIDED and verdict.error_kind == "crash"
    assert "did not start" in verdict.reason and "Error" in verdict.reason  # the worker's stderr tail
    pool.close()


def _wait_for_ready_worker(pool: SympyPool) -> None:
    deadline = time.monotonic() + 120  # a worker start on a loaded machine can take many seconds
    while not pool.has_ready_worker():
        assert time.monotonic() < deadline, "no worker became ready"
        time.sleep(0.05)


@pytest.mark.slow
def test_the_call_after_a_kill_finds_a_spare_worker() -> None:
    pool = SympyPool(max_workers=2)
    try:
        pool.warm_up()
        hard = "\\sin(" + "*".join(["10^{9999}"] * 40) + ")"
        verdict = check("\\frac{1}{3}", hard, CheckOptions(timeout=4.0), pool=pool)
        assert verdict.error_kind == "timeout", verdict.reason
        # The spare was launched while the call ran (past SLOW_CALL), not after the kill.
        assert pool.restarts == 1 and pool.launched == 2
        _wait_for_ready_worker(pool)
        assert check("\\sqrt{8}", "2\\sqrt{2}", pool=pool).equivalent
        assert pool.launched == 2  # served by the spare: nothing was restarted for it
    finally:
        pool.close()


@pytest.mark.slow
def test_a_killed_worker_is_replaced_at_once() -> None:
    pool = SympyPool(max_workers=1)  # no room for a spare: the replacement starts at the kill
    try:
        pool.warm_up()
        hard = "\\sin(" + "*".join(["10^{9999}"] * 40) + ")"
        assert check("\\frac{1}{3}", hard, CheckOptions(timeout=1.5), pool=pool).error_kind == "timeout"
        assert pool.launched == 2 and len(pool._starting) == 1
        assert check("\\sqrt{8}", "2\\sqrt{2}", CheckOptions(timeout=120), pool=pool).equivalent
        assert pool.launched == 2
    finally:
        pool.close()


@pytest.mark.slow
def test_one_deadline_for_all_entries_of_a_structure() -> None:
    pool = SympyPool(max_workers=1)
    try:
        pool.warm_up()
        hard = "\\sin(" + "*".join(["10^{9999}"] * 40) + ")"
        started = time.perf_counter()
        verdict = check(f"({hard}, {hard}, {hard})", "(1, 2, 3)", CheckOptions(timeout=1.0), pool=pool)
        assert time.perf_counter() - started < 3.0  # not 3 x 1 s
        assert verdict.outcome is Outcome.UNDECIDED and verdict.error_kind == "timeout"
    finally:
        pool.close()
