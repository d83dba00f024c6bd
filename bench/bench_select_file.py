"""Selection from a candidate file, end to end: rewardlab's reader + selector vs a plain script.

`bench_select.py` times the selectors on arrays already in memory. A user of `rewardlab select`
starts from a file, so this times what they wait for: reading a JSONL candidate file in the
Qwen2.5-Math format (`pred`, `pred_score` as one-element lists, `score` labels, `code`
responses; 100,000 problems x 10 candidates by default, written to a temporary directory) and
crediting best-of-n and a majority vote over the exact answer strings.

- rewardlab: `load_candidates(path)` (every row checked, arrays padded; bad rows would be
  reported, not fatal), then `best_of_n(...).credit(...)` and
  `majority_vote(answer_classes(..., equivalence="exact")).credit(...)`.
- peer: the script a user writes: `json.loads` per line (and, as a second peer, `orjson.loads`),
  then a per-problem loop as in `bench_select.py` (ties credited by their mean). It checks
  nothing: a bad row would stop it.

Both sides' results are checked for agreement before times are printed. Times are CPU seconds
of this process (`time.process_time`), the best of `--rounds` alternating rounds. Run:

    .venv/bin/python bench/bench_select_file.py                   # 1M candidates
    .venv/bin/python bench/bench_select_file.py --problems 5000   # smoke run
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from rewardlab.select import answer_classes, best_of_n, load_candidates, majority_vote


def write_file(path: Path, problems: int, n: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    answers = rng.integers(0, 5, size=(problems, n))
    correct = answers == 0
    scores = np.round(correct * 0.5 + rng.random((problems, n)), 3)
    spellings = np.array(["42", "\\frac{1}{2}", "x + 1", "Paris", "-3"])
    words = rng.integers(10, 40, size=(problems, n))  # short responses keep 1M candidates near 200 MB
    with path.open("wb") as f:
        for p in range(problems):
            row = {"idx": p, "question": f"problem {p}", "gt": "42", "pred": spellings[answers[p]].tolist(),
                   "pred_score": [[s] for s in scores[p].tolist()], "score": correct[p].tolist(),
                   "code": ["step " * int(k) for k in words[p]]}  # fmt: skip
            f.write(orjson.dumps(row) + b"\n")


def rewardlab_side(path: Path) -> tuple[np.ndarray, np.ndarray]:
    c = load_candidates(path)
    bon = best_of_n(c.scores, c.mask).credit(c.correct)
    assert c.answers is not None
    vote = majority_vote(answer_classes(c.answers, equivalence="exact")).credit(c.correct)
    return bon, vote


def plain_side(path: Path, loads: Callable[[Any], Any]) -> tuple[list[float], list[float]]:
    bon, vote = [], []
    with path.open("rb") as f:
        for line in f:
            row = loads(line)
            s, y, a = [v[0] for v in row["pred_score"]], [int(v) for v in row["score"]], row["pred"]
            top = max(s)
            if s.count(top) == 1:
                bon.append(y[s.index(top)])
            else:
                tied = [y[i] for i, v in enumerate(s) if v == top]
                bon.append(sum(tied) / len(tied))
            members: dict[str, list[int]] = {}
            for answer, label in zip(a, y, strict=True):
                members.setdefault(answer, []).append(label)
            most = max(map(len, members.values()))
            winners = [m for m in members.values() if len(m) == most]
            vote.append(sum(sum(m) / len(m) for m in winners) / len(winners))
    return bon, vote


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=100_000)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "candidates.jsonl"
        write_file(path, args.problems, args.n)
        size = path.stat().st_size / 1e6
        print(f"{args.problems:,} problems x {args.n} candidates, {size:.0f} MB of JSONL")
        sides: dict[str, Callable[[], Any]] = {
            "rewardlab (load_candidates + select)": lambda: rewardlab_side(path),
            "plain script, json.loads": lambda: plain_side(path, json.loads),
            "plain script, orjson.loads": lambda: plain_side(path, orjson.loads),
        }
        best = dict.fromkeys(sides, float("inf"))
        results: dict[str, Any] = {}
        for _ in range(args.rounds):
            for name, fn in sides.items():
                took, results[name] = cpu(fn)
                best[name] = min(best[name], took)
        ours = results["rewardlab (load_candidates + select)"]
        for name in sides:
            for got, want in zip(ours, results[name], strict=True):
                np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-12)
        mine = best["rewardlab (load_candidates + select)"]
        print(f"{'side':38s} {'cpu s':>7s} {'x rewardlab':>12s}")
        for name, took in best.items():
            print(f"{name:38s} {took:7.2f} {took / mine:11.2f}x")
        print("all results agree (max abs difference <= 1e-12)")


if __name__ == "__main__":
    main()
