"""Soak: sustained load on `rewardlab serve` with and without faults, minutes long.

A `rewardlab serve` process (worker-pool backend, SQLite cache) on 127.0.0.1 takes requests from
`--clients` threads. First a `--warmup` (seconds) of the faulty mix, measured by nothing: caches,
the allocator's arenas, the adaptive chunk size and workers forked from a warmed-up server all
reach their steady state. Then `--duration` seconds measured, in rounds of `--round` seconds that
alternate clean and faulty (so a machine whose load drifts weighs on both alike):

- clean: batches of `--batch` fresh samples (`format.tags` + `text.exact`), never seen before;
- faults: the same, plus, at random (seeded): kill -9 of one of the server's worker processes
  (`--kill-every` seconds on average), samples nested too deep to pickle, and malformed,
  too deeply nested and oversize bodies and clients that disconnect midway.

Printed per kind of round: requests and samples per second, p50/p99 request latency, answers by
kind, the worker restarts the server counted (`rewardlab_worker_restarts_total`) against the
kills sent. Every reply is checked: one result per sample, each `ok` with the right score or a
typed error (`crash` for a killed worker's sample, `invalid_input` for a deep one). Memory is
sampled every second: the server process's RSS, and the proportional set size (PSS: shared
pages split between the processes that share them, so the sum is real memory) of the server and
its workers together; growth is the median of the last fifth of the measured run over the
median of the first fifth. The issue's targets: p99 under faults within 2x of clean, memory
growth under 5%. Exits 1 on a wrong answer.

Run: .venv/bin/python bench/bench_soak.py [--duration 600] [--warmup 30] [--round 30] [--clients 4] [--batch 64]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
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


def pool_workers(proc: subprocess.Popen[bytes]) -> list[psutil.Process]:
    """The server's pool workers: its descendants but the pools' fork servers (which fork them;
    a kill -9 of one takes its workers with it)."""
    found = []
    for p in psutil.Process(proc.pid).children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.ZombieProcess):
            if p.name() != "rewardlab-fork":
                found.append(p)
    return found


def memory(proc: subprocess.Popen[bytes]) -> tuple[int, int]:
    """(RSS of the server process, PSS of the server, its fork servers and workers together), in bytes.

    The workers are forked: a sum of RSS would count the pages they share with the server once
    per process (a worker forked from a 150 MB server shows 150 MB of RSS while it owns a few)."""
    parent = psutil.Process(proc.pid)
    server_rss, total_pss = parent.memory_info().rss, 0
    for p in [parent, *parent.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.ZombieProcess):  # a worker killed meanwhile
            total_pss += p.memory_full_info().pss
    return server_rss, total_pss


class MemorySampler:
    """`memory(proc)` once a second, in a thread, while measuring."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc, self.samples = proc, []  # type: list[tuple[int, int]]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(1.0):
            self.samples.append(memory(self.proc))

    def growth(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """((server RSS, total PSS) over the first fifth, the same over the last fifth), MiB medians."""
        n = max(1, len(self.samples) // 5)
        first, last = self.samples[:n], self.samples[-n:]
        return tuple(  # type: ignore[return-value]
            tuple(statistics.median(s[col] for s in part) / 2**20 for col in (0, 1)) for part in (first, last)
        )


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


def phase(url: str, proc: subprocess.Popen[bytes], args: argparse.Namespace, faults: bool, seconds: float, ids: Any, into: dict[str, Any]) -> None:
    """Load for `seconds`; adds latencies, counts and problems to `into`."""
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client_loop(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=url, timeout=60) as client:
            while time.monotonic() < stop:
                if faults and rng.random() < 0.05:
                    bad_request(client, url, rng)
                first = next(ids) * args.batch  # fresh samples in every round: never a cache hit
                rows = [sample(rng, first + k, faults and rng.random() < 0.01) for k in range(args.batch)]
                started = time.perf_counter()
                reply = client.post(URL, json={"samples": [r for r, _ in rows]})
                took = time.perf_counter() - started
                results = reply.json()["results"] if reply.status_code == 200 else []
                with lock:
                    into["latencies"].append(took)
                    into["samples"] += len(rows)
                    if len(results) != len(rows):
                        into["problems"].append(f"status {reply.status_code}: {len(results)} results for {len(rows)} samples")
                        continue
                    for (_, want), got in zip(rows, results, strict=True):
                        kind = got["error"]["kind"] if got["status"] == "error" else got["status"]
                        into["answers"][kind] += 1
                        if want is not None and (got["status"] != "ok" or abs(got["score"] - want) > 1e-9):
                            if kind != "crash":  # a killed worker's sample is its crash
                                into["problems"].append(f"{got} for a sample worth {want}")
                        elif want is None and kind != "invalid_input":
                            into["problems"].append(f"a deep sample answered {kind}")

    def killer(seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < stop:
            time.sleep(rng.expovariate(1 / args.kill_every))
            workers = pool_workers(proc)
            if workers:
                try:
                    rng.choice(workers).kill()
                    into["answers"]["kills sent"] += 1
                except psutil.NoSuchProcess:
                    pass

    restarts_before = restarts(url)
    started = time.monotonic()
    seed = args.seed + 1000 * into["rounds"]
    threads = [threading.Thread(target=client_loop, args=(seed + k,)) for k in range(args.clients)]
    if faults:
        threads.append(threading.Thread(target=killer, args=(seed - 1,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    into["seconds"] += time.monotonic() - started
    into["rounds"] += 1
    # kill -9 sent vs the server's own count of replaced workers (a kill may hit a worker that
    # is exiting already, or one still idle when the round ends: the count can be lower)
    into["worker restarts"] += restarts(url) - restarts_before


def totals() -> dict[str, Any]:
    return {"latencies": [], "samples": 0, "answers": Counter(), "problems": [], "seconds": 0.0, "rounds": 0, "worker restarts": 0.0}


def summary(t: dict[str, Any]) -> dict[str, Any]:
    ordered = sorted(t["latencies"])
    return {
        "rounds": t["rounds"],
        "requests/s": len(ordered) / t["seconds"],
        "samples/s": t["samples"] / t["seconds"],
        "p50 ms": 1000 * statistics.median(ordered),
        "p99 ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        "answers": dict(t["answers"]),
        "worker restarts": t["worker restarts"],
        "problems": len(t["problems"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=600.0, help="measured seconds in all (clean and faulty rounds)")
    parser.add_argument("--round", type=float, default=30.0, help="seconds per round (clean and faulty rounds alternate)")
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds of faulty load before measuring")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--kill-every", type=float, default=2.0, help="mean seconds between worker kills (faulty rounds)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    ids = itertools.count()
    warm, clean, faulty = totals(), totals(), totals()
    rounds = max(2, round(args.duration / args.round))
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp))
        try:
            phase(url, proc, args, True, args.warmup, ids, warm)
            sampler = MemorySampler(proc)
            sampler.thread.start()
            for k in range(rounds):
                phase(url, proc, args, k % 2 == 1, args.duration / rounds, ids, faulty if k % 2 else clean)
            sampler.stop.set()
            sampler.thread.join()
        finally:
            proc.terminate()
            proc.wait(60)
    for name, result in (("clean", clean), ("faults", faulty)):
        print(f"{name:>7}: " + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in summary(result).items()))
    (rss0, pss0), (rss1, pss1) = sampler.growth()
    print(f"memory (median of the first / last fifth of {len(sampler.samples)} samples, after {args.warmup:g} s warm-up): "
          f"server RSS {rss0:.1f} -> {rss1:.1f} MiB ({100 * (rss1 - rss0) / rss0:+.1f}%), "
          f"server + workers PSS {pss0:.1f} -> {pss1:.1f} MiB ({100 * (pss1 - pss0) / pss0:+.1f}%) (target < 5%)")  # fmt: skip
    print(f"p99 under faults / clean: {summary(faulty)['p99 ms'] / summary(clean)['p99 ms']:.2f}x (target <= 2x)")
    problems = warm["problems"] + clean["problems"] + faulty["problems"]
    if problems:
        raise SystemExit(f"{len(problems)} wrong answers, e.g. {problems[:5]}")


if __name__ == "__main__":
    main()
