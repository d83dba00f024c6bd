"""Reward server overhead: the same 10,000 samples scored in-process and through HTTP, one run.

Sides (all score the same samples with the same built spec, `format.tags` + `text.exact`):

- in-process: `reward.score_batch(samples)` — the floor.
- rewardlab server: `rewardlab serve` in its own process on 127.0.0.1 (inline backend, SQLite
  cache), called by `rewardlab.serve.Client` (default: 2 requests in flight) in batches of 256:
  first pass (cold cache; results are written to the cache once the server is idle), the same
  on a second server that writes them at once (``--cache-write-delay-ms 0``: what sustained load
  costs), re-score (every result cached), a pass with ``use_cache=false``
  (pure serving cost), the same with ``Client.scores`` (totals, statuses and errors as columns:
  what a trainer consumes), and `AsyncClient` with 4 in flight.
- peer: the server people write by hand (OpenRLHF's `serve_rm.py` shape): a bare FastAPI +
  uvicorn route that builds Samples and calls `reward.score_batch`, no batching across
  clients, cache, limits or metrics; called with httpx in batches of 256.

Then latency at a fixed request rate (open loop: requests are sent on a schedule, not when the
previous one returns): p50/p99 of batches of 256 for both servers, cache off.

Last, an expensive reward, where a cache pays: `math.answer` (the sympy-backed maths verifier)
on the 800 real model responses of ``../shared/data/qwen25-math-cot-100.jsonl``, first pass
(cold cache) versus re-score, through a server with the worker-pool backend (skipped when the
data file is absent).

Run: .venv/bin/python bench/bench_serve.py [--n 10000] [--batch 256] [--rate 8] [--requests 40]
Loopback only; every server is started and stopped by this script. Each pass is timed
--rounds times (fresh cache for every first pass) and the best is kept: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import socket
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from rewardlab.compose import build
from rewardlab.core import Sample
from rewardlab.serve.client import AsyncClient, Client
from rewardlab.store import ResultStore

SPEC = """
[reward]
name = "cheap"
[[reward.components]]
name = "format"
use = "format.tags"
weight = 0.2
[[reward.components]]
name = "exact"
use = "text.exact"
weight = 1.0
params = { extract = "<answer>(.*?)</answer>" }
"""

# The peer: a hand-written FastAPI endpoint around the same reward (OpenRLHF serve_rm.py shape).
PEER = """
import sys
import uvicorn
from fastapi import FastAPI, Request
from rewardlab.compose import build
from rewardlab.core import Sample

reward = build(open(sys.argv[1]).read())
app = FastAPI()

