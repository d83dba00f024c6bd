"""Details of the serving hot path: cache writes follow `use_cache`, result rows equal
`RewardResult.to_dict()`, and the client decodes replies with `RewardResult.from_dict`."""

from __future__ import annotations

import httpx
import orjson
import pytest

from rewardlab.core import ErrorKind, RewardResult, Sample, Stamp, Status
from rewardlab.errors import ServerError
from rewardlab.serve.client import _results
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore
from rewardlab.store.cache import encode_result

from ._live import asgi_client, run
from ._rewards import Length


def _rows(n: int) -> list[dict]:
    return [{"prompt": "q", "response": f"r{i}"} for i in range(n)]


def test_use_cache_false_neither_reads_nor_writes(make_app, tmp_path):
    app = make_app({"len": Length()}, ResultStore(tmp_path / "c.sqlite"), ServeSettings(workers=0))

    async def go():
        async with asgi_client(app) as c:
            url = "/v1/rewards/len:score"
            bypass = await c.post(url, json={"samples": _rows(10), "use_cache": False})
            first = await c.post(url, json={"samples": _rows(10)})
            second = await c.post(url, json={"samples": _rows(10)})
            return bypass.json(), first.json(), second.json()

    bypass, first, second = run(go())
    assert (bypass["cached"], first["cached"], second["cached"]) == (0, 0, 10)
    assert bypass["results"] == first["results"] == second["results"]


RESULTS = [
    RewardResult.ok(0.5, info={"a": [1, 2]}, steps=(0.1, 0.2)),
    RewardResult.failure(ErrorKind.PARSE, "no answer", info={"x": 1}),
    RewardResult.skip("gate"),
    RewardResult.ok(1.0, components={"c": RewardResult.ok(1.0, info={"k": "v"})}).stamped("h"),
    RewardResult.ok(1.0, info={1: "non-string key", "o": object}),  # what orjson refuses -> str, as before
]


@pytest.mark.parametrize("result", RESULTS)
def test_result_rows_equal_to_dict(result):
    shared = result.to_dict(copy=False)  # the hot path's row: info and steps are the result's own
    assert shared == {**result.to_dict(), **({"steps": result.steps} if result.steps else {})}
    if result.info:
        assert shared["info"] is result.info and result.to_dict()["info"] is not result.info
    reference = orjson.dumps(result.to_dict(), default=str, option=orjson.OPT_NON_STR_KEYS)
    assert orjson.loads(encode_result(result)) == orjson.loads(reference)


@pytest.mark.parametrize("result", RESULTS[:-1])  # the last one's info is written with `str`
def test_an_encoded_result_decodes_to_an_equal_result(result):
    assert RewardResult.from_dict(orjson.loads(encode_result(result))) == result


@pytest.mark.parametrize(
    "row",
    [
        {"score": None, "status": "ok"},  # ok without a score
        {"score": "high", "status": "ok"},  # not a number
        {"score": 1.0, "status": "error", "error": {"kind": "crash", "message": "m"}},  # error with a score
        {"score": None, "status": "error"},  # error without a reason
        {"score": 0.5, "status": "skipped"},  # skipped with a score
        {"score": 1.0, "status": "sideways"},  # unknown status
        {"score": 1.0, "status": "ok", "components": {"c": {"score": None, "status": "ok"}}},  # bad component
    ],
)
def test_an_invalid_result_row_is_a_bad_reply_not_a_result(row):
    reply = httpx.Response(200, content=orjson.dumps({"results": [row]}))
    with pytest.raises(ServerError) as caught:
        _results(reply, 1)
    assert caught.value.code == "bad_reply"


def test_the_client_refuses_a_reply_with_the_wrong_number_of_results():
    reply = httpx.Response(200, content=b'{"results": [{"score": 1.0, "status": "ok"}]}')
    with pytest.raises(ServerError):
        _results(reply, 2)  # one result for two samples: refused, never padded
    assert _results(reply, 1) == [RewardResult(1.0, Status.OK)]
    stamped = httpx.Response(200, content=b'{"results": [{"score": 1.0, "status": "ok", "rewardlab_version": "v", "spec_hash": "h"}]}')
    assert _results(stamped, 1)[0].stamp == Stamp("v", "h")


