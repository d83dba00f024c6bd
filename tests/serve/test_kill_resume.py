"""SIGKILL the server mid-run, restart it: the cache is consistent and `--resume` finishes the run
with every row exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from rewardlab.core import Sample
from rewardlab.errors import ServerError
from rewardlab.runner import ScoreFileOptions, score_file_resumable
from rewardlab.serve.remote import RemoteExecutor
from rewardlab.store import ResultStore, RunStore, sample_key

from ._live import free_port

pytestmark = [pytest.mark.network, pytest.mark.slow, pytest.mark.timeout(180)]

HERE = Path(__file__).parent
SPEC = """
[reward]
name = "slow"
[[reward.components]]
name = "len"
use = "test.slow"
params = { delay = 0.002 }
"""


def _start_server(spec: Path, port: int, cache: Path, *extra: str) -> subprocess.Popen:
    argv = ["serve", str(spec), "--port", str(port), "--cache", str(cache), "--workers", "1", "--log-level", "warning", *extra]
    code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import _rewards; _rewards.register_all(); "
        f"from rewardlab.cli.main import main; sys.exit(main({argv!r}))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
        if proc.poll() is not None:
            raise RuntimeError(proc.stderr.read().decode())
    proc.kill()
    raise RuntimeError("server did not start")


def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path):
    spec = tmp_path / "slow.toml"
    spec.write_text(SPEC)
    data = tmp_path / "data.jsonl"
    n = 2000  # killed at >= 500 recorded rows: >= 3 s of scoring (2 ms a row) still to do
    data.write_text("".join(json.dumps({"response": f"row {i} " + "w" * (i % 13)}) + "\n" for i in range(n)))
    samples = [Sample(response=f"row {i} " + "w" * (i % 13)) for i in range(n)]
    scores_by_key = {sample_key(s): len(s.response) / 100 for s in samples}
    out = tmp_path / "scored.jsonl"
    port, server_cache = free_port(), tmp_path / "server.sqlite"
    runs = RunStore(tmp_path / "runs.sqlite")
    options = ScoreFileOptions(record_every=100)

    server = _start_server(spec, port, server_cache)
    try:
        executor = RemoteExecutor(f"http://127.0.0.1:{port}", "slow", retries=1, backoff=0.05)
        spec_hash = executor.spec_hash()
        failure: dict = {}

        def first_run() -> None:
            try:
                score_file_resumable(executor, data, out, store=runs, spec_hash=spec_hash, options=options)
            except ServerError as exc:
                failure["error"] = exc

        thread = threading.Thread(target=first_run)
        thread.start()
        run_id = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # kill once a few chunks are recorded, mid-run
            rows = runs._db.execute("SELECT run_id, COUNT(*) FROM run_rows GROUP BY run_id").fetchall()
            if rows and rows[0][1] >= 500:
                run_id = rows[0][0]
                break
            time.sleep(0.01)
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        thread.join(60)
        assert "error" in failure, "the first run should fail when its server is killed"
        recorded = runs.run_info(run_id)
        assert 0 < recorded.done < n and not recorded.finished and not out.exists()

        with ResultStore(server_cache) as cache:  # the killed server's cache is consistent
            assert cache.integrity_check() == "ok"
            cached_keys = {k.hex() for (k,) in cache._db.execute("SELECT key FROM result_cache")}
            for key, text in cache._db.execute("SELECT key, result FROM result_cache"):
                assert json.loads(text)["score"] == scores_by_key[key.hex()]  # every cached row is right
        done = runs.done_rows(run_id)
        unrecorded = {sample_key(s) for i, s in enumerate(samples, start=1) if i not in done}
        expected_hits = len(unrecorded & cached_keys)  # computed before the kill, never recorded

        server = _start_server(spec, port, server_cache)
        resumed_from: list[int] = []
        summary, resumed_id = score_file_resumable(
            executor, data, out, store=runs, spec_hash=spec_hash, options=options, progress=resumed_from.append
        )
        assert resumed_id == run_id and resumed_from[0] == recorded.done  # recorded rows were skipped
        assert summary.rows == n
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert [row["source_line"] for row in lines] == list(range(1, n + 1))  # each row once, in order
        assert all(row["reward"] == len(row["response"]) / 100 for row in lines)
        assert all(row["spec_hash"] == spec_hash for row in lines)
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        hits = float(metrics.split('rewardlab_cache_hits_total{reward="slow"} ')[1].split()[0])
        assert hits == expected_hits  # and they were not computed again
        executor.close()
    finally:
        server.terminate()  # a graceful stop writes the rows still waiting (write-behind)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    with ResultStore(server_cache) as cache:
        assert cache.integrity_check() == "ok"
        # What the killed server had written, and every row the second one computed; rows the
        # first computed but still held for writing (write-behind) died with it: a cache may
        # lose rows, the run's output may not.
        assert cache.stats().rows == len(cached_keys | unrecorded)


def test_rewardlab_serve_applies_its_options(tmp_path):
    """`rewardlab serve --set NAME.timeout --token --max-samples --cache-write-delay-ms` end to end: a
    hung sample times out; the cache row waits for the writer until the graceful stop writes it."""
    spec = tmp_path / "faulty.toml"
    spec.write_text(SPEC.replace('"slow"', '"faulty"').replace("test.slow", "test.faulty").replace("params = { delay = 0.002 }", ""))
    port = free_port()
    cache = tmp_path / "c.sqlite"
    server = _start_server(
        spec, port, cache, "--timeout", "30", "--set", "faulty.timeout=0.5", "--token", "tok",
        "--max-samples", "3", "--log-level", "info", "--cache-write-delay-ms", "60000",
    )
    url = f"http://127.0.0.1:{port}/v1/rewards/faulty:score"
    try:
        auth = {"Authorization": "Bearer tok"}
        started = time.monotonic()
        reply = httpx.post(url, json={"samples": [{"response": "hang"}, {"response": "ok"}]}, headers=auth, timeout=60)
        assert time.monotonic() - started < 20
        results = reply.json()["results"]
        assert results[0]["error"]["kind"] == "timeout" and "0.5s" in results[0]["error"]["message"]
        assert results[1]["score"] == 0.02
        assert httpx.post(url, json={"samples": [{"response": "x"}]}).status_code == 401
        too_many = httpx.post(url, json={"samples": [{"response": "x"}] * 4}, headers=auth)
        assert too_many.json()["error"]["code"] == "too_many_samples"
        time.sleep(0.3)  # idle, but the write delay is a minute: the ok result still waits in memory
        with ResultStore(cache) as store:
            assert store.stats().rows == 0
        server.terminate()  # SIGTERM: graceful shutdown (uvicorn re-raises the signal afterwards)
        assert server.wait(20) in (0, -signal.SIGTERM)
        assert "Application shutdown complete" in server.stderr.read().decode()
        with ResultStore(cache) as store:
            assert store.stats().rows == 1  # written on the way out; the timeout error is never cached
    finally:
        server.kill()
        server.wait()
