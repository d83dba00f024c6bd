"""User-level commands timed on two source trees of rewardlab in the same run, alternating.

A refactor that keeps behaviour must not cost the user time. This script exports two git
revisions into temporary folders (`git archive`, so the working tree is untouched), and runs
the same commands on both, in fresh processes, taking turns (old, new, old, new...) so that a
change in the machine's load hits both alike. It prints the median wall time per command and
tree and the ratio new/old; a ratio above 1.10 is a regression this repository does not accept.

    .venv/bin/python bench/bench_trees.py --old 973b42b --new HEAD --rounds 5

The commands (the ones a user runs, on generated data):
- `score -w 0`: `rewardlab score` of 200,000 rows with `text.exact`, in process;
- `score -w 2`: the same file with two worker processes;
- `serve batch`: 50 requests of 200 samples each through the server app in process (FastAPI's
  TestClient: the ASGI app, the request model, scoring and the JSON reply; no socket);
- `select curves`: `rewardlab select curves` of 10,000 problems x 8 candidates with answers,
  labels and a reward model's scores (so every method runs: oracle, best-of-n, the votes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = Path("src/rewardlab/select/lib_kernel.so.1")
# Rows of the scored file: enough that the per-row work, not the start-up, is what is timed.
ROWS = 200_000

SERVE_BATCH = """
import sys, time
from fastapi.testclient import TestClient
from rewardlab.compose import build
from rewardlab.serve import create_app
from rewardlab.serve.settings import ServeSettings
reward = build({"reward": {"name": "exact", "components": [{"name": "exact", "use": "text.exact"}]}})
app = create_app({"exact": reward}, settings=ServeSettings(workers=0))
samples = [{"prompt": f"q{i}", "response": str(i % 7), "reference": str(i % 5)} for i in range(200)]
with TestClient(app) as client:
    client.post("/v1/rewards/exact:score", json={"samples": samples[:2]})
    start = time.perf_counter()
    for r in range(50):
        batch = [dict(s, prompt=f"{s['prompt']}-{r}") for s in samples]  # no cache hits
        reply = client.post("/v1/rewards/exact:score", json={"samples": batch})
        assert reply.status_code == 200, reply.text
    print(time.perf_counter() - start)
"""


def export(rev: str, into: Path) -> Path:
    """The tree of `rev` in `into` (plus the selection kernel built for the checkout, when the
    tree's kernel source is the same: the library refuses a kernel built from other source)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    with tempfile.TemporaryFile() as buffer:
        buffer.write(archive)
        buffer.seek(0)
        with tarfile.open(fileobj=buffer) as tar:
            tar.extractall(into, filter="data")
    built = ROOT / KERNEL
    if built.exists():
        (into / KERNEL).write_bytes(built.read_bytes())
    return into


def write_inputs(folder: Path) -> dict[str, Path]:
    rng = random.Random(0)
    rows = folder / "rows.jsonl"
    with rows.open("w") as out:
        for i in range(ROWS):
            out.write(json.dumps({"prompt": f"q{i}", "response": str(rng.randrange(5)), "reference": str(rng.randrange(5))}) + "\n")
    candidates = folder / "candidates.jsonl"
    with candidates.open("w") as out:
        for i in range(10_000):
            preds = [str(rng.randrange(4)) for _ in range(8)]
            scores = [[round((p == "0") * 0.5 + rng.random(), 3)] for p in preds]  # a reward model's, as it ships
            out.write(json.dumps({"question": f"p{i}", "gt": "0", "code": [f"answer {p}" for p in preds], "pred": preds,
                                  "pred_score": scores, "score": [p == "0" for p in preds]}) + "\n")
    return {"rows": rows, "candidates": candidates}


# the console script's entry point, run by the interpreter so that PYTHONPATH picks the tree
CLI = "import sys; from rewardlab.cli.main import run; sys.argv[0] = 'rewardlab'; run()"


def commands(inputs: dict[str, Path], out: Path) -> dict[str, list[str]]:
    cli = [sys.executable, "-c", CLI]
    return {
        "score -w 0": [*cli, "score", "text.exact", str(inputs["rows"]), "-o", str(out / "w0.jsonl"), "-w", "0", "--no-progress"],
        "score -w 2": [*cli, "score", "text.exact", str(inputs["rows"]), "-o", str(out / "w2.jsonl"), "-w", "2", "--no-progress"],
        "serve batch": [sys.executable, "-c", SERVE_BATCH],
        "select curves": [*cli, "select", "curves", str(inputs["candidates"]), "-o", str(out / "curves"), "--no-progress"],
    }


def run(argv: list[str], tree: Path, cwd: Path) -> float:
    """Wall seconds of one command on `tree` (what the command prints last, when it times
    itself; else the whole process)."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:6])} failed on {tree.name}:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    if argv[2] == SERVE_BATCH:  # it times its requests itself, without the start-up
        return float(done.stdout.strip().splitlines()[-1])
    return elapsed


def check_output(name: str, out: Path) -> None:
    """The command did the work: every row written (a command that did nothing is fast)."""
    written = {"score -w 0": out / "w0.jsonl", "score -w 2": out / "w2.jsonl"}.get(name)
    if written is not None:
        rows = sum(1 for _ in written.open())
        if rows != ROWS:
            sys.exit(f"{name} wrote {rows} rows, not {ROWS:,}")
        written.unlink()
    elif name == "select curves":
        report = out / "curves" / "curves.json"
        if not report.exists():
            sys.exit("select curves wrote no curves.json")
        report.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="git revision of the tree before the change")
    parser.add_argument("--new", default="HEAD", help="git revision of the tree after it")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated subset of the commands")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rewardlab-trees-") as tmp:
        temp = Path(tmp)
        trees = {"old": export(args.old, temp / "old"), "new": export(args.new, temp / "new")}
        inputs = write_inputs(temp)
        todo = commands(inputs, temp)
        if args.only:
            todo = {k: v for k, v in todo.items() if k in args.only.split(",")}
        times: dict[tuple[str, str], list[float]] = {}
        for round_ in range(args.rounds):
            for name, argv in todo.items():
                order = ("old", "new") if round_ % 2 == 0 else ("new", "old")
                for which in order:
                    times.setdefault((name, which), []).append(run(argv, trees[which], temp))
                    check_output(name, temp)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
    load = os.getloadavg()[0]
    print(f"old {args.old}, new {args.new}; {args.rounds} rounds, alternating; load average {load:.2f}")
    print(f"{'command':<16}{'old s':>9}{'new s':>9}{'new/old':>9}")
    worst = 0.0
    for name in todo:
        old, new = statistics.median(times[(name, "old")]), statistics.median(times[(name, "new")])
        worst = max(worst, new / old)
        print(f"{name:<16}{old:>9.3f}{new:>9.3f}{new / old:>9.2f}")
    print(f"worst ratio {worst:.2f} ({'within' if worst <= 1.10 else 'OVER'} the 1.10 bound)")
    return 0 if worst <= 1.10 else 1


if __name__ == "__main__":
    sys.exit(main())
