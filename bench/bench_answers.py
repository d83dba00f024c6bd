"""`answer_classes` on answer strings: rewardlab vs a per-problem loop, and optionally vs the
same function at an earlier git revision (an A/B of a change, in the same process).

Workloads of 1M answers, as Python lists of str (as read from a candidate file):

* `bench_select`: `bench_select.py`'s kind of answers, 100,000 problems x 10, two spellings of 5
  answers (9 distinct strings); `bench_select + vote` times the whole path of `bench_select.py`'s
  string rows on them, `majority_vote(answer_classes(...)).credit(correct)`, against its plain
  vote loop (`bench_select.plain_vote`);
* `own answers`: every problem has its own 5 answers (500,000 distinct strings);
* `ragged, None`: 1 to 19 candidates a problem (mean 10), one answer in ten missing;
* `wide rows`: 5,000 problems x 200 candidates (past the column scan's 126).

The peer is the loop a careful user writes: per problem, a dict from answer to its first-seen
id (`seen.setdefault(a, len(seen))`), padded with -1 — the same ids, checked before any time is
reported; for `normalized` it calls `normalize_text` per candidate as such a loop does.
`--baseline REV` loads `src/rewardlab/select/answers.py` as it was at git revision REV and times it
too. Times are CPU time (`time.process_time`), the best of at least `--repeats` calls and 0.5 s of
calls; the sides alternate for `--rounds` rounds and each keeps its best. Run:

    cd bench && PYTHONPATH=$PWD/../src ../.venv/bin/python bench_answers.py --baseline 85911d4
"""

from __future__ import annotations

import argparse
import subprocess
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from bench_select import plain_vote, timed

from rewardlab.select import answer_classes, majority_vote
from rewardlab.verify.text import normalize_text

ROOT = Path(__file__).resolve().parents[1]


def loop_classes(answers: list[list[Any]], normalize: bool) -> list[list[int]]:
    width = max(map(len, answers), default=0)
    out = []
    for row in answers:
        seen: dict[str, int] = {}
        ids = [-1 if a is None else seen.setdefault(normalize_text(a) if normalize else a, len(seen)) for a in row]
        out.append(ids + [-1] * (width - len(ids)))
    return out


def baseline_module(revision: str) -> types.ModuleType:
    """`rewardlab.select.answers` as it was at `revision`, run from its source."""
    path = "src/rewardlab/select/answers.py"
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{revision}:{path}"], capture_output=True, text=True, check=True).stdout
    module = types.ModuleType(f"answers_at_{revision}")
    exec(compile(source, f"{revision}:{path}", "exec"), module.__dict__)
    return module


def workloads(rng: np.random.Generator) -> dict[str, list[list[Any]]]:
    shape = (100_000, 10)
    spellings = np.array([["42", "\\frac{1}{2}", "x + 1", "Paris", "-3"], [" 42", "\\frac{1}{2} ", "X + 1", "paris", "-3"]])
    picks = rng.integers(0, 5, size=shape)
    texts = spellings[rng.integers(0, 2, size=shape), picks].tolist()
    own = [[f"{p}:{k}" for k in row] for p, row in enumerate(rng.integers(0, 5, size=shape).tolist())]
    ragged: list[list[Any]] = [[None if rng.random() < 0.1 else texts[p][k % 10] for k in range(n)] for p, n in enumerate(rng.integers(1, 20, size=shape[0]))]
    wide = spellings[rng.integers(0, 2, size=(5_000, 200)), rng.integers(0, 5, size=(5_000, 200))].tolist()
    return {"bench_select": texts, "own answers": own, "ragged, None": ragged, "wide rows": wide}


def sides_of(answers: list[list[Any]], equivalence: str, old: types.ModuleType | None) -> dict[str, Callable[[], object]]:
    sides: dict[str, Callable[[], object]] = {
        "new": lambda: answer_classes(answers, equivalence=equivalence),
        "loop": lambda: loop_classes(answers, equivalence == "normalized"),
    }
    if old is not None:
        sides["old"] = lambda: old.answer_classes(answers, equivalence=equivalence)
    return sides


def vote_sides_of(answers: list[list[Any]], equivalence: str, old: types.ModuleType | None) -> dict[str, Callable[[], object]]:
    correct = (np.asarray(answers) == answers[0][0]).astype(np.float64)  # any label works: both sides credit it
    labels = correct.astype(int).tolist()
    sides: dict[str, Callable[[], object]] = {
        "new": lambda: majority_vote(answer_classes(answers, equivalence=equivalence)).credit(correct),
        "loop": lambda: plain_vote([[normalize_text(a) for a in row] for row in answers] if equivalence == "normalized" else answers, labels, None),
    }
    if old is not None:
        sides["old"] = lambda: majority_vote(old.answer_classes(answers, equivalence=equivalence)).credit(correct)
    return sides


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", help="also time answers.py at this git revision")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    old = baseline_module(args.baseline) if args.baseline else None
    data = workloads(np.random.default_rng(0))
    cases = [("bench_select + vote", data["bench_select"], "exact", vote_sides_of), ("bench_select + vote", data["bench_select"], "normalized", vote_sides_of)]
    cases += [(name, answers, "exact", sides_of) for name, answers in data.items()]
    cases.insert(3, ("bench_select", data["bench_select"], "normalized", sides_of))
    head = f"{'workload':19s} {'equivalence':11s} {'rewardlab':>10s} {'per-problem loop':>17s} {'x loop':>7s}"
    print(head + (f" {args.baseline + ' (before)':>18s} {'x before':>9s}" if old else ""))
    for name, answers, equivalence, make_sides in cases:
        sides = make_sides(answers, equivalence, old)
        best = dict.fromkeys(sides, float("inf"))
        for _ in range(args.rounds):  # alternating, so a slow spell of the machine hits every side
            results = {}
            for side, fn in sides.items():
                cpu, _, results[side] = timed(fn, args.repeats if side != "loop" else min(args.repeats, 3))
                best[side] = min(best[side], cpu)
            for got in results.values():
                np.testing.assert_allclose(np.asarray(got), np.asarray(results["loop"]), atol=1e-12)
        line = f"{name:19s} {equivalence:11s} {best['new'] * 1e3:8.1f}ms {best['loop'] * 1e3:15.1f}ms {best['loop'] / best['new']:6.1f}x"
        print(line + (f" {best['old'] * 1e3:16.1f}ms {best['old'] / best['new']:8.1f}x" if old else ""))
    print("all sides agree")


if __name__ == "__main__":
    main()
