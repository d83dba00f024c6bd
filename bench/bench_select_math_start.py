"""Wall time of `rewardlab select` with `--equivalence math`, two source trees A/B, interleaved.

What the user waits for includes starting the sympy worker (Python + sympy + the LaTeX parser's
warm-up, ~1.5-2 s) the first time a vote needs a symbolic check. This runs the real CLI
(`/usr/bin/time -v`, "Elapsed (wall clock) time") on the same files with `PYTHONPATH` set to each
tree in turn, alternating, and prints each side's median and best and the ratio of medians.

Files (written to a temporary directory):
- `synthetic`: `bench_select_file.write_file` (Qwen2.5-Math format; answers `42`, `\\frac{1}{2}`,
  `x + 1`, `Paris`, `-3`: nearly every problem needs a symbolic check);
- `real`: `../shared/data/qwen25-math-cot-100.jsonl` (real model answers; few pairs need sympy)
  repeated to `--real-problems` rows, when the shared data is present.

Run (base tree: `git archive <commit> src | tar -x -C /tmp/base`):

    .venv/bin/python bench/bench_select_math_start.py --base /tmp/base/src --rounds 6
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_select_file import write_file

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "data" / "qwen25-math-cot-100.jsonl"
CLI = [sys.executable, "-c", "import sys; from rewardlab.cli.main import run; sys.exit(run())"]


def wall_seconds(argv: list[str], src: str) -> float:
    """Elapsed wall time of one run, from `/usr/bin/time -v`."""
    done = subprocess.run(["/usr/bin/time", "-v", *argv], env={**os.environ, "PYTHONPATH": src},
                          capture_output=True, text=True, check=True)  # fmt: skip
    clock = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    assert clock is not None, done.stderr[-500:]
    hours, minutes, seconds = clock.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="src/ of the tree to compare against")
    parser.add_argument("--new", default=str(ROOT / "src"), help="src/ of the tree under test (default: this one)")
    parser.add_argument("--problems", type=int, default=10_000)
    parser.add_argument("--real-problems", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = {"synthetic": Path(tmp) / "synthetic.jsonl"}
        write_file(files["synthetic"], args.problems, 10)
        if REAL.exists():
            lines = REAL.read_bytes().splitlines(keepends=True)
            files["real"] = Path(tmp) / "real.jsonl"
            files["real"].write_bytes(b"".join(lines[i % len(lines)] for i in range(args.real_problems)))
        commands = {}
        for name, path in files.items():
            commands[f"pick -m majority, {name}"] = [*CLI, "select", "pick", str(path), "-m", "majority", "-o", f"{tmp}/picks.jsonl"]
            commands[f"curves, {name}"] = [*CLI, "select", "curves", str(path), "--no-progress", "-o", f"{tmp}/curves"]
        sides = {"base": args.base, "new": args.new}
        for label, argv in commands.items():
            times: dict[str, list[float]] = {side: [] for side in sides}
            for _ in range(args.rounds):
                for side, src in sides.items():
                    times[side].append(wall_seconds(argv, src))
            base, new = (statistics.median(times[s]) for s in sides)
            print(f"{label:28s} base median {base:6.2f} s (best {min(times['base']):.2f})  "
                  f"new median {new:6.2f} s (best {min(times['new']):.2f})  base/new {base / new:.2f}x  "
                  f"load1 {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
