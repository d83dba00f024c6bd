"""Values nested too deep for the process boundary or the JSON parser: a typed answer for the
row (or a typed 400 for the body), and the server goes on serving, in process and over a socket."""

from __future__ import annotations

import httpx
import pytest

from deadlines import nested, within_deadline
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore
from rewardlab.verify.text import ExactMatch

from ._live import LiveServer, asgi_client, run

SCORE = "/v1/rewards/exact:score"


def _deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("route", [SCORE, "/get_reward"])
def test_json_nested_deeper_than_the_parser_allows_is_a_typed_400(make_app, route):
    app = make_app({"exact": ExactMatch()}, None, ServeSettings(workers=0, openrlhf_error_reward=-1.0))
    deep = _deep_json(5000)
    body = f'{{"samples": [{{"response": "a", "reference": {deep}}}]}}' if route == SCORE else f'{{"query": ["q a"], "labels": [{deep}]}}'

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with asgi_client(app) as client:
            refused = await client.post(route, content=body, headers={"content-type": "application/json"})
            after = await client.post(SCORE, json={"samples": [{"response": "a", "reference": "a"}]})
            return refused, after

    refused, after = run(go())
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "invalid_input" and "nested too deeply" in error["message"]
    assert after.status_code == 200 and after.json()["results"][0]["score"] == 1.0


def test_openrlhf_body_of_the_wrong_shape_is_still_a_422_naming_the_field(make_app):
    app = make_app({"exact": ExactMatch()}, None, ServeSettings(workers=0, openrlhf_error_reward=-1.0))

    async def go() -> httpx.Response:
        async with asgi_client(app) as client:
            return await client.post("/get_reward", json={"query": "not a list"})

    reply = run(go())
    assert reply.status_code == 422
    assert reply.json()["error"]["details"][0]["loc"] == ["body", "query"]


@pytest.mark.network
def test_values_too_deep_to_pickle_are_their_rows_errors_and_the_pool_keeps_serving(make_app, tmp_path):
    """Over a real socket, on the worker-pool backend with the cache: a `/get_reward` label and a
    score request's `meta` nested 500 deep are each that row's typed error (the pool used to
    wedge: every later uncached request hung), and later uncached requests are answered."""
    settings = ServeSettings(workers=2, sample_timeout=30, openrlhf_error_reward=-1.0, request_timeout=30)
    cache = ResultStore(tmp_path / "cache.sqlite")
    app = make_app({"exact": ExactMatch()}, cache, settings)
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        openrlhf = within_deadline(client.post, "/get_reward", json={"query": ["q a"], "prompts": ["q"], "labels": [nested(500, "a")]})
        assert openrlhf.status_code == 200
        assert openrlhf.json()["statuses"] == ["error"] and openrlhf.json()["extra_logs"]["rewardlab/error"] == [1.0]
        samples = [{"response": "a", "reference": "a", "meta": {"m": nested(500)}}, {"response": "b", "reference": "b"}]
        scored = within_deadline(client.post, SCORE, json={"samples": samples})
        assert scored.status_code == 200
        first, second = scored.json()["results"]
        assert first["status"] == "error" and first["error"]["kind"] == "invalid_input"
        assert "nested too deep" in first["error"]["message"]
        assert second["score"] == 1.0
        for i in range(3):  # uncached: each must reach a worker
            fresh = within_deadline(client.post, SCORE, json={"samples": [{"response": f"x{i}", "reference": f"x{i}"}]})
            assert fresh.status_code == 200 and fresh.json()["results"][0]["score"] == 1.0 and fresh.json()["cached"] == 0
        again = within_deadline(client.post, "/get_reward", json={"query": ["q a"], "prompts": ["q"], "labels": ["a"]})
        assert again.json()["rewards"] == [1.0]
        assert within_deadline(client.get, "/readyz").status_code == 200
    cache.close()


@pytest.mark.network
def test_a_value_too_deep_to_hash_for_the_cache_is_scored_and_not_cached(make_app, tmp_path):
    """A `meta` nested 1,000 deep parses (the limit is 1,024) but cannot be serialised for the
    cache key: it is computed, uncached, and the request is not a 500."""
    cache = ResultStore(tmp_path / "cache.sqlite")
    app = make_app({"exact": ExactMatch()}, cache, ServeSettings(workers=0))
    body = '{"samples": [{"response": "a", "reference": "a", "meta": {"m": ' + _deep_json(1000) + "}}]}"
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        for _ in range(2):
            reply = within_deadline(client.post, SCORE, content=body, headers={"content-type": "application/json"})
            assert reply.status_code == 200
            assert reply.json()["results"][0]["score"] == 1.0 and reply.json()["cached"] == 0
    cache.close()


@pytest.mark.network
def test_the_client_sends_values_deeper_than_orjson_writes(make_app):
    """orjson writes 254 levels and the server reads 1,024: `Client.score` with a `meta` 400 deep
    reaches the server (it raised TypeError before sending anything)."""
    from rewardlab.serve.client import Client

    app = make_app({"exact": ExactMatch()}, None, ServeSettings(workers=0))
    with LiveServer(app) as server, Client(server.url) as client:
        results = within_deadline(client.score, "exact", [{"response": "a", "reference": "a", "meta": {"m": nested(400)}}, {"response": "b", "reference": "a"}])
    assert [r.score for r in results] == [1.0, 0.0]