@app.post("/score")
async def score(request: Request):
    data = await request.json()
    results = reward.score_batch([Sample.from_dict(row) for row in data["samples"]])
    return {"results": [r.to_dict() for r in results]}

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"""


def make_samples(n: int) -> list[Sample]:
    rng = random.Random(0)
    out = []
    for i in range(n):
        answer = "".join(rng.choices(string.ascii_lowercase, k=6))
        said = answer if rng.random() < 0.5 else answer[::-1]
        out.append(Sample(prompt=f"Spell word {i}", response=f"<think>hmm {i}</think><answer>{said}</answer>", reference=answer))
    return out


def make_rlvr_samples(n: int) -> list[Sample]:
    """Arithmetic answers in the demo's format (`make demo`'s job at scale): 60% right, 10%
    unformatted; numbers drawn from a wide range, so few samples repeat."""
    rng = random.Random(0)
    out = []
    for _ in range(n):
        a, b = rng.randint(100, 9999), rng.randint(3, 999)
        said = a * b if rng.random() < 0.6 else a * b + rng.choice([-10, -1, 1, 10])
        response = (
            f"<think>We need {a} * {b}. Step by step that gives {said}.</think>\n<answer>{said}</answer>"
            if rng.random() < 0.9
            else f"The answer is {said}."
        )
        out.append(Sample(prompt=f"What is {a} times {b}?", response=response, reference=str(a * b)))
    return out


def demo_spec() -> str:
    from importlib import resources

    return resources.files("rewardlab.demo").joinpath("rlvr.toml").read_text()


# name -> (description, spec text, sample maker)
SPECS = {
    "cheap": ("format.tags + text.exact", lambda: SPEC, make_samples),
    "rlvr": ("the demo's RLVR spec: format gate + math.answer + length", demo_spec, make_rlvr_samples),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(cmd: list[str], port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/docs", timeout=1)
            return proc
        except httpx.TransportError:
            if proc.poll() is not None:
                raise RuntimeError((proc.stderr.read() if proc.stderr else b"").decode()) from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"server on port {port} did not start")


MATH_SPEC = """
[reward]
name = "math"
[[reward.components]]
name = "correct"
use = "math.answer"
"""
MATH_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "qwen25-math-cot-100.jsonl"


def math_samples() -> list[Sample]:
    import json

    out = []
    for line in MATH_DATA.read_text().splitlines():
        row = json.loads(line)
        out.extend(Sample(prompt=row["question"], response=r, reference=row["gt"]) for r in row["response"])
    return out


def _cold_inprocess_seconds(spec: str) -> float:
    """In-process time in a fresh interpreter: the verifier's memo caches start empty."""
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]); from bench_serve import build, math_samples; "
        "r = build(sys.argv[2]); s = math_samples(); t = time.perf_counter(); r.score_batch(s); "
        "print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), spec], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def bench_math(tmp: str, batch: int, rounds: int) -> None:
    """Cold versus cached scoring of an expensive verifier through the server (pool backend).

    Every round starts a new server (new worker processes, empty cache), because the maths
    verifier memoises parses inside its process: a warm worker is not a first pass.
    """
    if not MATH_DATA.exists():
        print(f"math section skipped: {MATH_DATA} not found")
        return
    samples = math_samples()
    expected = [r.score for r in build(MATH_SPEC).score_batch(samples)]
    spec = Path(tmp, "math.toml")
    spec.write_text(MATH_SPEC)
    inproc, firsts, cached = [], [], []
    for k in range(rounds):
        inproc.append(_cold_inprocess_seconds(MATH_SPEC))
        port, cache = free_port(), Path(tmp, f"math{k}.sqlite")
        server = start(
            [sys.executable, "-c", "import sys; from rewardlab.cli.main import main; sys.exit(main(sys.argv[1:]))",
             "serve", str(spec), "--port", str(port), "--workers", "2", "--cache", str(cache), "--log-level", "warning"],
            port,
        )
        try:
            with Client(f"http://127.0.0.1:{port}", batch_size=batch) as client:
                started = time.perf_counter()
                first = client.score("math", samples)
                firsts.append(time.perf_counter() - started)
                started = time.perf_counter()
                again = client.score("math", samples)
                cached.append(time.perf_counter() - started)
                assert [r.score for r in first] == [r.score for r in again] == expected
        finally:
            server.terminate()
            server.wait(10)
    n, t_inproc, t_first, t_cached = len(samples), min(inproc), min(firsts), min(cached)
    print(f"\nexpensive reward: math.answer on {n} real responses (Qwen2.5-Math CoT); server with 2 workers")
    print(f"{'in-process reward.score_batch (cold)':<44}{t_inproc:>9.3f}{n / t_inproc:>12,.0f}")
    print(f"{'rewardlab server, first pass (cold cache)':<44}{t_first:>9.3f}{n / t_first:>12,.0f}")
    print(f"{'rewardlab server, re-score (cached)':<44}{t_cached:>9.3f}{n / t_cached:>12,.0f}")
    print(f"cached re-score speed-up over first pass:   {t_first / t_cached:.1f}x (goal >= 20x)")


