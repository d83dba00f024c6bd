"""The Ray backend on a local Ray (2 CPUs): same results as the local backend. Few and slow."""

from __future__ import annotations

import json

import pytest

from rewardlab.compose import build
from rewardlab.core import Sample

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SPEC = """
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
on_error = "zero"
"""


def _samples(n: int) -> list[Sample]:
    return [Sample(prompt="q", response=f"<think>t</think><answer>{i % 5}</answer>" if i % 2 else str(i % 5), reference="3") for i in range(n)]


def test_ray_executor_gives_the_same_results_as_local(ray_session):
    from rewardlab.compose import ComponentTimes
    from rewardlab.runner.ray import RayExecutor

    reward = build(SPEC)
    samples = _samples(300)
    times = ComponentTimes()
    executor = RayExecutor(reward.observed(times))
    try:
        assert executor.map(samples) == reward.score_batch(samples)
    finally:
        executor.close()
    seen = times.drain()  # observed on the Ray workers, replayed here
    assert {name for name, _, _ in seen} == {"exact", "tags"}
    assert sum(n for name, _, n in seen if name == "exact") == 300


def test_server_and_score_with_the_ray_backend(ray_session, tmp_path, make_app):
    import asyncio

    from rewardlab.cli.main import main
    from rewardlab.serve.settings import ServeSettings

    from ._live import asgi_client

    reward = build(SPEC)
    app = make_app({"combo": reward}, None, ServeSettings(backend="ray"))
    rows = [s.to_dict() for s in _samples(40)]

    async def go():
        async with asgi_client(app) as c:
            return (await c.post("/v1/rewards/combo:score", json={"samples": rows})).json()

    served = [r["score"] for r in asyncio.run(go())["results"]]
    assert served == [r.score for r in reward.score_batch(_samples(40))]

    spec = tmp_path / "combo.toml"
    spec.write_text(SPEC)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"response": s.response, "reference": s.reference}) + "\n" for s in _samples(40)))
    common = [str(spec), str(data), "--no-progress", "-w", "0"]
    assert main(["score", *common, "-o", str(tmp_path / "ray.jsonl"), "--backend", "ray", "--cache", str(tmp_path / "r.sqlite")]) == 0
    assert main(["score", *common, "-o", str(tmp_path / "local.jsonl")]) == 0
    read = lambda name: [json.loads(x)["reward"] for x in (tmp_path / name).read_text().splitlines()]  # noqa: E731
    assert read("ray.jsonl") == read("local.jsonl") == served


def test_a_sample_ray_cannot_serialise_is_that_rows_invalid_input_and_the_executor_goes_on(ray_session):
    from deadlines import nested
    from rewardlab.runner.ray import RayExecutor

    reward = build(SPEC)
    samples = _samples(20)
    deep = Sample(prompt="q", response="3", reference="3", meta={"m": nested(600)})
    executor = RayExecutor(reward, chunk_size=8)
    try:
        results = executor.map([*samples[:5], deep, *samples[5:]])
        again = executor.map(samples)
    finally:
        executor.close()
    expected = reward.score_batch(samples)
    assert results[:5] + results[6:] == expected and again == expected
    assert results[5].error.kind.value == "invalid_input" and "Ray task" in results[5].error.message
