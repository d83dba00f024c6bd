"""Checkpoints round-trip; `model.rm` works from the registry and in a spec; bad files fail clearly."""

import json

import numpy as np
import pytest

import rewardlab
from rewardlab.core import Sample, Status, registry
from rewardlab.errors import InputError
from rewardlab.models import RewardModel, TrainConfig, tiny_bert, train_reward_model
from rewardlab.models.config import EncodeConfig
from rewardlab.models.reward import ModelReward


@pytest.fixture(scope="module")
def saved_rm(tmp_path_factory, hashing, unbiased_pairs):
    train, val, _ = unbiased_pairs
    model, _ = train_reward_model(train, val, backbone=hashing, config=TrainConfig(epochs=3))
    return model, model.save(tmp_path_factory.mktemp("rm"))


def test_saved_model_scores_exactly_like_the_trained_one(saved_rm, unbiased_pairs):
    model, path = saved_rm
    texts = [p.chosen for p in unbiased_pairs[2][:20]]
    np.testing.assert_array_equal(RewardModel.load(path).score_texts(texts), model.score_texts(texts))
    config = json.loads((path / "config.json").read_text())
    assert config["report"]["epochs"] and config["head"]["kind"] == "linear"


def test_finetuned_tiny_bert_round_trips(tmp_path, unbiased_pairs):
    train, val, test = unbiased_pairs
    model, _ = train_reward_model(train[:32], val[:16], backbone=tiny_bert(encode=EncodeConfig(max_length=32)),
                                  config=TrainConfig(mode="finetune", epochs=1, lr_backbone=1e-3))
    model.save(tmp_path)
    texts = [p.chosen for p in test[:8]]
    np.testing.assert_allclose(RewardModel.load(tmp_path).score_texts(texts), model.score_texts(texts), atol=1e-6)


def test_model_rm_from_the_registry_scores_a_batch(saved_rm):
    model, path = saved_rm
    rm = registry.create("model.rm", {"path": str(path)})
    samples = [Sample(prompt="Compute: 1+1", response="1+1=2"), Sample(prompt="Compute: 1+1", response="   ")]
    results = rm.score_batch(samples)
    assert results[0].status is Status.OK
    assert results[0].score == pytest.approx(model.score(["Compute: 1+1"], ["1+1=2"])[0])
    assert results[1].status is Status.ERROR and results[1].error.kind == "invalid_input"
    assert rm.score(samples[0]).score == pytest.approx(results[0].score)


def test_model_rm_in_a_spec(saved_rm):
    _, path = saved_rm
    spec = {"reward": {"name": "rm-only", "components": [
        {"name": "rm", "use": "model.rm", "weight": 1.0, "params": {"path": str(path)}}]}}
    results = rewardlab.score(spec, [Sample(prompt="Compute: 2+2", response="2+2=4")])
    assert results[0].status is Status.OK and results[0].stamp is not None


def test_missing_checkpoint_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"no config\.json"):
        ModelReward(path=str(tmp_path))


def test_corrupt_weights_are_an_input_error(saved_rm, tmp_path):
    _, path = saved_rm
    (tmp_path / "config.json").write_text((path / "config.json").read_text())
    (tmp_path / "model.safetensors").write_bytes((path / "model.safetensors").read_bytes()[:40])
    with pytest.raises(InputError, match="corrupt weights"):
        RewardModel.load(tmp_path)


def test_corrupt_config_is_an_input_error(saved_rm, tmp_path):
    _, path = saved_rm
    (tmp_path / "config.json").write_text("{not json")
    (tmp_path / "model.safetensors").write_bytes((path / "model.safetensors").read_bytes())
    with pytest.raises(InputError, match=r"corrupt config\.json"):
        RewardModel.load(tmp_path)


def test_weights_that_do_not_match_the_config_are_an_input_error(saved_rm, tmp_path):
    _, path = saved_rm
    config = json.loads((path / "config.json").read_text())
    config["head"]["dim"] = 7
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "model.safetensors").write_bytes((path / "model.safetensors").read_bytes())
    with pytest.raises(InputError, match="do not match"):
        RewardModel.load(tmp_path)


def test_model_rm_behind_the_reward_server(saved_rm):
    """A spec using `model.rm`, served by `rewardlab.serve.create_app`, in-process over ASGI."""
    import asyncio

    import httpx

    from rewardlab.compose import build
    from rewardlab.serve.app import create_app
    from rewardlab.serve.settings import ServeSettings

    model, path = saved_rm
    spec = {"reward": {"name": "rm", "components": [
        {"name": "rm", "use": "model.rm", "weight": 1.0, "params": {"path": str(path)}}]}}
    app = create_app({"rm": build(spec)}, None, ServeSettings(workers=0))
    rows = [{"prompt": "Compute: 2+2", "response": "2+2=4"}, {"prompt": "Compute: 2+2", "response": "2+2=5"}]

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://rm") as client:
            return await client.post("/v1/rewards/rm:score", json={"samples": rows})

    response = asyncio.run(go())
    assert response.status_code == 200, response.text
    scores = [r["score"] for r in response.json()["results"]]
    expected = model.score([r["prompt"] for r in rows], [r["response"] for r in rows])
    np.testing.assert_allclose(scores, expected, rtol=1e-6)
