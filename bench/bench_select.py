"""Selection over 1M candidates: rewardlab.select's vectorised selectors vs a per-problem loop.

Same inputs, same run. Workload (defaults): 100,000 problems × 10 candidates, a reward score
per candidate (rounded to 0.1, so ties happen), an answer per candidate (5 possible answers)
and a correctness label. Timed, each as the credit of every problem (the selection and its
expected credit under random tie-breaking, the same numbers on both sides):

* best-of-n, majority vote and reward-weighted vote on integer answer ids (already class ids in
  [0, n), as `answer_classes` returns them);
* majority vote from the answer *strings* (exact, and normalised with `verify.text.normalize_text`):
  rewardlab's time includes `answer_classes` (one dict look-up per string, per-problem ids by a
  vectorised scan, padding, normalisation once per distinct string) — the whole path from a
  candidate file's answers. `bench_answers.py` times `answer_classes` alone on more inputs.

The peer is the loop a careful user writes: plain Python over lists (`max` and a dict of totals
per problem, ties credited by their mean, as `rm_maj_eval.py` and most notebooks do but with
exact tie credit; for best-of-n, `list.count` and `list.index` settle the usual unique best in
C), with the lists made before the clock starts (as if read from JSONL) and, for
normalised strings, `normalize_text` called per candidate as such a loop does. `--passk` adds a
second, slower peer: a loop over problems calling `evaluate.passk.best_of_n` / `vote_accuracy`
(numpy per problem). Every pair is checked for agreement before its time is reported.

Times are the best of at least `--repeats` calls, and more until 0.5 s of calls (the same rule
on both sides), after a warm-up, as CPU time of this process
(`time.process_time`; the machine is shared, and CPU time is what load inflates least) and as
wall time; the ratio is taken on CPU time. Both sides are timed in `--rounds` alternating rounds;
the round with the median ratio is printed, with the range of the ratio over rounds. Run:

    .venv/bin/python bench/bench_select.py                    # full size
    .venv/bin/python bench/bench_select.py --problems 2000    # smoke run
    .venv/bin/python bench/bench_select.py --numpy            # the numpy selectors, not the C kernel
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from rewardlab.evaluate.passk import best_of_n as loop_best_of_n
from rewardlab.evaluate.passk import vote_accuracy
from rewardlab.select import _kernel, answer_classes, best_of_n, majority_vote, weighted_vote
from rewardlab.verify.text import normalize_text


def plain_best_of_n(scores: list[list[float]], correct: list[list[int]]) -> list[float]:
    out = []
    for s, y in zip(scores, correct, strict=True):
        top = max(s)
        if s.count(top) == 1:  # the usual case, in C: 1.6x faster than always listing the tied
            out.append(y[s.index(top)])
        else:
            tied = [y[i] for i, v in enumerate(s) if v == top]
            out.append(sum(tied) / len(tied))
    return out


def plain_vote(answers: list[list[Any]], correct: list[list[int]], weights: list[list[float]] | None) -> list[float]:
    out = []
    for p, (a, y) in enumerate(zip(answers, correct, strict=True)):
        totals: dict[Any, float] = {}
        members: dict[Any, list[int]] = {}
        for i, ans in enumerate(a):
            totals[ans] = totals.get(ans, 0.0) + (1.0 if weights is None else weights[p][i])
            members.setdefault(ans, []).append(y[i])
        top = max(totals.values())
        winners = [k for k, t in totals.items() if abs(t - top) <= 1e-8 + 1e-5 * abs(top)]  # np.isclose
        out.append(sum(sum(members[k]) / len(members[k]) for k in winners) / len(winners))
    return out


def timed(fn: Callable[[], object], repeats: int, min_total: float = 0.5) -> tuple[float, float, object]:
    """Best CPU time and best wall time of at least `repeats` calls after one warm-up call (more,
    until `min_total` seconds of calls, as `timeit.autorange` does: a best of five 10 ms calls on a
    shared machine still holds scheduler noise), and a result."""
    out = fn()
    cpu = wall = float("inf")
    calls, spent = 0, 0.0
    while calls < repeats or spent < min_total:
        c0, w0 = time.process_time(), time.perf_counter()
        out = fn()
        took = time.perf_counter() - w0
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, took)
        calls, spent = calls + 1, spent + took
    return cpu, wall, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=100_000)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds of both sides; the median round is printed")
    parser.add_argument("--passk", action="store_true", help="also time the loop over evaluate.passk (slow: minutes)")
    parser.add_argument("--numpy", action="store_true", help="time the numpy selectors (what runs without the C kernel)")
    args = parser.parse_args()
    if args.numpy:
        _kernel.LIBRARY = None
    print(f"selectors: {'numpy' if _kernel.LIBRARY is None else 'C kernel'}")
    rng = np.random.default_rng(0)
    shape = (args.problems, args.n)
    answers = rng.integers(0, 5, size=shape)
    correct = (answers == 0).astype(np.float64)
    scores = np.round(correct * 0.5 + rng.random(shape), 1)
    weights = 1 / (1 + np.exp(-scores))
    spellings = np.array([["42", "\\frac{1}{2}", "x + 1", "Paris", "-3"], [" 42", "\\frac{1}{2} ", "X + 1", "paris", "-3"]])
    texts = spellings[rng.integers(0, 2, size=shape), answers].tolist()  # two spellings of each answer
    print(f"{args.problems:,} problems x {args.n} candidates = {answers.size:,} candidates")

    s_l, y_l, a_l, w_l = scores.tolist(), correct.astype(int).tolist(), answers.tolist(), weights.tolist()
    rows: list[tuple[str, Callable[[], object], Callable[[], object], Callable[[], object] | None]] = [
        ("best-of-n",
         lambda: best_of_n(scores).credit(correct),
         lambda: plain_best_of_n(s_l, y_l),
         lambda: [loop_best_of_n(scores[p], correct[p]) for p in range(args.problems)]),
        ("majority vote",
         lambda: majority_vote(answers).credit(correct),
         lambda: plain_vote(a_l, y_l, None),
         lambda: [vote_accuracy(list(answers[p]), correct[p]) for p in range(args.problems)]),
        ("weighted vote",
         lambda: weighted_vote(answers, weights).credit(correct),
         lambda: plain_vote(a_l, y_l, w_l),
         lambda: [vote_accuracy(list(answers[p]), correct[p], list(weights[p])) for p in range(args.problems)]),
        ("majority, strings exact",
         lambda: majority_vote(answer_classes(texts, equivalence="exact")).credit(correct),
         lambda: plain_vote(texts, y_l, None),
         None),
        ("majority, strings normalised",
         lambda: majority_vote(answer_classes(texts, equivalence="normalized")).credit(correct),
         lambda: plain_vote([[normalize_text(a) for a in row] for row in texts], y_l, None),
         None),
    ]  # fmt: skip
    head = f"{'method':29s} {'rewardlab cpu/wall':>19s} {'plain loop cpu/wall':>20s} {'x plain (cpu)':>13s}"
    head += f" {'rounds: min-max':>16s}" if args.rounds > 1 else ""
    print(head + (f" {'passk loop cpu':>15s} {'x passk':>8s}" if args.passk else ""))
    for name, fast, plain, passk in rows:
        ratios, runs = [], []
        for _ in range(args.rounds):  # alternating, so a slow spell of the machine hits both sides
            c_fast, w_fast, got = timed(fast, args.repeats)
            c_plain, w_plain, want = timed(plain, min(args.repeats, 3))
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-12)
            ratios.append(c_plain / c_fast)
            runs.append((c_fast, w_fast, c_plain, w_plain))
        c_fast, w_fast, c_plain, w_plain = runs[int(np.argsort(ratios)[len(ratios) // 2])]  # the median round
        line = f"{name:29s} {c_fast:8.3f}s/{w_fast:8.3f}s {c_plain:9.3f}s/{w_plain:8.3f}s {c_plain / c_fast:12.1f}x"
        line += f" {min(ratios):7.1f}-{max(ratios):5.1f}x" if args.rounds > 1 else ""
        if args.passk and passk is not None:
            c_passk, _, want_passk = timed(passk, 1, min_total=0.0)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want_passk), atol=1e-12)
            line += f" {c_passk:14.3f}s {c_passk / c_fast:7.1f}x"
        print(line)
    print("all results agree (max abs difference <= 1e-12)")


if __name__ == "__main__":
    main()
