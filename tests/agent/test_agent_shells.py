"""One agent spec gives the same numbers through the library, the CLI, the server (in-process and
over a real socket) and TRL's reward call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import rewardlab
from rewardlab.cli.main import main
from rewardlab.integrations.trl import as_trl_reward
from rewardlab.serve.app import create_app
from rewardlab.serve.client import Client
from rewardlab.serve.settings import ServeSettings

SPEC = """
[reward]
name = "agent"

[[reward.components]]
name = "calls"
use = "agent.tool_calls"
weight = 0.5
params = { score = "arguments", strings = "casefold" }

[[reward.components]]
name = "state"
use = "agent.state"
weight = 0.3

[[reward.components]]
name = "terms"
use = "agent.terms"
weight = 0.2
params = { max_calls = 3 }
"""

REFERENCE = {
    "calls": [{"name": "cancel", "arguments": {"order_id": "A", "reason": "no longer needed"}}],
    "checks": [{"path": "orders.A.status", "value": "cancelled"},
               {"code": "def check(state):\n    return state['orders']['B']['status'] == 'pending'", "name": "b_untouched"}],
}  # fmt: skip


def _call(i: int, args: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function",
             "function": {"name": "cancel", "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "Error: not found" if args.get("order_id") != "A" else "ok"}]  # fmt: skip


ROWS = [
    {"response": [*_call(0, {"order_id": "A", "reason": "No longer needed"}), {"role": "assistant", "content": "Done."}],
     "state": {"orders": {"A": {"status": "cancelled"}, "B": {"status": "pending"}}}},
    {"response": [*_call(0, {"order_id": "Z", "reason": "no longer needed"}), *_call(1, {"order_id": "A"}),
                  {"role": "assistant", "content": "Done."}],
     "state": {"orders": {"A": {"status": "cancelled"}, "B": {"status": "cancelled"}}}},
    {"response": [{"role": "assistant", "content": "I cannot do that."}, {"role": "tool", "content": ""}],
     "state": {"orders": {"A": {"status": "pending"}, "B": {"status": "pending"}}}},
]  # fmt: skip
ROWS = [{**row, "prompt": "Cancel order A.", "reference": REFERENCE} for row in ROWS]


@pytest.fixture(scope="module")
def library() -> list[float]:
    results = rewardlab.score(SPEC, ROWS)
    assert all(r.status == "ok" for r in results), [r.error for r in results]
    return [r.score for r in results]  # type: ignore[misc]


def test_library_numbers_by_hand(library: list[float]) -> None:
    # row 0: calls 1, state 2/2, terms 1 -> 0.5 + 0.3 + 0.2
    # row 1: calls: cancel(A) pairs with half its arguments -> (1 + 1/2)/2 over 2 calls = 0.375;
    #        state 1/2; terms: one tool error -> 0.9
    # row 2: no calls -> 0; state 1/2 (B untouched); terms 1
    assert library == pytest.approx([1.0, 0.5 * 0.375 + 0.3 * 0.5 + 0.2 * 0.9, 0.3 * 0.5 + 0.2])


def test_cli_gives_the_library_numbers(library: list[float], tmp_path: Path) -> None:
    spec, data, out = tmp_path / "agent.toml", tmp_path / "rollouts.jsonl", tmp_path / "out.jsonl"
    spec.write_text(SPEC)
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    assert main(["score", str(spec), str(data), "-o", str(out), "-w", "0", "--no-progress"]) == 0
    assert [json.loads(line)["reward"] for line in out.read_text().splitlines()] == pytest.approx(library)


@pytest.mark.network
def test_server_gives_the_library_numbers_in_process_and_over_a_socket(library: list[float]) -> None:
    from serve._live import (  # the serve tests' helpers: ASGI in process, real uvicorn on loopback
        LiveServer,
        asgi_client,
    )

    async def in_process(app: Any) -> Any:
        async with asgi_client(app) as local:
            response = await local.post("/v1/rewards/agent:score", json={"samples": ROWS, "use_cache": False})
            assert response.status_code == 200, response.text
            return response.json()

    apps = [create_app({"agent": rewardlab.build(SPEC)}, None, ServeSettings(workers=0)) for _ in range(2)]
    try:
        body = asyncio.run(in_process(apps[0]))
        assert [r["score"] for r in body["results"]] == pytest.approx(library)
        with LiveServer(apps[1]) as server, Client(server.url) as client:
            assert [r.score for r in client.score("agent", ROWS, use_cache=False)] == pytest.approx(library)
    finally:
        for app in apps:
            asyncio.run(app.state.service.aclose())


def test_trl_reward_call_gives_the_library_numbers(library: list[float]) -> None:
    reward = as_trl_reward(SPEC)
    scores = reward(prompts=[r["prompt"] for r in ROWS], completions=[r["response"] for r in ROWS],
                    reference=[r["reference"] for r in ROWS], state=[r["state"] for r in ROWS])  # fmt: skip
    assert scores == pytest.approx(library)


def test_verl_compute_score_gives_the_library_numbers(library: list[float], tmp_path: Path) -> None:
    from rewardlab.integrations.verl import compute_score

    spec = tmp_path / "agent.toml"
    spec.write_text(SPEC)
    # verl's multi-turn agent loop hands the trajectory's messages and its extra_info (the final state here)
    scores = [compute_score("agent", r["response"], r["reference"], {"state": r["state"], "prompt": r["prompt"]}, spec=str(spec))
              for r in ROWS]  # fmt: skip
    assert [s["score"] for s in scores] == pytest.approx(library)
