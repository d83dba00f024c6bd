"""An off-the-shelf model reward behind `rewardlab serve`: one loaded copy in the server process,
samples of concurrent clients scored in one model batch, over a real socket."""

from __future__ import annotations

import random
import threading
import time

import httpx
import pytest

from rewardlab.compose import build
from rewardlab.core import Sample
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.hf_tiny import WORDS, save_tiny
from rewardlab.runner.executors import InlineExecutor
from rewardlab.serve.client import Client
from rewardlab.serve.settings import ServeSettings

from ._live import LiveServer

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return save_tiny(tmp_path_factory.mktemp("serve") / "rm", "qwen2", seed=40)


def _spec(model_dir, **params):
    return build({"reward": {"name": "rm", "components": [
        {"name": "rm", "use": "model.hf", "params": {"model": str(model_dir), **params}}]}})


def _samples(n: int, seed: int) -> list[Sample]:
    rng = random.Random(seed)
    return [Sample(prompt=" ".join(rng.choices(WORDS[:200], k=rng.randint(1, 10))),
                   response=" ".join(rng.choices(WORDS[:200], k=rng.randint(1, 30)))) for _ in range(n)]


def _wait_until(condition, what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_a_model_reward_runs_in_the_server_process_with_one_loaded_copy(make_app, model_dir):
    raw, squashed = _spec(model_dir), _spec(model_dir, normalize="sigmoid")
    app = make_app({"raw": raw, "squashed": squashed}, None, ServeSettings())  # default backend: pool
    hosted = app.state.service.hosted
    assert all(isinstance(h.batcher.executor, InlineExecutor) for h in hosted.values())
    models = {id(h.reward.components[0].reward.loaded.model) for h in hosted.values()}
    assert len(models) == 1


def test_concurrent_clients_share_one_model_batch_over_a_socket(make_app, model_dir):
    reward = _spec(model_dir)
    app = make_app({"rm": reward}, None, ServeSettings(concurrency=1))
    batcher = app.state.service.hosted["rm"].batcher
    model = reward.components[0].reward
    first, others = _samples(3, seed=0), [_samples(n, seed=n) for n in (5, 7, 9)]
    got: dict[int, list] = {}

    def client(key: int, samples: list[Sample]) -> None:
        with Client(server.url, retries=0) as c:
            got[key] = c.score("rm", samples)

    with LiveServer(app) as server:
        with model.loaded.lock:  # the first batch stops inside the model until the others queue
            threads = [threading.Thread(target=client, args=(0, first))]
            threads[0].start()
            _wait_until(lambda: 'rewardlab_batches_in_flight{reward="rm"} 1.0' in httpx.get(f"{server.url}/metrics").text
                        and batcher.queued == 0, "the first batch to start")
            threads += [threading.Thread(target=client, args=(k, s)) for k, s in enumerate(others, 1)]
            for t in threads[1:]:
                t.start()
            _wait_until(lambda: batcher.queued == 21, "three clients' samples to queue")
        for t in threads:
            t.join(60)
        metrics = httpx.get(f"{server.url}/metrics").text
    assert 'rewardlab_batch_size_count{reward="rm"} 2.0' in metrics  # 4 requests, 2 model batches
    assert 'rewardlab_batch_size_sum{reward="rm"} 24.0' in metrics
    direct = HFReward(model=str(model_dir))
    for key, samples in enumerate([first, *others]):
        expected = [r.score for r in direct.score_batch(samples)]
        assert [r.score for r in got[key]] == pytest.approx(expected, abs=1e-5)
