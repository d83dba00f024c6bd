"""Reward server overhead: the same 10,000 samples scored in-process and through HTTP, one run.

Sides (all score the same samples with the same built spec, `format.tags` + `text.exact`):

- in-process: `reward.score_batch(samples)` — the floor.
- rewardlab server: `rewardlab serve` in its own process on 127.0.0.1 (inline backend, SQLite
  cache), called by `rewardlab.serve.Client` in batches of 256: first pass (cold cache),
  re-score (every result cached), and a pass with ``use_cache=false`` (pure serving cost).
- peer: the server people write by hand (OpenRLHF's `serve_rm.py` shape): a bare FastAPI +
  uvicorn route that builds Samples and calls `reward.score_batch`, no batching across
  clients, cache, limits or metrics; called with httpx in batches of 256.

Then latency at a fixed request rate (open loop: requests are sent on a schedule, not when the
previous one returns): p50/p99 of batches of 256 for both servers, cache off.

Run: .venv/bin/python bench/bench_serve.py [--n 10000] [--batch 256] [--rate 8] [--requests 40]
Loopback only; every server is started and stopped by this script.
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


def timed(fn, repeat: int = 1) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rate", type=float, default=8.0, help="requests per second for the latency test")
    parser.add_argument("--requests", type=int, default=40, help="requests in the latency test")
    args = parser.parse_args()

    reward = build(SPEC)
    samples = make_samples(args.n)
    rows = [s.to_dict() for s in samples]
    expected = [r.score for r in reward.score_batch(samples)]
    t_inproc = timed(lambda: reward.score_batch(samples), repeat=3)

    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp, "cheap.toml")
        spec.write_text(SPEC)
        port, peer_port = free_port(), free_port()
        server = start(
            [sys.executable, "-c", "import sys; from rewardlab.cli.main import main; sys.exit(main(sys.argv[1:]))",
             "serve", str(spec), "--port", str(port), "--backend", "inline", "--cache", str(Path(tmp, "cache.sqlite")),
             "--log-level", "warning"],
            port,
        )
        peer_file = Path(tmp, "peer.py")
        peer_file.write_text(PEER)
        peer = start([sys.executable, str(peer_file), str(spec), str(peer_port)], peer_port)
        url, peer_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{peer_port}"
        try:
            with Client(url, batch_size=args.batch) as client:
                client.score("cheap", samples[: args.batch], use_cache=False)  # warm-up (imports, JIT of regexes)
                peer_pass(peer_url, rows[: args.batch], args.batch)
                out: dict[str, list] = {}
                t_first = timed(lambda: out.__setitem__("first", client.score("cheap", samples)))
                t_cached = timed(lambda: out.__setitem__("cached", client.score("cheap", samples)))
                t_nocache = timed(lambda: out.__setitem__("nocache", client.score("cheap", samples, use_cache=False)))

            async def pipelined() -> list:
                async with AsyncClient(url, batch_size=args.batch, max_concurrency=2) as aclient:
                    return await aclient.score("cheap", samples, use_cache=False)

            t_pipe = timed(lambda: out.__setitem__("pipelined", asyncio.run(pipelined())))
            t_peer = timed(lambda: out.__setitem__("peer", peer_pass(peer_url, rows, args.batch)))
            for name in ("first", "cached", "nocache", "pipelined"):
                assert [r.score for r in out[name]] == expected, f"{name}: results differ from in-process"
            assert out["peer"] == expected
            bodies = [
                {"samples": rows[(k * args.batch) % len(rows) :][: args.batch], "use_cache": False}
                for k in range(args.requests)
            ]
            lat_rl = asyncio.run(fixed_rate(url, "/v1/rewards/cheap:score", bodies, args.rate))
            lat_peer = asyncio.run(fixed_rate(peer_url, "/score", [{"samples": b["samples"]} for b in bodies], args.rate))
        finally:
            for proc in (server, peer):
                proc.terminate()
                proc.wait(10)

    n = args.n
    print(f"{n} samples, batches of {args.batch}, loopback; spec: format.tags + text.exact")
    print(f"{'side':<44}{'seconds':>9}{'samples/s':>12}{'x in-process':>14}")
    table = [
        ("in-process reward.score_batch", t_inproc),
        ("rewardlab server, first pass (cold cache)", t_first),
        ("rewardlab server, re-score (cached)", t_cached),
        ("rewardlab server, use_cache=false", t_nocache),
        ("rewardlab AsyncClient, 2 in flight, no cache", t_pipe),
        ("peer: bare FastAPI endpoint", t_peer),
    ]
    for name, seconds in table:
        print(f"{name:<44}{seconds:>9.3f}{n / seconds:>12,.0f}{seconds / t_inproc:>14.2f}")
    print(f"serving overhead (first pass / in-process): {t_first / t_inproc:.2f}x (goal <= 1.3x)")
    print(f"serving overhead (no cache / in-process):   {t_nocache / t_inproc:.2f}x")
    print(f"rewardlab no-cache vs bare FastAPI peer:    {t_nocache / t_peer:.2f}x the peer's time")
    print(f"cached re-score speed-up over first pass:   {t_first / t_cached:.1f}x (goal >= 20x)")
    print(f"latency at {args.rate:g} req/s x {args.requests} requests of {args.batch} (open loop, cache off):")
    print(f"  rewardlab p50 {pct(lat_rl, 50) * 1000:.1f} ms  p99 {pct(lat_rl, 99) * 1000:.1f} ms")
    print(f"  peer      p50 {pct(lat_peer, 50) * 1000:.1f} ms  p99 {pct(lat_peer, 99) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
