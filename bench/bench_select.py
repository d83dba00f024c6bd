"""Selection over 1M candidates: rewardlab.select's vectorised selectors vs a per-problem loop.

Same inputs, same run. Workload (defaults): 100,000 problems × 10 candidates, a reward score
per candidate (rounded to 0.1, so ties happen), an integer answer per candidate (5 possible
answers) and a correctness label. Timed, each as the credit of every problem:

* best-of-n: `select.best_of_n(...).credit(correct)` vs a loop over problems calling
  `evaluate.passk.best_of_n` (numpy per problem, the straightforward way);
* majority vote and reward-weighted vote: `majority_vote` / `weighted_vote` on the answer ids
  (already class ids in [0, n), as `answer_classes` returns them) vs a loop over problems
  calling `evaluate.passk.vote_accuracy` (a dict of totals per problem, as in Qwen2.5-Math's
  `rm_maj_eval.py` and most notebooks);
* a plain-Python loop (no numpy inside, `max` and a dict per problem) as a second, faster peer.

Every pair is checked for agreement before its time is reported. Run:

    .venv/bin/python bench/bench_select.py                    # full size
    .venv/bin/python bench/bench_select.py --problems 2000    # smoke run
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from _timing import best_of

from rewardlab.evaluate.passk import best_of_n as loop_best_of_n
from rewardlab.evaluate.passk import vote_accuracy
from rewardlab.select import best_of_n, majority_vote, weighted_vote


def plain_best_of_n(scores: list[list[float]], correct: list[list[int]]) -> list[float]:
    out = []
    for s, y in zip(scores, correct, strict=True):
        top = max(s)
        tied = [y[i] for i, v in enumerate(s) if v == top]
        out.append(sum(tied) / len(tied))
    return out


def plain_vote(answers: list[list[int]], correct: list[list[int]], weights: list[list[float]] | None) -> list[float]:
    out = []
    for p, (a, y) in enumerate(zip(answers, correct, strict=True)):
        totals: dict[int, float] = {}
        members: dict[int, list[int]] = {}
        for i, ans in enumerate(a):
            totals[ans] = totals.get(ans, 0.0) + (1.0 if weights is None else weights[p][i])
            members.setdefault(ans, []).append(y[i])
        top = max(totals.values())
        winners = [k for k, t in totals.items() if abs(t - top) <= 1e-8 + 1e-5 * abs(top)]  # np.isclose
        out.append(sum(sum(members[k]) / len(members[k]) for k in winners) / len(winners))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=100_000)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    shape = (args.problems, args.n)
    answers = rng.integers(0, 5, size=shape)
    correct = (answers == 0).astype(np.float64)
    scores = np.round(correct * 0.5 + rng.random(shape), 1)
    weights = 1 / (1 + np.exp(-scores))
    print(f"{args.problems:,} problems x {args.n} candidates = {answers.size:,} candidates")

    lists = (scores.tolist(), correct.astype(int).tolist(), answers.tolist(), weights.tolist())
    rows: list[tuple[str, Callable[[], object], Callable[[], object], Callable[[], object]]] = [
        ("best-of-n",
         lambda: best_of_n(scores).credit(correct),
         lambda: [loop_best_of_n(scores[p], correct[p]) for p in range(args.problems)],
         lambda: plain_best_of_n(lists[0], lists[1])),
        ("majority vote",
         lambda: majority_vote(answers).credit(correct),
         lambda: [vote_accuracy(list(answers[p]), correct[p]) for p in range(args.problems)],
         lambda: plain_vote(lists[2], lists[1], None)),
        ("weighted vote",
         lambda: weighted_vote(answers, weights).credit(correct),
         lambda: [vote_accuracy(list(answers[p]), correct[p], list(weights[p])) for p in range(args.problems)],
         lambda: plain_vote(lists[2], lists[1], lists[3])),
    ]  # fmt: skip
    print(f"{'method':15s} {'rewardlab':>10s} {'passk loop':>11s} {'plain loop':>11s} {'x passk':>8s} {'x plain':>8s}")
    for name, fast, loop, plain in rows:
        t_fast, got = best_of(fast, args.repeats)
        t_loop, want = best_of(loop, 1)
        t_plain, want_plain = best_of(plain, 1)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-12)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want_plain), atol=1e-12)
        print(f"{name:15s} {t_fast:9.3f}s {t_loop:10.3f}s {t_plain:10.3f}s {t_loop / t_fast:7.1f}x {t_plain / t_fast:7.1f}x")
    print("all results agree (max abs difference <= 1e-12)")


if __name__ == "__main__":
    main()
