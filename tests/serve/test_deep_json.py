"""JSON nested past any parser's depth is bad input (400), in-process and over a real socket,
and the server keeps serving; so is deep JSON inside a code reference (`invalid_input`)."""

from __future__ import annotations

import httpx
import pytest

from rewardlab.compose import build
from rewardlab.serve.settings import ServeSettings

from ._live import LiveServer, asgi_client, run
from ._rewards import Length

DEEP = 100_000
BODIES = {
    "body": b"[" * DEEP + b"]" * DEEP,
    "reference": b'{"samples": [{"response": "x", "reference": ' + b"[" * DEEP + b"]" * DEEP + b"}]}",
    "just past orjson": b'{"samples": [{"response": "x", "reference": ' + b"[" * 3000 + b"]" * 3000 + b"}]}",
}
JSON = {"Content-Type": "application/json"}
OK = {"samples": [{"response": "ok"}]}


@pytest.fixture
def app(make_app):
    return make_app({"len": Length()}, None, ServeSettings(workers=0, max_body_bytes=1 << 20))


@pytest.mark.parametrize("where", sorted(BODIES))
def test_deep_json_body_is_400_in_process(app, where: str) -> None:
    async def go():
        async with asgi_client(app) as c:
            return await c.post("/v1/rewards/len:score", content=BODIES[where], headers=JSON), await c.post("/v1/rewards/len:score", json=OK)

    bad, good = run(go())
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "invalid_input"), bad.text
    assert "nested too deeply" in bad.json()["error"]["message"]
    assert good.status_code == 200


@pytest.mark.network
def test_deep_json_body_is_400_over_a_socket(app) -> None:
    with LiveServer(app) as server:
        for body in BODIES.values():
            bad = httpx.post(f"{server.url}/v1/rewards/len:score", content=body, headers=JSON, timeout=30)
            assert bad.status_code == 400, bad.text
        assert httpx.post(f"{server.url}/v1/rewards/len:score", json=OK, timeout=30).status_code == 200


@pytest.mark.network
def test_deep_json_in_public_test_cases_is_invalid_input_over_a_socket(make_app) -> None:
    code = build({"reward": {"name": "code", "components": [{"name": "tests", "use": "code.tests", "params": {"workers": 1}}]}})
    app = make_app({"code": code}, None, ServeSettings(workers=0))
    reference = {"public_test_cases": "[" * 5000 + "]" * 5000}
    with LiveServer(app) as server:
        reply = httpx.post(f"{server.url}/v1/rewards/code:score", json={"samples": [{"response": "print(1)", "reference": reference}]}, timeout=60)
    assert reply.status_code == 200, reply.text
    result = reply.json()["results"][0]
    tests = result["components"]["tests"]
    assert tests["status"] == "error" and tests["error"]["kind"] == "invalid_input", tests
