"""Runner overhead: `rewardlab score` versus a plain Python loop calling the same function.

Both read the same 100,000-row JSONL file, score every row with exact match and write one JSONL
output row per input row. The plain loop is what a user would write without rewardlab:

    for line in file: row = json.loads(line); score = exact(row); out.write(json.dumps(...))

calling the same normalise-and-compare function that `text.exact` uses. rewardlab does more
per row (a Sample with a content hash, typed results, per-component columns, info, stamps,
a per-sample timeout), so the ratios below are the whole cost of that, measured in one run.

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

from rewardlab.runner import ScoreFileOptions, default_workers, score_file
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
        loop = min(plain_loop(src, Path(tmp) / "loop.jsonl") for _ in range(2))
        cores = default_workers()
        runs = {w: min(rewardlab_run(src, Path(tmp) / f"rl{w}.jsonl", w) for _ in range(2)) for w in sorted({1, cores})}
        inproc = rewardlab_run(src, Path(tmp) / "rl0.jsonl", 0)
    print(f"{args.rows:,} rows, exact match, {cores} cores")
    print(f"{'runner':<28}{'seconds':>9}{'rows/s':>11}{'throughput vs loop':>20}")
    print(f"{'plain Python loop':<28}{loop:>9.2f}{args.rows / loop:>11,.0f}{1.0:>20.2f}")
    print(f"{'rewardlab, in-process':<28}{inproc:>9.2f}{args.rows / inproc:>11,.0f}{loop / inproc:>20.2f}")
    for w, t in runs.items():
        print(f"{f'rewardlab score, {w} worker(s)':<28}{t:>9.2f}{args.rows / t:>11,.0f}{loop / t:>20.2f}")


if __name__ == "__main__":
    main()
