"""Per-sample cost of the hot paths the one-validator / no-bypass redesign touched, for the
tree on ``PYTHONPATH``: run it once per tree (this one and an older commit's `git archive`) and
compare. Min of ``--repeat`` timings of ``--number`` calls each, so a loaded machine inflates
the numbers less than a single timing would. `timeit` turns the garbage collector off while it
times; ``--gc`` keeps it on (with ``--big-heap``: what a trainer's process sees).

    PYTHONPATH=src python bench/bench_hot_paths.py
    git archive 0640629 src | tar -x -C /tmp/base && PYTHONPATH=/tmp/base/src python bench/bench_hot_paths.py
"""

from __future__ import annotations

import argparse
import gc
import timeit

import orjson
from bench_serve import SPEC  # the cheap spec of the serving benchmark (this folder)

from rewardlab.compose import build
from rewardlab.core import RewardResult, Sample
from rewardlab.runner.io import RowFormat, RowScorer
from rewardlab.serve.app import parse_score_body


def _rows(n: int) -> list[dict[str, object]]:
    return [{"prompt": f"What is {i} + 1?", "response": f"<think>t</think><answer>{i + 1}</answer>", "reference": str(i + 1)} for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--big-heap", action="store_true", help="hold ~2M extra objects, as a trainer's process does")
    parser.add_argument("--gc", action="store_true", help="keep the garbage collector on while timing")
    args = parser.parse_args()
    heap = [{"i": i} for i in range(2_000_000)] if args.big_heap else []
    reward = build(SPEC)
    rows = _rows(args.batch)
    samples = [Sample.from_dict(r) for r in rows]
    body = orjson.dumps({"samples": rows})
    reply = orjson.dumps({"results": [r.stamped("h").to_dict() for r in reward.score_batch(samples)]})
    decoded = orjson.loads(reply)["results"]
    lines = [(i + 1, orjson.dumps(r).decode()) for i, r in enumerate(rows)]
    job = RowScorer(reward, RowFormat("data.jsonl", "h", "v"))
    try:  # the client's decoder before the redesign, if this tree has it
        from rewardlab.serve.client import _results
    except ImportError:
        _results = None
    import httpx

    response = httpx.Response(200, content=reply)
    cases = {
        "Sample.from_dict, per row": lambda: [Sample.from_dict(r) for r in rows],
        "server: parse a score request, per sample": lambda: parse_score_body(body),
        "composite score_batch (format + exact), per sample": lambda: reward.score_batch(samples),
        "RewardResult.from_dict (total + 2 parts), per sample": lambda: [RewardResult.from_dict(r) for r in decoded],
        "client: decode a full reply, per sample": (lambda: _results(response, len(rows))) if _results else None,
        "runner: RowScorer (decode, check, score, flatten), per row": lambda: [job(x) for x in lines],
    }
    print(f"batch {args.batch}, min of {args.repeat} x {args.number}; big heap: {bool(heap)}; gc on while timing: {args.gc}")
    for name, fn in cases.items():
        if fn is None:
            continue
        timer = timeit.Timer(fn, setup="gc.enable()" if args.gc else "pass", globals={"gc": gc})
        best = min(timer.repeat(number=args.number, repeat=args.repeat)) / args.number / args.batch
        print(f"{name:60s} {best * 1e6:7.2f} us")


if __name__ == "__main__":
    main()
