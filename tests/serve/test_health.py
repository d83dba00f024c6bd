"""Health that tells the truth (liveness vs readiness) and a SIGTERM that drains within its
bound, against a real `rewardlab serve` process over a real socket."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from rewardlab.serve.settings import ServeSettings

from ._live import LiveServer, free_port
from ._rewards import Faulty

pytestmark = [pytest.mark.network, pytest.mark.slow]

HERE = Path(__file__).parent
SPEC = '[reward]\nname = "faulty"\n[[reward.components]]\nname = "f"\nuse = "test.faulty"\n'


def _serve(tmp_path: Path, *options: str) -> tuple[subprocess.Popen[bytes], str]:
    """`rewardlab serve` with the test rewards registered, in a child process; its URL once ready."""
    spec = tmp_path / "faulty.toml"
    spec.write_text(SPEC)
    port = free_port()
    argv = ["serve", str(spec), "--port", str(port), "--no-cache", "--log-level", "warning", *options]
    code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import _rewards; _rewards.register_all(); "
        f"from rewardlab.cli.main import main; sys.exit(main({argv!r}))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "server exited")
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def _wait_for(condition, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_hung_batch_fails_readiness_then_liveness_and_sigterm_still_stops_the_server(tmp_path):
    """One batch slot (`--concurrency 1`), a sample that sleeps past the request timeout with no
    per-sample kill in sight: the request gets 504, `/readyz` and `/healthz` turn 503 (they said
    200 for ever), and SIGTERM stops the process within the drain bound (it never exited)."""
    proc, url = _serve(
        tmp_path, "--workers", "1", "--timeout", "3600", "--request-timeout", "1", "--concurrency", "1", "--drain-timeout", "2",
    )  # fmt: skip
    try:
        assert httpx.get(f"{url}/healthz").status_code == 200
        reply = httpx.post(f"{url}/v1/rewards/faulty:score", json={"samples": [{"response": "sleep"}]}, timeout=30)
        assert reply.status_code == 504
        assert _wait_for(lambda: httpx.get(f"{url}/readyz").status_code == 503)
        ready = httpx.get(f"{url}/readyz").json()["error"]
        assert ready["code"] == "not_ready" and ready["details"][0]["stuck"] == 1
        live = httpx.get(f"{url}/healthz")
        assert live.status_code == 503 and live.json()["error"]["code"] == "wedged"
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) in (0, -signal.SIGTERM)
        assert time.monotonic() - started < 15  # drain bound 2 s, plus closing the pool and the interpreter
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigterm_stops_an_idle_server_promptly(tmp_path):
    proc, url = _serve(tmp_path, "--workers", "1", "--drain-timeout", "20")
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            assert client.post("/v1/rewards/faulty:score", json={"samples": [{"response": "ab"}]}).json()["results"][0]["score"] == 0.02
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) in (0, -signal.SIGTERM)
        assert time.monotonic() - started < 10  # nothing to drain: the bound is not waited out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_worker_killed_while_idle_costs_no_row_and_the_server_stays_ready(make_app):
    """kill -9 of an idle pool worker (the OOM killer, an operator): the next request's rows are
    all scored (none blamed for a death it did not cause), and health stays 200 throughout."""
    app = make_app({"faulty": Faulty()}, None, ServeSettings(workers=2, sample_timeout=30))
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        rows = [{"response": "x" * (i % 7)} for i in range(40)]
        assert [r["score"] for r in client.post("/v1/rewards/faulty:score", json={"samples": rows}).json()["results"]] == [
            (i % 7) / 100 for i in range(40)
        ]
        pool = app.state.service.hosted["faulty"].batcher.executor.pool._pool
        victim = pool._workers[0].process
        psutil.Process(victim.pid).kill()
        victim.join(10)
        assert not victim.is_alive()
        assert client.get("/readyz").status_code == 200 and client.get("/healthz").status_code == 200
        results = client.post("/v1/rewards/faulty:score", json={"samples": rows[::-1]}).json()["results"]
        assert [r["status"] for r in results] == ["ok"] * 40
        assert [r["score"] for r in results] == [(i % 7) / 100 for i in range(40)][::-1]
        assert client.get("/readyz").status_code == 200
