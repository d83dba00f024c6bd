"""Soak: sustained load on `rewardlab serve` with and without faults, one run.

A `rewardlab serve` process (worker-pool backend, SQLite cache) on 127.0.0.1 takes requests from
`--clients` threads for `--seconds` per phase, in two phases with the same request mix:

- clean: batches of `--batch` fresh samples (`format.tags` + `text.exact`);
- faults: the same, plus, at random (seeded): kill -9 of one of the server's worker processes
  (`--kill-every` seconds on average), samples nested too deep to pickle, and malformed,
  too deeply nested and oversize bodies and clients that disconnect midway.

Printed per phase: requests and samples per second, p50/p99 request latency, errors by kind, the
worker restarts the server counted (`rewardlab_worker_restarts_total`; against the kills sent), and
the server's memory (its process and its workers, RSS) at the start and end of the phase. The
faults phase also checks every reply: one result per sample, each `ok` with the right score or a
typed error (`crash` for a killed worker's sample, `invalid_input` for a deep one). The issue's
targets: p99 under faults within 2x of clean, memory growth under 5%.

Run: .venv/bin/python bench/bench_soak.py [--seconds 120] [--clients 4] [--batch 64]
"""

from __future__ import annotations

import argparse
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import psutil

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
URL = "/v1/rewards/cheap:score"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    spec = tmp / "cheap.toml"
    spec.write_text(SPEC)
    port = free_port()
    argv = ["serve", str(spec), "--port", str(port), "--cache", str(tmp / "cache.sqlite"),
            "--workers", "2", "--timeout", "10", "--log-level", "warning", "--max-body-mb", "1"]  # fmt: skip
    code = f"import sys; from rewardlab.cli.main import main; sys.exit(main({argv!r}))"
    proc = subprocess.Popen([sys.executable, "-c", code])
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def rss(proc: subprocess.Popen[bytes]) -> int:
    """Resident memory of the server and its worker processes, in bytes."""
    parent = psutil.Process(proc.pid)
    return sum(p.memory_info().rss for p in [parent, *parent.children(recursive=True)] if p.is_running())


def restarts(url: str) -> float:
    """The server's ``rewardlab_worker_restarts_total`` over every reward and reason."""
    text = httpx.get(f"{url}/metrics", timeout=30).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("rewardlab_worker_restarts_total{"))


def sample(rng: random.Random, i: int, deep: bool) -> tuple[dict[str, Any], float | None]:
    """A fresh sample and its expected total (None: a typed error is expected)."""
    answer = rng.choice(["Paris", "Rome"])
    row: dict[str, Any] = {"response": f"<think>{i}</think><answer>{answer}</answer>", "reference": "Paris"}
    if deep:
        value: Any = "x"
        for _ in range(600):
            value = [value]
        row["meta"] = {"m": value}
        return row, None
    return row, 1.2 if answer == "Paris" else 0.2


def bad_request(client: httpx.Client, url: str, rng: random.Random) -> None:
    kind = rng.choice(["malformed", "deep", "oversize", "disconnect"])
    headers = {"content-type": "application/json"}
    if kind == "malformed":
        client.post(URL, content=b'{"samples": [', headers=headers)
    elif kind == "deep":
        client.post(URL, content='{"samples": [' + "[" * 3000 + "]" * 3000 + "]}", headers=headers)
    elif kind == "oversize":
        client.post(URL, json={"samples": [{"response": "y" * 1_200_000}]})
    else:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(f"POST {URL} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{{\"samples\"".encode())


def phase(url: str, proc: subprocess.Popen[bytes], args: argparse.Namespace, faults: bool) -> dict[str, Any]:
    latencies: list[float] = []
    kinds: Counter[str] = Counter()
    samples = [0]
    lock = threading.Lock()
    stop = time.monotonic() + args.seconds
    problems: list[str] = []

    def client_loop(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=url, timeout=60) as client:
            i = 0
            while time.monotonic() < stop:
                if faults and rng.random() < 0.05:
                    bad_request(client, url, rng)
                rows = [sample(rng, seed * 10**9 + i + k, faults and rng.random() < 0.01) for k in range(args.batch)]
                i += args.batch
                started = time.perf_counter()
                reply = client.post(URL, json={"samples": [r for r, _ in rows]})
                took = time.perf_counter() - started
                results = reply.json()["results"] if reply.status_code == 200 else []
                with lock:
                    latencies.append(took)
                    samples[0] += len(rows)
                    if len(results) != len(rows):
                        problems.append(f"status {reply.status_code}: {len(results)} results for {len(rows)} samples")
                        continue
                    for (_, want), got in zip(rows, results, strict=True):
                        kind = got["error"]["kind"] if got["status"] == "error" else got["status"]
                        kinds[kind] += 1
                        if want is not None and got["status"] == "ok" and abs(got["score"] - want) > 1e-9:
                            problems.append(f"wrong score {got['score']} for {want}")
                        elif want is None and kind != "invalid_input":
                            problems.append(f"a deep sample answered {kind}")

    def killer(seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < stop:
            time.sleep(rng.expovariate(1 / args.kill_every))
            workers = psutil.Process(proc.pid).children()
            if workers:
                try:
                    rng.choice(workers).kill()
                    kinds["kills"] += 1
                except psutil.NoSuchProcess:
                    pass

    memory_before = rss(proc)
    restarts_before = restarts(url)
    started = time.monotonic()
    threads = [threading.Thread(target=client_loop, args=(args.seed + k,)) for k in range(args.clients)]
    if faults:
        threads.append(threading.Thread(target=killer, args=(args.seed - 1,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - started
    ordered = sorted(latencies)
    return {
        "requests/s": len(latencies) / seconds,
        "samples/s": samples[0] / seconds,
        "p50 ms": 1000 * statistics.median(ordered),
        "p99 ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        "answers": dict(kinds),
        "rss MiB": (memory_before / 2**20, rss(proc) / 2**20),
        "problems": problems[:5],
        "problem count": len(problems),
        # kill -9 sent vs the server's own count of replaced workers (a kill may hit a worker
        # that is exiting already, so the count can be lower, never higher)
        "worker restarts": restarts(url) - restarts_before,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="seconds per phase")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--kill-every", type=float, default=2.0, help="mean seconds between worker kills (faults phase)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp))
        try:
            clean = phase(url, proc, args, faults=False)
            faulty = phase(url, proc, args, faults=True)
        finally:
            proc.terminate()
            proc.wait(60)
    for name, result in (("clean", clean), ("faults", faulty)):
        print(f"{name:>7}: " + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items()))
    before, after = faulty["rss MiB"]
    print(f"p99 under faults / clean: {faulty['p99 ms'] / clean['p99 ms']:.2f}x (target <= 2x); "
          f"memory over the faults phase: {100 * (after - before) / before:+.1f}% (target < 5%)")  # fmt: skip
    if clean["problem count"] or faulty["problem count"]:
        raise SystemExit(f"wrong answers: {clean['problems'] + faulty['problems']}")


if __name__ == "__main__":
    main()
