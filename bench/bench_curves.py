"""Accuracy-vs-samples curves with intervals: `selection_curves` vs the script a user writes.

The peer is the notebook recipe: for every problem, every budget n and every n-subset of its
candidates (`itertools.combinations`), run best-of-n, a majority vote and a weighted vote by
hand (ties credited by their mean, as `bench_select.py`'s loops) and the oracle, average over
the subsets, then one `scipy.stats.bootstrap` percentile interval per method and budget.
rewardlab's side is `selection_curves` on the same candidates (oracle and best-of-n from their
closed forms, votes over the listed subsets a chunk at a time, one shared bootstrap). Point
estimates are checked to agree to 1e-9 before times are printed. Both sides start from arrays
in memory (candidates loaded before the clock starts); times are CPU seconds of this process,
one call each (the peer takes tens of seconds). Run:

    .venv/bin/python bench/bench_curves.py                     # 1,000 problems x 10
    .venv/bin/python bench/bench_curves.py --problems 200      # smoke run
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_select import plain_vote
from bench_select_file import write_file
from scipy import stats

from rewardlab.select import load_candidates
from rewardlab.select.curves import selection_curves

METHODS = ["oracle", "best_of_n", "majority", "weighted"]


def by_hand(answers: list[list[str]], scores: list[list[float]], correct: list[list[int]], ns: list[int]) -> dict[tuple[str, int], np.ndarray]:
    out: dict[tuple[str, int], np.ndarray] = {}
    for n in ns:
        per = {m: [] for m in METHODS}
        for a, s, y in zip(answers, scores, correct, strict=True):
            subsets = list(itertools.combinations(range(len(a)), n))
            sub_a = [[a[i] for i in sub] for sub in subsets]
            sub_s = [[s[i] for i in sub] for sub in subsets]
            sub_y = [[y[i] for i in sub] for sub in subsets]
            sub_w = [[1 / (1 + np.exp(-v)) for v in row] for row in sub_s]
            bon = []
            for sv, yv in zip(sub_s, sub_y, strict=True):
                top = max(sv)
                tied = [yy for v, yy in zip(sv, yv, strict=True) if v == top]
                bon.append(sum(tied) / len(tied))
            per["oracle"].append(np.mean([max(yv) for yv in sub_y]))
            per["best_of_n"].append(np.mean(bon))
            per["majority"].append(np.mean(plain_vote(sub_a, sub_y, None)))
            per["weighted"].append(np.mean(plain_vote(sub_a, sub_y, sub_w)))
        for m in METHODS:
            values = np.array(per[m])
            if np.ptp(values) > 0:
                stats.bootstrap((values,), np.mean, method="percentile", n_resamples=2000, random_state=0)
            out[m, n] = values
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=1000)
    parser.add_argument("--n", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cands.jsonl"
        write_file(path, args.problems, args.n)
        cands = load_candidates(path)
    assert cands.answers is not None and cands.scores is not None and cands.correct is not None
    answers, scores, correct = cands.answers.tolist(), cands.scores.tolist(), cands.correct.astype(int).tolist()
    ns = list(range(1, args.n + 1))
    print(f"{args.problems:,} problems x {args.n} candidates, budgets 1..{args.n}, methods {', '.join(METHODS)}")
    c0 = time.process_time()
    curves = selection_curves(cands, methods=METHODS, equivalence="exact")
    ours = time.process_time() - c0
    c0 = time.process_time()
    want = by_hand(answers, scores, correct, ns)
    peer = time.process_time() - c0
    for (m, n), values in want.items():
        assert abs(curves.accuracy(m, n) - values.mean()) < 1e-9, (m, n, curves.accuracy(m, n), values.mean())
    print(f"selection_curves {ours:8.2f} s   by-hand loop + scipy bootstrap {peer:8.2f} s   {peer / ours:6.1f}x")
    print("every point estimate agrees (<= 1e-9)")


if __name__ == "__main__":
    main()
