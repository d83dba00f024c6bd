"""The FastAPI app, in-process through httpx's ASGITransport."""

from __future__ import annotations

import asyncio
import json

from rewardlab.core import RewardResult, Sample
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore
from rewardlab.verify.text import ExactMatch

from ._live import asgi_client, run
from ._rewards import Gated, Length, Slow

INLINE = ServeSettings(workers=0)


def _rows(n: int, prefix: str = "r") -> list[dict]:
    return [{"prompt": "q", "response": f"{prefix}{'x' * (i % 7)}{i}", "reference": str(i)} for i in range(n)]


def test_score_returns_one_stamped_result_per_sample_in_order(make_app):
    reward = Length()
    app = make_app({"len": reward}, None, INLINE)

    async def go():
        async with asgi_client(app) as c:
            return await c.post("/v1/rewards/len:score", json={"samples": _rows(50)})

    r = run(go())
    assert r.status_code == 200
    body = r.json()
    expected = [reward.score(Sample.from_dict(row)).score for row in _rows(50)]
    assert [x["score"] for x in body["results"]] == expected
    assert all(x["spec_hash"] == body["spec_hash"] and x["rewardlab_version"] for x in body["results"])


def test_composite_results_carry_components(make_app):
    from rewardlab.compose import build

    spec = """
    [reward]
    name = "combo"
    [[reward.components]]
    name = "exact"
    use = "text.exact"
    weight = 1.0
    [[reward.components]]
    name = "tags"
    use = "format.tags"
    weight = 0.5
    """
    reward = build(spec)
    app = make_app({"combo": reward}, None, INLINE)

    async def go():
        async with asgi_client(app) as c:
            return await c.post("/v1/rewards/combo:score", json={"samples": [{"response": "4", "reference": "4"}]})

    result = RewardResult.from_dict(run(go()).json()["results"][0])
    local = reward.score(Sample(response="4", reference="4"))
    assert result.score == local.score
    assert set(result.components) == {"exact", "tags"}


