"""`--openrlhf-trusted-network` trusts the socket peer, never a header it sent: a loopback client
that claims `X-Forwarded-For: 10.1.2.3` is not in 10.0.0.0/8. Only proxies the operator names
with `--forwarded-allow-ips` are believed. Through the public path: `rewardlab serve` in a
process of its own, queried over its socket."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from ._live import free_port
from ._rewards import EXACT_SPEC

pytestmark = pytest.mark.network

BODY = {"query": ["2+2? 4"], "prompts": ["2+2? "], "labels": ["4"]}
SPOOFED = {"X-Forwarded-For": "10.1.2.3"}


@contextmanager
def _served(tmp_path: Path, *options: str) -> Iterator[str]:
    spec = tmp_path / "exact.toml"
    spec.write_text(EXACT_SPEC)
    port = free_port()
    argv = ["serve", str(spec), "--port", str(port), "--workers", "0", "--no-cache", "--openrlhf-error-reward", "-1",
            "--token", "s3cret", "--openrlhf-trusted-network", "10.0.0.0/8", "--log-level", "warning", *options]  # fmt: skip
    code = f"import sys; from rewardlab.cli.main import main; sys.exit(main({argv!r}))"
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"rewardlab serve exited with {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)  # polling towards a deadline: a slow start only waits longer
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


@pytest.mark.slow
def test_loopback_client_claiming_a_trusted_address_is_refused(tmp_path: Path) -> None:
    with _served(tmp_path) as url:
        spoofed = httpx.post(f"{url}/get_reward", json=BODY, headers=SPOOFED, timeout=30)
        assert spoofed.status_code in (401, 403), spoofed.text
        assert "127.0.0.1" in spoofed.text  # the address checked is the socket's
        honest = httpx.post(f"{url}/openrlhf/s3cret/get_reward", json=BODY, timeout=30)
        assert honest.status_code == 200 and honest.json()["rewards"] == [1.0]


@pytest.mark.slow
def test_a_named_proxy_is_believed(tmp_path: Path) -> None:
    with _served(tmp_path, "--forwarded-allow-ips", "127.0.0.1") as url:
        via_proxy = httpx.post(f"{url}/get_reward", json=BODY, headers=SPOOFED, timeout=30)
        assert via_proxy.status_code == 200 and via_proxy.json()["rewards"] == [1.0]
        direct = httpx.post(f"{url}/get_reward", json=BODY, timeout=30)
        assert direct.status_code in (401, 403)
