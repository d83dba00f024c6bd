"""Bad requests: each a clear 4xx with a machine-readable error, and the server stays up."""

from __future__ import annotations

import time

import pytest

from rewardlab.serve.settings import ServeSettings

from ._live import asgi_client, run
from ._rewards import Length

SETTINGS = ServeSettings(workers=0, token="s3cret", max_samples=10, max_body_bytes=4096)
AUTH = {"Authorization": "Bearer s3cret"}


def _call(app, method: str, path: str, **kwargs):
    async def go():
        async with asgi_client(app) as c:
            bad = await c.request(method, path, **kwargs)
            good = await c.post("/v1/rewards/len:score", json={"samples": [{"response": "ok"}]}, headers=AUTH)
            return bad, good

    bad, good = run(go())
    assert good.status_code == 200, "the server must keep serving after a bad request"
    return bad.status_code, bad.json()["error"]


@pytest.fixture
def app(make_app):
    return make_app({"len": Length()}, None, SETTINGS)


def test_malformed_json_is_400(app):
    status, error = _call(app, "POST", "/v1/rewards/len:score", content=b'{"samples": [', headers={**AUTH, "Content-Type": "application/json"})
    assert (status, error["code"]) == (400, "malformed_json")


def test_integers_beyond_64_bits_are_read_and_beyond_4300_digits_are_400(make_app):
    app = make_app({"len": Length()}, None, ServeSettings(workers=0, token="s3cret"))
    wide = b'{"samples": [{"response": "ok", "meta": {"id": 123456789012345678901234567890}}]}'  # valid JSON orjson refuses
    ok = run(_post(app, wide))
    assert ok.status_code == 200 and ok.json()["results"][0]["status"] == "ok"
    status, error = _call(app, "POST", "/v1/rewards/len:score", content=b'{"samples": [{"response": "ok", "meta": %s}]}' % (b"9" * 5000),
                          headers={**AUTH, "Content-Type": "application/json"})  # fmt: skip
    assert (status, error["code"]) == (400, "malformed_json") and "write such a number as a string" in error["message"]


async def _post(app, body: bytes):
    async with asgi_client(app) as c:
        return await c.post("/v1/rewards/len:score", content=body, headers={**AUTH, "Content-Type": "application/json"})


def test_wrong_type_is_422_naming_the_field(app):
    status, error = _call(app, "POST", "/v1/rewards/len:score", json={"samples": [{"response": 5}]}, headers=AUTH)
    assert (status, error["code"]) == (422, "invalid_request")
    assert error["details"][0]["loc"][:4] == ["body", "samples", 0, "response"]


def test_missing_field_is_422(app):
    status, error = _call(app, "POST", "/v1/rewards/len:score", json={"samples": [{"prompt": "no response"}]}, headers=AUTH)
    assert status == 422 and "response" in error["message"]


def test_unknown_top_level_key_is_422(app):
    status, error = _call(app, "POST", "/v1/rewards/len:score", json={"sample": []}, headers=AUTH)
    assert (status, error["code"]) == (422, "invalid_request")


def test_unknown_reward_is_404_with_suggestion(app):
    status, error = _call(app, "POST", "/v1/rewards/lenn:score", json={"samples": []}, headers=AUTH)
    assert (status, error["code"]) == (404, "unknown_reward")
    assert "did you mean 'len'" in error["message"] and error["details"] == ["len"]


def test_oversize_body_is_413(app):
    rows = [{"response": "x" * 1000} for _ in range(8)]
    status, error = _call(app, "POST", "/v1/rewards/len:score", json={"samples": rows}, headers=AUTH)
    assert (status, error["code"]) == (413, "body_too_large")


def test_oversize_chunked_body_without_length_is_413(app):
    async def chunks():
        yield b'{"samples": ['
        for _ in range(10):
            yield b'{"response": "' + b"x" * 1000 + b'"},'
        yield b'{"response": "end"}]}'

    status, error = _call(app, "POST", "/v1/rewards/len:score", content=chunks(), headers={**AUTH, "Content-Type": "application/json"})
    assert (status, error["code"]) == (413, "body_too_large")


def test_too_many_samples_is_413(app):
    status, error = _call(app, "POST", "/v1/rewards/len:score", json={"samples": [{"response": "a"}] * 11}, headers=AUTH)
    assert (status, error["code"]) == (413, "too_many_samples")