def peer_pass(url: str, rows: list[dict], batch: int) -> list[float | None]:
    scores: list[float | None] = []
    with httpx.Client(base_url=url, timeout=600) as http:
        for i in range(0, len(rows), batch):
            reply = http.post("/score", json={"samples": rows[i : i + batch]})
            reply.raise_for_status()
            scores.extend(r["score"] for r in reply.json()["results"])
    return scores


async def fixed_rate(url: str, path: str, bodies: list[dict], rate: float) -> list[float]:
    """Open-loop latencies: request k leaves at k / rate seconds, whatever happened before."""
    latencies: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=600) as http:
        start = time.perf_counter()

        async def one(k: int, body: dict) -> None:
            await asyncio.sleep(max(0.0, start + k / rate - time.perf_counter()))
            sent = time.perf_counter()
            reply = await http.post(path, json=body)
            reply.raise_for_status()
            latencies.append(time.perf_counter() - sent)

        await asyncio.gather(*(one(k, b) for k, b in enumerate(bodies)))
    return latencies


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def bench_cheap(
    args: argparse.Namespace, tmp: str, spec_name: str = "cheap"
) -> tuple[dict[str, float], list[float], list[float]]:
    """Best-of-rounds seconds per side (interleaved per round), then fixed-rate latencies."""
    _, spec_text, make = SPECS[spec_name]
    reward = build(spec_text())
    samples = make(args.n)
    rows = [s.to_dict() for s in samples]
    expected = [r.score for r in reward.score_batch(samples)]
    spec, cache, cache_now = Path(tmp, "cheap.toml"), Path(tmp, "cache.sqlite"), Path(tmp, "cache-now.sqlite")
    spec.write_text(spec_text())
    port, now_port, peer_port = free_port(), free_port(), free_port()

    def serve(port: int, cache: Path, *extra: str) -> subprocess.Popen[bytes]:
        return start(
            [sys.executable, "-c", "import sys; from rewardlab.cli.main import main; sys.exit(main(sys.argv[1:]))",
             "serve", f"cheap={spec}", "--port", str(port), "--backend", "inline", "--cache", str(cache),
             "--log-level", "warning", *extra],
            port,
        )

    server = serve(port, cache)
    # The same server writing its cache at once, as under sustained load (no idle moment to wait for).
    server_now = serve(now_port, cache_now, "--cache-write-delay-ms", "0")
    Path(tmp, "peer.py").write_text(PEER)
    peer = start([sys.executable, str(Path(tmp, "peer.py")), str(spec), str(peer_port)], peer_port)
    url, peer_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{peer_port}"

    async def pipelined() -> list:
        async with AsyncClient(url, batch_size=args.batch, max_concurrency=4) as aclient:
            return await aclient.score("cheap", samples, use_cache=False)

    try:
        with Client(url, batch_size=args.batch) as client, Client(f"http://127.0.0.1:{now_port}", batch_size=args.batch) as now:
            client.score("cheap", samples[: args.batch], use_cache=False)  # warm-up: imports, regexes
            now.score("cheap", samples[: args.batch], use_cache=False)
            peer_pass(peer_url, rows[: args.batch], args.batch)
            passes = {
                "inproc": lambda: reward.score_batch(samples),
                "first": lambda: client.score("cheap", samples),
                "first_now": lambda: now.score("cheap", samples),
                "cached": lambda: client.score("cheap", samples),
                "nocache": lambda: client.score("cheap", samples, use_cache=False),
                "scores": lambda: client.scores("cheap", samples, use_cache=False),
                "pipelined": lambda: asyncio.run(pipelined()),
                "peer": lambda: peer_pass(peer_url, rows, args.batch),
            }
            times: dict[str, list[float]] = {k: [] for k in passes}
            for _ in range(args.rounds):  # sides interleaved per round: the machine's load drifts
                for path in (cache, cache_now):
                    with ResultStore(path) as store:
                        store.clear()  # every first pass starts from an empty cache
                for name, run in passes.items():
                    # A pause between sides: the last side's server writes its cache when idle
                    # (50 ms after its last batch), which must not land on the next side's clock.
                    time.sleep(0.3)
                    started = time.perf_counter()
                    out = run()
                    times[name].append(time.perf_counter() - started)
                    scores = out if name == "peer" else out.values if name == "scores" else [r.score for r in out]
                    assert scores == expected, f"{name}: results differ from in-process"
        bodies = [{"samples": rows[(k * args.batch) % len(rows) :][: args.batch]} for k in range(args.requests)]
        lat_rl = asyncio.run(
            fixed_rate(url, "/v1/rewards/cheap:score", [{**b, "use_cache": False} for b in bodies], args.rate)
        )
        lat_peer = asyncio.run(fixed_rate(peer_url, "/score", bodies, args.rate))
    finally:
        for proc in (server, server_now, peer):
            proc.terminate()
            proc.wait(10)
    return {k: min(v) for k, v in times.items()}, lat_rl, lat_peer


