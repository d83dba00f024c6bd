"""`rewardlab score` with `model.hf` against the library's batched call, on the same 1,000 pairs.

Both sides run as a user runs them, as fresh processes (interpreter start-up, imports and model
load included), interleaved round by round so machine load hits both alike:

* CLI: `rewardlab score spec.toml pairs.jsonl -o out.jsonl` (its defaults);
* library: `HFReward(model=...).score_batch(samples)` in `python -c`, the samples read from the
  same file.

The model is a config-built Qwen2 reward model (4 layers, 128 wide; random weights: only the cost
matters, and the two sides' scores must agree).

    python bench/bench_hf_rm_cli.py [--n 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rewardlab.models.hf_tiny import WORDS, save_tiny

LIBRARY = """
import json, sys
from rewardlab.core import Sample
from rewardlab.models.hf_reward import HFReward
rows = [json.loads(line) for line in open(sys.argv[2])]
samples = [Sample(prompt=r["prompt"], response=r["response"]) for r in rows]
scores = [r.score for r in HFReward(model=sys.argv[1]).score_batch(samples)]
json.dump(scores, open(sys.argv[3], "w"))
"""


def write_pairs(path: Path, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w") as out:
        for _ in range(n):
            prompt = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 40)))
            response = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 120)))
            out.write(json.dumps({"prompt": prompt, "response": response}) + "\n")


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True, timeout=1800)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rewardlab-bench-"))
    model = save_tiny(work / "rm", "qwen2", layers=4, hidden=128)
    data = work / "pairs.jsonl"
    write_pairs(data, args.n)
    (work / "rm.toml").write_text(f'[reward]\nname = "rm"\n[[reward.components]]\nname = "rm"\nuse = "model.hf"\n'
                                  f'params = {{ model = "{model}" }}\n')
    cli = [str(Path(sys.executable).parent / "rewardlab"), "score", "rm.toml", str(data), "-o", "out.jsonl", "--no-progress"]
    lib = [sys.executable, "-c", LIBRARY, str(model), str(data), "lib.json"]
    cli_s, lib_s = [], []
    for r in range(args.rounds):
        cli_s.append(timed(cli, work))
        lib_s.append(timed(lib, work))
        print(f"round {r + 1}: CLI {cli_s[-1]:.2f} s, library {lib_s[-1]:.2f} s, ratio {cli_s[-1] / lib_s[-1]:.2f}x", flush=True)
    cli_scores = [json.loads(line)["reward"] for line in (work / "out.jsonl").read_text().splitlines()]
    lib_scores = json.loads((work / "lib.json").read_text())
    worst = max(abs(a - b) for a, b in zip(cli_scores, lib_scores, strict=True))
    print(f"\n{args.n} pairs, {args.rounds} rounds: CLI median {statistics.median(cli_s):.2f} s, "
          f"library median {statistics.median(lib_s):.2f} s")
    print(f"CLI / library: {statistics.median(cli_s) / statistics.median(lib_s):.2f}x (goal <= 1.2x); "
          f"largest score difference {worst:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