def test_missing_token_is_401(app):
    status, error = _call(app, "POST", "/v1/rewards/len:score", json={"samples": []})
    assert (status, error["code"]) == (401, "unauthorized")
    assert "missing bearer token" in error["message"]


def test_invalid_token_is_401(app):
    status, error = _call(app, "GET", "/v1/rewards", headers={"Authorization": "Bearer wrong"})
    assert (status, error["code"]) == (401, "unauthorized")


def test_openrlhf_lists_of_different_lengths_are_422(app):
    body = {"query": ["a", "b"], "prompts": ["a"], "labels": ["1", "2"]}
    status, error = _call(app, "POST", "/get_reward", json=body, headers=AUTH)
    assert status == 422 and "'prompts' has 1 entries for 2 queries" in error["message"]


def test_unknown_path_is_404_json(app):
    status, error = _call(app, "GET", "/nope")
    assert (status, error["code"]) == (404, "not_found")


def test_health_needs_no_token(app):
    async def go():
        async with asgi_client(app) as c:
            return await c.get("/healthz")

    assert run(go()).status_code == 200


@pytest.mark.network
@pytest.mark.parametrize("path", ["/v1/rewards/len:score", "/get_reward"])
def test_a_client_that_hangs_up_mid_body_is_a_counted_400_not_a_server_error(make_app, path):
    import socket

    import httpx

    from ._live import LiveServer

    app = make_app({"len": Length()}, None, ServeSettings(workers=0))
    with LiveServer(app) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
            head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            s.sendall(head.encode() + b'{"samples": [')  # 13 of the 1,000 bytes promised
        with httpx.Client(base_url=server.url, timeout=10) as client:
            route = path if path == "/get_reward" else "/v1/rewards/{name}:score"
            counted = f'rewardlab_requests_total{{code="400",route="{route}"}} 1.0'
            deadline = time.monotonic() + 10
            while counted not in (metrics := client.get("/metrics").text) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert counted in metrics
            assert 'code="500"' not in metrics
            assert client.post("/v1/rewards/len:score", json={"samples": [{"response": "ok"}]}).status_code == 200


@pytest.mark.parametrize("path", ["/v1/rewards/len:score", "/get_reward"])
def test_a_body_that_is_not_utf8_is_400_naming_the_byte_never_read_with_replacements(app, path):
    body = b'{"samples": [{"response": "caf\xe9"}]}' if path.startswith("/v1") else b'{"query": ["caf\xe9"], "prompts": [""]}'
    status, error = _call(app, "POST", path, content=body, headers={**AUTH, "Content-Type": "application/json"})
    assert (status, error["code"]) == (400, "malformed_json")
    assert "not valid UTF-8 (byte 0xe9 at position" in error["message"]


def test_a_lone_surrogate_is_scored_cached_and_answered_as_its_escape(make_app, tmp_path):
    from rewardlab.store import ResultStore
    from rewardlab.verify.text import ExactMatch

    app = make_app({"exact": ExactMatch()}, ResultStore(tmp_path / "c.sqlite"), ServeSettings(workers=0))
    body = b'{"samples": [{"response": "cut \\ud83d", "reference": "cut \\ud83d"}]}'  # JSON escapes

    async def go():
        async with asgi_client(app) as c:
            replies = [await c.post("/v1/rewards/exact:score", content=body, headers={"Content-Type": "application/json"}) for _ in range(2)]
        await app.state.service.aclose()
        return replies

    first, second = run(go())
    assert first.status_code == second.status_code == 200, first.text
    assert [r.json()["cached"] for r in (first, second)] == [0, 1]
    for reply in (first, second):
        result = reply.json()["results"][0]
        assert (result["score"], result["info"]["extracted"]) == (1.0, "cut \ud83d")


@pytest.mark.network
def test_the_client_sends_a_lone_surrogate_as_its_escape(make_app):
    from rewardlab.serve.client import Client
    from rewardlab.verify.text import ExactMatch

    from ._live import LiveServer

    app = make_app({"exact": ExactMatch()}, None, ServeSettings(workers=0))
    cut = "cut \ud83d"  # a text cut inside a surrogate pair: orjson refuses to write it
    with LiveServer(app) as server, Client(server.url) as client:
        results = client.score("exact", [{"response": cut, "reference": cut}, {"response": "b", "reference": "a"}])
    assert [r.score for r in results] == [1.0, 0.0]
    assert results[0].info["extracted"] == cut