def report_cheap(
    args: argparse.Namespace, t: dict[str, float], lat_rl: list[float], lat_peer: list[float], spec_name: str = "cheap"
) -> None:
    n, base = args.n, t["inproc"]
    print(f"\n{n} samples, batches of {args.batch}, loopback; spec {spec_name!r}: {SPECS[spec_name][0]}; best of {args.rounds}")
    print(f"in-process cost: {base / n * 1e6:.1f} us per sample")
    print(f"{'side':<44}{'seconds':>9}{'samples/s':>12}{'x in-process':>14}")
    labels = {
        "inproc": "in-process reward.score_batch",
        "first": "rewardlab Client, first pass (cold cache)",
        "first_now": "  same, cache written at once (no idle wait)",
        "cached": "rewardlab Client, re-score (cached)",
        "nocache": "rewardlab Client, use_cache=false",
        "scores": "rewardlab Client.scores (totals), no cache",
        "pipelined": "rewardlab AsyncClient, 4 in flight, no cache",
        "peer": "peer: bare FastAPI endpoint",
    }
    for key, name in labels.items():
        print(f"{name:<44}{t[key]:>9.3f}{n / t[key]:>12,.0f}{t[key] / base:>14.2f}")
    print(f"serving overhead, full results (no cache):  {t['nocache'] / base:.2f}x (goal <= 1.3x)")
    print(f"serving overhead, totals only (no cache):   {t['scores'] / base:.2f}x (goal <= 1.3x)")
    print(f"first pass, serving + cache lookups/writes: {t['first'] / base:.2f}x")
    print(f"  with the cache written at once:           {t['first_now'] / base:.2f}x")
    print(f"rewardlab no-cache vs bare FastAPI peer:    {t['nocache'] / t['peer']:.2f}x the peer's time")
    print(f"cached re-score speed-up over first pass:   {t['first'] / t['cached']:.1f}x (goal >= 20x)")
    print(f"latency at {args.rate:g} req/s x {args.requests} requests of {args.batch} (open loop, cache off):")
    print(f"  rewardlab p50 {pct(lat_rl, 50) * 1000:.1f} ms  p99 {pct(lat_rl, 99) * 1000:.1f} ms")
    print(f"  peer      p50 {pct(lat_peer, 50) * 1000:.1f} ms  p99 {pct(lat_peer, 99) * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rate", type=float, default=8.0, help="requests per second for the latency test")
    parser.add_argument("--requests", type=int, default=40, help="requests in the latency test")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many timings per pass")
    parser.add_argument("--skip-math", action="store_true", help="skip the maths-verifier section")
    parser.add_argument("--specs", default="cheap,rlvr", help=f"comma-separated, of {sorted(SPECS)}")
    args = parser.parse_args()
    for spec_name in args.specs.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            times, lat_rl, lat_peer = bench_cheap(args, tmp, spec_name)
        report_cheap(args, times, lat_rl, lat_peer, spec_name)
    if not args.skip_math:
        with tempfile.TemporaryDirectory() as tmp:
            bench_math(tmp, args.batch, args.rounds)


if __name__ == "__main__":
    main()
