"""The server's /docs page works offline: its Swagger UI comes from the package, not a CDN, and
renders the API in a real browser on a machine with no internet."""

from __future__ import annotations

import shutil
import subprocess

import httpx
import pytest

from rewardlab.serve.settings import ServeSettings

from ._live import LiveServer
from ._rewards import Length

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def live(make_app):
    with LiveServer(make_app({"length": Length()}, settings=ServeSettings(workers=0))) as server:
        yield server


@pytest.mark.network
def test_docs_page_loads_its_assets_from_the_server(live):
    page = httpx.get(f"{live.url}/docs", timeout=10)
    assert page.status_code == 200
    assert "cdn" not in page.text.lower() and "/static-offline-docs/swagger-ui-bundle.js" in page.text
    bundle = httpx.get(f"{live.url}/static-offline-docs/swagger-ui-bundle.js", timeout=10)
    assert bundle.status_code == 200 and len(bundle.content) > 500_000
    assert httpx.get(f"{live.url}/redoc", timeout=10).status_code == 200


@pytest.mark.network
@pytest.mark.slow
def test_docs_page_renders_the_api_in_a_browser_without_network(live, tmp_path):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium, or `make system-deps`)")
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000", "--dump-dom", f"{live.url}/docs",
    ]  # fmt: skip
    dom = subprocess.run(command, capture_output=True, text=True, timeout=120).stdout
    assert "opblock" in dom, dom[-2000:]  # Swagger UI drew the operations from /openapi.json
    assert "/healthz" in dom
