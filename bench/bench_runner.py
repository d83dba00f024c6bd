"""Runner overhead: `rewardlab score` versus a plain Python loop calling the same function.

All read the same 100,000-row JSONL file, score every row with exact match and write one JSONL
output row per input row, in one run:

- loop, same reward: `for line in file: r = reward.score(Sample.from_dict(json.loads(line)));
  out.write(json.dumps({**row, "reward": r.score}))` — the same `text.exact` reward the spec
  uses, called in a plain loop. The ratio to this is the runner's overhead (the issue's goal).
- loop, bare function: the same normalise-and-compare function without rewardlab's types: the
  floor, showing what the contract itself (Sample, typed results, components, stamps) costs.
- rewardlab in-process (`--workers 0`), and `rewardlab score` with 1 worker and all cores:
  per-sample timeouts, component columns, info, stamps and the summary included.

Run: .venv/bin/python bench/bench_runner.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import json
import random
import string
import tempfile
import time
from pathlib import Path

from rewardlab.runner import ScoreFileOptions, score_file
from rewardlab.runner.pool import default_workers
from rewardlab.verify.text import normalize_text

SPEC = """
[reward]
name = "exact"
[[reward.components]]
name = "exact"
use = "text.exact"
"""


def make_data(path: Path, rows: int) -> None:
    rng = random.Random(0)
    with path.open("w") as f:
        for i in range(rows):
            answer = "".join(rng.choices(string.ascii_lowercase, k=6))
            response = answer.upper() if rng.random() < 0.5 else answer[::-1]
            f.write(json.dumps({"id": i, "prompt": f"Spell word {i}", "response": response, "reference": answer}) + "\n")


def loop_same_reward(src: Path, dst: Path) -> float:
    from rewardlab.core import Sample, registry

    reward = registry.create("text.exact")
    started = time.perf_counter()
    with src.open() as f, dst.open("w") as out:
        for line in f:
            row = json.loads(line)
            result = reward.score(Sample.from_dict(row))
            out.write(json.dumps({**row, "reward": result.score}) + "\n")
    return time.perf_counter() - started


def plain_loop(src: Path, dst: Path) -> float:
    started = time.perf_counter()
    with src.open() as f, dst.open("w") as out:
        for line in f:
            row = json.loads(line)
            score = float(normalize_text(row["response"]) == normalize_text(row["reference"]))
            out.write(json.dumps({**row, "reward": score}) + "\n")
    return time.perf_counter() - started


def rewardlab_run(src: Path, dst: Path, workers: int) -> float:
    started = time.perf_counter()
    summary = score_file(SPEC, src, dst, ScoreFileOptions(workers=workers, timeout=60))
    elapsed = time.perf_counter() - started
    if summary.rows != sum(1 for _ in src.open()):
        raise SystemExit("row count mismatch")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.jsonl"
        make_data(src, args.rows)
        bare = min(plain_loop(src, Path(tmp) / "bare.jsonl") for _ in range(2))
        loop = min(loop_same_reward(src, Path(tmp) / "loop.jsonl") for _ in range(2))
        cores = default_workers()
        runs = {w: min(rewardlab_run(src, Path(tmp) / f"rl{w}.jsonl", w) for _ in range(2)) for w in sorted({1, cores})}
        inproc = rewardlab_run(src, Path(tmp) / "rl0.jsonl", 0)
    print(f"{args.rows:,} rows, exact match, {cores} cores")
    print(f"{'':<32}{'seconds':>9}{'rows/s':>11}{'vs loop (same reward)':>23}{'vs bare loop':>14}")
    table = [("loop, same reward", loop), ("loop, bare function", bare), ("rewardlab, in-process", inproc)]
    table += [(f"rewardlab score, {w} worker(s)", t) for w, t in runs.items()]
    for name, t in table:
        print(f"{name:<32}{t:>9.2f}{args.rows / t:>11,.0f}{loop / t:>23.2f}{bare / t:>14.2f}")


if __name__ == "__main__":
    main()
