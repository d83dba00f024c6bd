"""A weight-conditioned reward gives the same numbers from the library, the reward server (in
process and over a real socket) and the TRL adapter (called as TRL calls it, and through a real
`GRPOTrainer`'s reward step)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import numpy as np
import pytest
from tradeoff_spec import RESPONSES, TRADEOFF_SPEC

from rewardlab import RewardResult, Sample
from rewardlab.compose import build
from rewardlab.integrations.trl import as_trl_reward
from rewardlab.multiobj import scalarize
from rewardlab.serve.app import create_app
from rewardlab.serve.settings import ServeSettings
from serve._live import LiveServer, asgi_client

PROMPT = "What is the capital of France?"
WEIGHTS = [
    {"accuracy": 1.0, "brevity": 0.0},
    {"accuracy": 0.2, "brevity": 0.8},
    [0.7, 0.3],
    {"accuracy": 0.5, "brevity": 0.5},
]


def _library(weights: list[Any]) -> list[RewardResult]:
    samples = [
        Sample(prompt=PROMPT, response=r, reference="Paris", meta={"objective_weights": w})
        for r, w in zip(RESPONSES, weights, strict=True)
    ]
    return build(TRADEOFF_SPEC).score_batch(samples)


def test_library_total_is_the_weighted_vector() -> None:
    results = _library(WEIGHTS)
    for result, w in zip(results, WEIGHTS, strict=True):
        assert result.objectives is not None
        vector = np.array([result.objectives["accuracy"], result.objectives["brevity"]])
        weights = list(w.values()) if isinstance(w, dict) else w
        assert result.score == pytest.approx(float(scalarize(vector, weights)))
    assert len({r.score for r in results}) == 4  # the weights change the totals


def test_trl_reward_call_equals_the_library_and_logs_each_objective() -> None:
    reward_ = as_trl_reward(TRADEOFF_SPEC)
    logged: dict[str, float] = {}
    got = reward_(prompts=[PROMPT] * 4, completions=RESPONSES, solution=["Paris"] * 4, objective_weights=WEIGHTS,
                  log_metric=logged.__setitem__)  # fmt: skip
    expected = _library(WEIGHTS)
    assert got == [r.score for r in expected]
    accuracy = [r.objectives["accuracy"] for r in expected if r.objectives]
    assert logged["rewardlab/objective/accuracy/mean"] == pytest.approx(sum(accuracy) / 4)  # type: ignore[arg-type]


def test_verl_compute_score_with_weights_in_extra_info_equals_the_library(tmp_path: Any) -> None:
    from rewardlab.integrations.verl import compute_score

    spec = tmp_path / "tradeoff.toml"
    spec.write_text(TRADEOFF_SPEC)
    got = [
        compute_score("qa", r, "Paris", {"prompt": PROMPT, "objective_weights": w}, spec=str(spec))["score"]
        for r, w in zip(RESPONSES, WEIGHTS, strict=True)
    ]
    assert got == [r.score for r in _library(WEIGHTS)]


def test_weights_are_part_of_the_cache_key() -> None:
    """Two requests that differ only in their weights are two results, not one cached total."""
    from rewardlab.store import ResultStore

    app = create_app({"tradeoff": build(TRADEOFF_SPEC)}, ResultStore(":memory:"), ServeSettings(workers=0))
    row = {"prompt": PROMPT, "response": RESPONSES[1], "reference": "Paris"}

    async def go(weights: dict[str, float]) -> dict[str, Any]:
        async with asgi_client(app) as client:
            response = await client.post("/v1/rewards/tradeoff:score", json={"samples": [row], "objective_weights": weights})
            return response.json()  # type: ignore[no-any-return]

    try:
        first = asyncio.run(go({"accuracy": 1.0, "brevity": 0.0}))
        second = asyncio.run(go({"accuracy": 0.0, "brevity": 1.0}))
        again = asyncio.run(go({"accuracy": 1.0, "brevity": 0.0}))
    finally:
        asyncio.run(app.state.service.aclose())
    assert first["results"][0]["score"] != second["results"][0]["score"]
    assert (second["cached"], again["cached"]) == (0, 1) and again["results"][0]["score"] == first["results"][0]["score"]


def _body(**extra: Any) -> dict[str, Any]:
    rows: list[dict[str, Any]] = [{"prompt": PROMPT, "response": r, "reference": "Paris"} for r in RESPONSES]
    rows[1]["objective_weights"] = WEIGHTS[1]  # a sample's own weights win over the request's
    rows[2]["meta"] = {"objective_weights": WEIGHTS[2]}
    return {"samples": rows, **extra}


def _check_reply(reply: dict[str, Any]) -> None:
    request_weights = {"accuracy": 0.9, "brevity": 0.1}
    expected = _library([request_weights, WEIGHTS[1], WEIGHTS[2], request_weights])
    got = [RewardResult.from_dict(row) for row in reply["results"]]
    assert [r.score for r in got] == [r.score for r in expected]
    assert [r.objectives for r in got] == [r.objectives for r in expected]
    assert got[0].info["objective_weights"] == request_weights


@pytest.mark.parametrize("workers", [0, 2])
def test_server_request_weights_equal_the_library_in_process(workers: int) -> None:
    app = create_app({"tradeoff": build(TRADEOFF_SPEC)}, None, ServeSettings(workers=workers))

    async def go() -> dict[str, Any]:
        async with asgi_client(app) as client:
            body = _body(objective_weights={"accuracy": 0.9, "brevity": 0.1})
            response = await client.post("/v1/rewards/tradeoff:score", json=body)
            assert response.status_code == 200, response.text
            return response.json()  # type: ignore[no-any-return]

    try:
        _check_reply(asyncio.run(go()))
    finally:
        asyncio.run(app.state.service.aclose())


@pytest.mark.network
def test_server_request_weights_equal_the_library_over_a_socket() -> None:
    app = create_app({"tradeoff": build(TRADEOFF_SPEC)}, None, ServeSettings(workers=0))
    try:
        with LiveServer(app) as server:
            body = _body(objective_weights={"accuracy": 0.9, "brevity": 0.1})
            response = httpx.post(f"{server.url}/v1/rewards/tradeoff:score", json=body, timeout=30)
            assert response.status_code == 200, response.text
            _check_reply(response.json())
            bad = httpx.post(f"{server.url}/v1/rewards/tradeoff:score", json=_body(objective_weights=0.5), timeout=30)
            assert bad.status_code == 422 and "objective_weights" in bad.text
            wrong = httpx.post(f"{server.url}/v1/rewards/tradeoff:score", json=_body(objective_weights={"speed": 1.0}), timeout=30)
            rows = wrong.json()["results"]
            # rows 1 and 2 name their own weights; the others get an invalid_input error, not a default
            assert [r["status"] for r in rows] == ["error", "ok", "ok", "error"]
            assert "unknown: speed" in rows[0]["error"]["message"]
    finally:
        asyncio.run(app.state.service.aclose())


@pytest.mark.slow
def test_real_grpo_trainer_reward_step_equals_the_library(tmp_path: Any) -> None:
    """TRL's own reward call (`GRPOTrainer._calculate_rewards`) with an `objective_weights`
    dataset column: the dataset's weights reach the spec and the totals equal the library's."""
    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from integrations.integration_spec import tiny_tokenizer

    tokenizer = tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4, max_completion_length=8,
        max_steps=1, report_to=[], use_cpu=True, save_strategy="no", seed=0,
    )  # fmt: skip
    dataset = Dataset.from_dict({"prompt": [PROMPT] * 4, "solution": ["Paris"] * 4})
    trainer = GRPOTrainer(
        model=LlamaForCausalLM(config), reward_funcs=as_trl_reward(TRADEOFF_SPEC), args=args,
        train_dataset=dataset, processing_class=tokenizer,
    )  # fmt: skip
    inputs = [{"prompt": PROMPT, "solution": "Paris", "objective_weights": w} for w in WEIGHTS]
    ids = [tokenizer(c)["input_ids"] for c in RESPONSES]
    got = trainer._calculate_rewards(inputs, [PROMPT] * 4, RESPONSES, ids)[:, 0]
    expected = torch.tensor([r.score for r in _library(WEIGHTS)], dtype=got.dtype)
    assert torch.allclose(got, expected)


# -- the objectives column of every edge: scores reply, clients, OpenRLHF, verl -------------------
REQUEST_WEIGHTS = {"accuracy": 0.9, "brevity": 0.1}
PLAIN_SPEC = '[reward]\nname = "plain"\n[[reward.components]]\nname = "f1"\nuse = "text.f1"\n'


def _rows() -> list[dict[str, Any]]:
    return [{"prompt": PROMPT, "response": r, "reference": "Paris"} for r in RESPONSES]


def _vector_columns(results: list[RewardResult]) -> dict[str, list[float | None]]:
    return {name: [r.objectives[name] if r.objectives else None for r in results] for name in ("accuracy", "brevity")}


def test_scores_reply_has_an_objectives_column_equal_to_the_library() -> None:
    app = create_app({"tradeoff": build(TRADEOFF_SPEC), "plain": build(PLAIN_SPEC)}, None,
                     ServeSettings(workers=0))  # fmt: skip

    async def go(name: str) -> dict[str, Any]:
        async with asgi_client(app) as client:
            body = {"samples": _rows(), "reply": "scores", "objective_weights": REQUEST_WEIGHTS}
            response = await client.post(f"/v1/rewards/{name}:score", json=body)
            assert response.status_code == 200, response.text
            return response.json()  # type: ignore[no-any-return]

    try:
        reply, plain = asyncio.run(go("tradeoff")), asyncio.run(go("plain"))
    finally:
        asyncio.run(app.state.service.aclose())
    expected = _library([REQUEST_WEIGHTS] * 4)
    assert reply["scores"] == [r.score for r in expected]
    assert reply["objectives"] == _vector_columns(expected)
    assert "objectives" not in plain  # a spec without objectives: the reply is as before


@pytest.mark.network
def test_clients_send_objective_weights_and_read_the_objectives_column_over_a_socket() -> None:
    from rewardlab.serve.client import AsyncClient, Client

    app = create_app({"tradeoff": build(TRADEOFF_SPEC)}, None, ServeSettings(workers=0))
    expected = _library([REQUEST_WEIGHTS] * 4)
    as_list = [REQUEST_WEIGHTS["accuracy"], REQUEST_WEIGHTS["brevity"]]  # declaration order
    try:
        with LiveServer(app) as server, Client(server.url, batch_size=3) as client:  # two requests, joined
            results = client.score("tradeoff", _rows(), objective_weights=REQUEST_WEIGHTS)
            scores = client.scores("tradeoff", _rows(), objective_weights=as_list)
            unweighted = client.scores("tradeoff", _rows())

            async def go() -> Any:
                async with AsyncClient(server.url, batch_size=3) as aclient:
                    return await aclient.scores("tradeoff", _rows(), objective_weights=REQUEST_WEIGHTS)

            async_scores = asyncio.run(go())
    finally:
        asyncio.run(app.state.service.aclose())
    assert [r.score for r in results] == [r.score for r in expected]
    assert [r.objectives for r in results] == [r.objectives for r in expected]
    for got in (scores, async_scores):
        assert got.values == [r.score for r in expected]
        assert got.objectives == _vector_columns(expected)
    assert unweighted.values == [r.score for r in _library([None] * 4)]  # the declared weights


def test_openrlhf_get_reward_logs_each_objective_per_row() -> None:
    app = create_app({"tradeoff": build(TRADEOFF_SPEC)}, None, ServeSettings(workers=0, openrlhf_error_reward=0.0))
    body = {"query": [PROMPT + " " + r for r in RESPONSES], "prompts": [PROMPT] * 4, "labels": ["Paris"] * 4}

    async def go() -> dict[str, Any]:
        async with asgi_client(app) as client:
            response = await client.post("/get_reward", json=body)
            assert response.status_code == 200, response.text
            return response.json()  # type: ignore[no-any-return]

    try:
        logs = asyncio.run(go())["extra_logs"]
    finally:
        asyncio.run(app.state.service.aclose())
    expected = _vector_columns(_library([None] * 4))
    for name, column in expected.items():
        assert logs[f"rewardlab/objective/{name}"] == pytest.approx(column)
        assert logs[f"rewardlab/objective/{name}/scored"] == [1.0] * 4


def test_openrlhf_reward_func_and_verl_rows_carry_each_objective(tmp_path: Any) -> None:
    from rewardlab.integrations.openrlhf import get_reward_mapping
    from rewardlab.integrations.verl import compute_score

    spec = tmp_path / "tradeoff.toml"
    spec.write_text(TRADEOFF_SPEC)
    expected = _library(WEIGHTS)
    rows = [compute_score("qa", r, "Paris", {"prompt": PROMPT, "objective_weights": w}, spec=str(spec))
            for r, w in zip(RESPONSES, WEIGHTS, strict=True)]  # fmt: skip
    for row, result in zip(rows, expected, strict=True):
        assert result.objectives is not None
        assert {k: row[k] for k in ("objective/accuracy", "objective/brevity")} == {
            f"objective/{k}": v for k, v in result.objectives.items()
        }
        assert row["objective/accuracy/scored"] == row["objective/brevity/scored"] == 1.0
    payload = {"query": [PROMPT + " " + r for r in RESPONSES], "prompts": [PROMPT] * 4, "labels": ["Paris"] * 4}
    reply = get_reward_mapping(build(TRADEOFF_SPEC), payload, error_reward=0.0)
    assert reply["extra_logs"]["rewardlab/objective/brevity"] == pytest.approx(_vector_columns(_library([None] * 4))["brevity"])