def test_second_request_is_served_from_the_cache(make_app, tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    app = make_app({"len": Length()}, store, INLINE)

    async def go():
        async with asgi_client(app) as c:
            first = await c.post("/v1/rewards/len:score", json={"samples": _rows(20)})
            second = await c.post("/v1/rewards/len:score", json={"samples": _rows(20)})
            bypass = await c.post("/v1/rewards/len:score", json={"samples": _rows(20), "use_cache": False})
            metrics = await c.get("/metrics")
            return first.json(), second.json(), bypass.json(), metrics.text

    first, second, bypass, metrics = run(go())
    assert (first["cached"], second["cached"], bypass["cached"]) == (0, 20, 0)
    assert first["results"] == second["results"] == bypass["results"]
    assert 'rewardlab_cache_hits_total{reward="len"} 20.0' in metrics


def test_duplicate_samples_in_one_request_each_get_a_result(make_app):
    app = make_app({"len": Length()}, None, INLINE)
    rows = [{"response": "same"}] * 5 + [{"response": "other"}]

    async def go():
        async with asgi_client(app) as c:
            return (await c.post("/v1/rewards/len:score", json={"samples": rows})).json()

    assert [r["score"] for r in run(go())["results"]] == [0.04] * 5 + [0.05]


def test_requests_from_many_clients_are_batched_together(make_app):
    app = make_app({"slow": Slow(delay=0.002)}, None, ServeSettings(workers=0, max_wait_ms=20, concurrency=1))

    async def go():
        async with asgi_client(app) as c:
            replies = await asyncio.gather(
                *(c.post("/v1/rewards/slow:score", json={"samples": _rows(4, prefix=f"c{k}")}) for k in range(16))
            )
            return replies, (await c.get("/metrics")).text

    replies, metrics = run(go())
    for k, reply in enumerate(replies):  # each client gets its own rows back, in order
        assert [r["score"] for r in reply.json()["results"]] == [Length().compute(Sample.from_dict(x)) for x in _rows(4, prefix=f"c{k}")]
    count = next(float(line.split()[-1]) for line in metrics.splitlines() if line.startswith('rewardlab_batch_size_count{reward="slow"}'))
    assert count < 16  # 64 samples from 16 requests went out in fewer backend batches


def test_get_rewards_lists_specs_with_schemas(make_app):
    app = make_app({"len": Length(), "exact": ExactMatch()}, None, INLINE)

    async def go():
        async with asgi_client(app) as c:
            return (await c.get("/v1/rewards")).json(), (await c.get("/openapi.json")).json()

    listing, openapi = run(go())
    names = {r["name"]: r for r in listing["rewards"]}
    assert set(names) == {"len", "exact"}
    assert names["exact"]["range"] == [0.0, 1.0]
    assert "response" in names["exact"]["sample_schema"]["properties"]
    assert {"/v1/rewards/{name}:score", "/get_reward", "/healthz", "/readyz", "/metrics"} <= set(openapi["paths"])
    assert "ScoreRequest" in openapi["components"]["schemas"]


def test_health_ready_and_metrics(make_app):
    app = make_app({"len": Length()}, None, INLINE)

    async def go():
        async with asgi_client(app) as c:
            await c.post("/v1/rewards/len:score", json={"samples": _rows(3)})
            return [await c.get(p) for p in ("/healthz", "/readyz", "/metrics")]

    health, ready, metrics = run(go())
    assert health.json()["status"] == "ok"
    assert ready.json() == {"ready": True, "queued": {"len": 0}}
    text = metrics.text
    assert 'rewardlab_samples_total{reward="len",status="ok"} 3.0' in text
    assert 'rewardlab_requests_total{code="200",route="/v1/rewards/{name}:score"} 1.0' in text
    assert "rewardlab_request_seconds_bucket" in text and "rewardlab_queue_depth" in text


def test_openrlhf_get_reward_maps_query_prompt_and_label(make_app):
    app = make_app({"exact": ExactMatch()}, None, ServeSettings(workers=0, openrlhf_error_reward=0.0))
    body = {
        "query": ["<|user|>2+2?<|assistant|>4", "<|user|>3+3?<|assistant|>7"],
        "prompts": ["<|user|>2+2?<|assistant|>", "<|user|>3+3?<|assistant|>"],
        "labels": ["4", "6"],
    }

    async def go():
        async with asgi_client(app) as c:
            return await c.post("/get_reward", json=body)

    reply = run(go())
    assert reply.status_code == 200
    data = reply.json()
    assert data["rewards"] == data["scores"] == [1.0, 0.0]
    assert data["extra_logs"]["rewardlab/error"] == [0.0, 0.0]


def test_openrlhf_needs_an_error_reward_and_sends_it_for_failed_rows(make_app):
    from ._rewards import Faulty

    body = {"query": ["ok", "raise"], "prompts": ["", ""], "labels": [None, None]}

    async def go(settings):
        app = make_app({"f": Faulty()}, None, settings)
        async with asgi_client(app) as c:
            return await c.post("/get_reward", json=body)

    refused = run(go(INLINE))  # OpenRLHF cannot handle a refused batch: refuse until configured
    assert refused.status_code == 500
    error = refused.json()["error"]
    assert error["code"] == "openrlhf_not_configured" and "--openrlhf-error-reward" in error["message"]
    sent = run(go(ServeSettings(workers=0, openrlhf_error_reward=-1.0))).json()
    assert sent["rewards"] == [0.02, -1.0]
    assert sent["extra_logs"]["rewardlab/error"] == [0.0, 1.0]
    assert sent["statuses"] == ["ok", "error"]


def test_backpressure_gives_429_with_retry_after(make_app):
    gated = Gated()
    app = make_app({"slow": gated}, None, ServeSettings(workers=0, max_queue=8, max_batch=4, concurrency=1))

    async def go():
        async with asgi_client(app) as c:
            first = asyncio.create_task(c.post("/v1/rewards/slow:score", json={"samples": _rows(8)}))
            assert await asyncio.to_thread(gated.entered.wait, 30)  # the first 8 are queued
            second = await c.post("/v1/rewards/slow:score", json={"samples": _rows(8, prefix="b")})
            gated.release.set()
            return await first, second

    first, second = run(go())
    assert first.status_code == 200 and len(first.json()["results"]) == 8
    assert second.status_code == 429
    assert second.json()["error"]["code"] == "overloaded" and int(second.headers["retry-after"]) >= 1


def test_request_timeout_gives_504_and_the_work_is_cached(make_app, tmp_path):
    store = ResultStore(tmp_path / "c.sqlite")
    gated = Gated()  # the work cannot finish before the request times out
    app = make_app({"slow": gated}, store, ServeSettings(workers=0, request_timeout=0.05))

    async def go():
        async with asgi_client(app) as c:
            late = await c.post("/v1/rewards/slow:score", json={"samples": _rows(1)})
            gated.release.set()  # now let the work finish; its result is cached all the same
            deadline = asyncio.get_running_loop().time() + 30
            while store.stats().rows < 1 and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
            return late

    late = run(go())
    assert late.status_code == 504 and late.json()["error"]["code"] == "timeout"
    assert store.stats().rows == 1


def test_json_of_a_reply_round_trips_to_reward_results(make_app):
    app = make_app({"len": Length()}, None, INLINE)

    async def go():
        async with asgi_client(app) as c:
            return (await c.post("/v1/rewards/len:score", json={"samples": _rows(2)})).content

    rows = json.loads(run(go()))["results"]
    assert [RewardResult.from_dict(r).score for r in rows] == [Length().compute(Sample.from_dict(x)) for x in _rows(2)]


def test_per_reward_limits_apply_to_their_reward_only(make_app):
    from rewardlab.serve.settings import RewardLimits

    settings = ServeSettings(workers=0, max_batch=4, concurrency=1, per_reward={"slow": RewardLimits(max_queue=8)})
    gates = {"slow": Gated(), "other": Gated()}
    app = make_app(dict(gates), None, settings)

    async def go(name: str):
        async with asgi_client(app) as c:
            first = asyncio.create_task(c.post(f"/v1/rewards/{name}:score", json={"samples": _rows(8)}))
            assert await asyncio.to_thread(gates[name].entered.wait, 30)  # the first 8 are queued
            second = asyncio.create_task(c.post(f"/v1/rewards/{name}:score", json={"samples": _rows(8, prefix="b")}))
            if name == "slow":  # refused at once, while the first request still holds the queue
                await asyncio.wait({second})
            gates[name].release.set()
            return (await first).status_code, (await second).status_code

    assert run(go("slow")) == (200, 429)
    assert run(go("other")) == (200, 200)


def test_per_reward_settings_for_an_unserved_name_are_refused():
    import pytest

    from rewardlab.errors import UsageError
    from rewardlab.serve.app import create_app
    from rewardlab.serve.settings import RewardLimits

    with pytest.raises(UsageError, match="not served"):
        create_app({"len": Length()}, None, ServeSettings(workers=0, per_reward={"lenn": RewardLimits(workers=1)}))


def test_readyz_is_503_while_shutting_down(make_app):
    app = make_app({"len": Length()}, None, INLINE)

    async def go():
        async with asgi_client(app) as c:
            await app.state.service.aclose()
            return await c.get("/readyz"), await c.post("/v1/rewards/len:score", json={"samples": _rows(1)})

    ready, scored = run(go())
    assert ready.status_code == 503 and scored.status_code == 503
    assert scored.json()["error"]["code"] == "shutting_down"


def test_scores_reply_gives_the_totals_statuses_and_errors_as_columns(make_app, tmp_path):
    from ._rewards import Faulty

    rows = _rows(6)
    rows[2]["response"] = "raise"  # the reward raises on this row: an error, never a number
    app = make_app({"f": Faulty()}, ResultStore(tmp_path / "c.sqlite"), INLINE)

    async def go():
        async with asgi_client(app) as c:
            full = await c.post("/v1/rewards/f:score", json={"samples": rows})
            first = await c.post("/v1/rewards/f:score", json={"samples": rows, "reply": "scores", "use_cache": False})
            cached = await c.post("/v1/rewards/f:score", json={"samples": rows, "reply": "scores"})
            bad = await c.post("/v1/rewards/f:score", json={"samples": rows, "reply": "everything"})
            return full, first, cached, bad

    full, first, cached, bad = run(go())
    results = full.json()["results"]
    for reply in (first, cached):
        body = reply.json()
        assert body["scores"] == [r["score"] for r in results]
        assert body["scores"][2] is None and body["statuses"][2] == "error"
        assert body["statuses"] == [r["status"] for r in results]
        assert body["errors"] == [{"row": 2, "kind": "crash", "message": results[2]["error"]["message"]}]
        assert body["spec_hash"] == full.json()["spec_hash"] and body["rewardlab_version"]
    assert (first.json()["cached"], cached.json()["cached"]) == (0, 5)  # errors are never cached
    assert bad.status_code == 422 and "reply" in bad.json()["error"]["message"]
