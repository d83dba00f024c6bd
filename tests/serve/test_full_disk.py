"""A full disk under the result cache: a tiny tmpfs (mounting it needs root; skipped otherwise)
filled to the last byte. The server keeps answering, right and uncached, and says so in its
metrics and log; SIGKILLed mid-run and restarted on the same full disk, it lets `--resume`
finish the run with every row exactly once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from rewardlab.errors import ServerError
from rewardlab.runner import ScoreFileOptions, score_file_resumable
from rewardlab.serve.remote import RemoteExecutor
from rewardlab.store import ResultStore, RunStore

from ._live import free_port
from .test_kill_resume import HERE, SPEC

pytestmark = [pytest.mark.network, pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs, unmounted after the test."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> Path:
    """Write a file until the disk has no byte left; its path."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == 28  # ENOSPC
    try:
        while True:  # the last partial block
            os.write(fd, b"\0")
    except OSError:
        pass
    os.close(fd)
    return filler


def test_a_write_to_a_full_disk_says_the_disk_is_full_and_the_stores_recover(small_disk):
    """SQLite rolls a transaction back itself on SQLITE_FULL: the stores' own ROLLBACK then
    failed with 'cannot rollback - no transaction is active', which hid what happened."""
    cache = ResultStore(small_disk / "c.sqlite")
    runs = RunStore(cache.db)
    filler = fill(small_disk)
    rows = [(os.urandom(16), b'{"score": 1.0, "status": "ok"}' + os.urandom(2000).hex().encode()) for _ in range(200)]
    with pytest.raises(sqlite3.OperationalError, match="full"):
        cache.put_encoded("h", rows)
    with pytest.raises(sqlite3.OperationalError, match="full"):
        runs.record_rows("run", [(i, {"text": "z" * 2000}) for i in range(200)])
    filler.unlink()  # space again: both stores write, nothing of the failed writes is there
    assert cache.put_encoded("h", rows[:3]) == 3
    assert cache.stats().rows == 3 and cache.integrity_check() == "ok"
    cache.close()


def test_the_server_on_a_full_disk_answers_uncached_counts_it_and_resumes_a_run(small_disk, tmp_path):
    spec = tmp_path / "slow.toml"
    spec.write_text(SPEC)
    port, cache = free_port(), small_disk / "cache.sqlite"
    url = f"http://127.0.0.1:{port}"
    n = 1500
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"response": f"row {i} " + "w" * (i % 13)}) + "\n" for i in range(n)))
    out, runs = tmp_path / "scored.jsonl", RunStore(tmp_path / "runs.sqlite")
    options = ScoreFileOptions(record_every=100)
    log = tmp_path / "server.log"
    server = _start_server(spec, port, cache, stderr=log)
    fill(small_disk)
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            for k in range(3):  # the same rows again: computed again (nothing could be cached)
                rows = [{"response": "a" * i} for i in range(150)]
                reply = client.post("/v1/rewards/slow:score", json={"samples": rows})
                assert reply.status_code == 200, reply.text[:300]
                assert [r["score"] for r in reply.json()["results"]] == pytest.approx([i / 100 for i in range(150)])
                assert reply.json()["cached"] == 0, k
                want = 150 * (k + 1)
                assert wait_for(lambda want=want: metric(client, "rewardlab_cache_write_failures_total") >= want)
            assert metric(client, "rewardlab_cache_write_failures_total") == 450
            assert metric(client, "rewardlab_cache_hits_total") == 0
            assert client.get("/readyz").status_code == 200 and client.get("/healthz").status_code == 200
        text = log.read_text()
        assert "could not be written to the cache" in text and "full" in text

        executor = RemoteExecutor(url, "slow", retries=1, backoff=0.05)
        spec_hash = executor.spec_hash()
        failure: dict[str, BaseException] = {}

        def first_run() -> None:
            try:
                score_file_resumable(executor, data, out, store=runs, spec_hash=spec_hash, options=options)
            except ServerError as exc:
                failure["error"] = exc

        thread = threading.Thread(target=first_run)
        thread.start()
        assert wait_for(lambda: sum(n for _, n in runs._db.execute("SELECT run_id, COUNT(*) FROM run_rows GROUP BY run_id")) >= 300)
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        thread.join(60)
        assert "error" in failure, "the first run should fail when its server is killed"

        server = _start_server(spec, port, cache, stderr=log)  # the disk is still full
        summary, _ = score_file_resumable(executor, data, out, store=runs, spec_hash=spec_hash, options=options)
        assert summary.rows == n
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert [row["source_line"] for row in lines] == list(range(1, n + 1))  # each row once, in order
        assert all(row["reward"] == len(row["response"]) / 100 for row in lines)
        with httpx.Client(base_url=url, timeout=60) as client:
            assert wait_for(lambda: metric(client, "rewardlab_cache_write_failures_total") > 0)
        executor.close()
    finally:
        server.kill()
        server.wait()


def _start_server(spec: Path, port: int, cache: Path, *, stderr: Path) -> subprocess.Popen[bytes]:
    """`rewardlab serve` with the test rewards, its log appended to `stderr`, once ready."""
    argv = ["serve", str(spec), "--port", str(port), "--cache", str(cache), "--workers", "1", "--log-level", "warning"]
    code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import _rewards; _rewards.register_all(); "
        f"from rewardlab.cli.main import main; sys.exit(main({argv!r}))"
    )
    with stderr.open("ab") as sink:
        proc = subprocess.Popen([sys.executable, "-c", code], stderr=sink)
    ready = lambda: proc.poll() is None and _ready(f"http://127.0.0.1:{port}/readyz")  # noqa: E731
    if not wait_for(ready, 60):
        proc.kill()
        raise RuntimeError(f"server did not start: {stderr.read_text()[-2000:]}")
    return proc


def _ready(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def wait_for(condition, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def metric(client: httpx.Client, name: str) -> float:
    lines = [line for line in client.get("/metrics").text.splitlines() if line.startswith(name + "{")]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines)