def test_every_result_of_many_small_batches_reaches_the_cache(tmp_path):
    import asyncio

    from rewardlab.serve.app import create_app

    path = tmp_path / "c.sqlite"
    app = create_app({"len": Length()}, ResultStore(path), ServeSettings(workers=0, max_batch=8))

    async def go():
        async with asgi_client(app) as c:
            replies = await asyncio.gather(
                *(c.post("/v1/rewards/len:score", json={"samples": [{"response": f"{k}-{i}"} for i in range(30)]}) for k in range(20))
            )
        await app.state.service.aclose()  # waits for the writer to drain
        return replies

    replies = run(go())
    assert all(r.status_code == 200 for r in replies)
    app.state.service.cache.close()
    with ResultStore(path) as store:
        assert store.stats().rows == 600


def test_the_score_route_answers_every_outcome_with_its_status_and_counts_it(make_app):
    """The score route parses its body by hand (`score_reply`): scores, unknown rewards, bad
    tokens, invalid samples and unparseable JSON each get their status, and the route's metric
    label is the route, not the path."""
    app = make_app({"len": Length()}, None, ServeSettings(workers=0, token="s3cret"))
    ok = {"samples": _rows(3)}
    cases = [
        ("/v1/rewards/len:score", ok, {"Authorization": "Bearer s3cret"}),
        ("/v1/rewards/len:score", {**ok, "reply": "scores"}, {"Authorization": "Bearer s3cret"}),
        ("/v1/rewards/nope:score", ok, {"Authorization": "Bearer s3cret"}),  # unknown reward: 404
        ("/v1/rewards/len:score", ok, {"Authorization": "Bearer wrong"}),  # 401
        ("/v1/rewards/len:score", ok, {"Authorization": "Basic s3cret"}),  # not a bearer token: 401
        ("/v1/rewards/len:score", {"samples": [{"prompt": 3}]}, {"Authorization": "Bearer s3cret"}),  # 422
    ]

    async def replies(asgi):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi), base_url="http://test") as c:
            out = []
            for url, body, headers in cases:
                r = await c.post(url, json=body, headers=headers)
                out.append((r.status_code, r.json(), r.headers.get("www-authenticate")))
            out.append((await c.post("/v1/rewards/len:score", content=b"{not json", headers=cases[0][2])).status_code)
            return out

    answers = run(replies(app))
    assert [r if isinstance(r, int) else r[0] for r in answers] == [200, 200, 404, 401, 401, 422, 400]
    assert answers[0][1]["results"][2]["score"] == Length().score(Sample(prompt="q", response="r2")).score
    assert answers[3][2] == "Bearer"
    metrics = run(_metrics(app))
    assert 'rewardlab_requests_total{code="200",route="/v1/rewards/{name}:score"} 2.0' in metrics


async def _metrics(app):
    async with asgi_client(app) as c:
        return (await c.get("/metrics")).text


def test_result_rows_waiting_for_the_cache_take_their_own_size_in_memory(tmp_path):
    """Encoded rows live on after their reply, in the cache's write-behind queue (up to 65,536
    rows): each must cost about its length, not the encoder's whole output buffer (orjson's
    bytes kept 4 KiB for a 200-byte row, which grew a busy server by 100+ MB)."""
    import tracemalloc

    from rewardlab.serve.app import create_app

    # the rows wait: the writer writes only after a minute idle (or at 16,384 rows)
    settings = ServeSettings(workers=0, cache_write_delay_ms=60_000)
    app = create_app({"len": Length()}, ResultStore(tmp_path / "c.sqlite"), settings)

    async def go():
        async with asgi_client(app) as c:
            await c.post("/v1/rewards/len:score", json={"samples": [{"response": "warm-up"}]})
            tracemalloc.start()
            try:
                for k in range(4):
                    reply = await c.post("/v1/rewards/len:score", json={"samples": [{"response": f"{k}-{i}"} for i in range(500)]})
                    assert reply.status_code == 200
                snapshot = tracemalloc.take_snapshot()
            finally:
                tracemalloc.stop()
        return snapshot

    snapshot = run(go())
    writes = app.state.service.hosted["len"].batcher._writes
    rows = list(writes._unwritten.values())
    assert len(rows) == 2001
    # what is still allocated by the encoding code: the waiting rows
    held = sum(
        stat.size for stat in snapshot.statistics("filename")
        if stat.traceback[0].filename.endswith(("rewardlab/serve/batching.py", "rewardlab/store/cache.py"))
    )  # fmt: skip
    assert held <= 2 * sum(len(r) + 64 for r in rows), (held, sum(map(len, rows)))
    run(app.state.service.aclose())
    app.state.service.cache.close()
