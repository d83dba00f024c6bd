"""A rewardlab agent spec as a verifiers `Rubric` reward function, scored by verifiers' own
`Rubric.score_rollout` / `score_group` over verifiers' own `State` and message objects.

verifiers is not in rewardlab's dev extra (its full dependency set pulls prime-* services); `make`
installs, without their dependencies, the few packages its Rubric path needs (Python 3.11):

    pip install --no-deps verifiers==0.3.1 anthropic==0.78.0 openai==2.9.0 renderers==0.1.10 \\
        prime-pydantic-config==0.4.3 docstring-parser==0.18.0 jiter==0.19.0 tenacity==9.2.1

(0.4 dropped the classic `Rubric` for its `v1` Task/Trace stack.) The tests of the Rubric skip
without it; the adapter's own mapping is tested either way.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from rank_server import RankServer

import rewardlab
from rewardlab.errors import ConfigError
from rewardlab.integrations.verifiers import (
    VerifiersGroupReward,
    VerifiersReward,
    as_verifiers_reward,
    as_verifiers_rubric,
)

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
"""

REFERENCE = {"calls": [{"name": "cancel", "arguments": {"order_id": "A", "reason": "no longer needed"}}],
             "checks": [{"path": "orders.A", "value": "cancelled"}, {"path": "orders.B", "value": "pending"}]}  # fmt: skip


def _call(i: int, args: dict[str, Any]) -> list[dict[str, Any]]:
    ok = args.get("order_id") == "A"
    return [{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function",
             "function": {"name": "cancel", "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "ok" if ok else "Error: no such order"}]  # fmt: skip


# (completion, the environment's final state): right; a wrong call then a half-right one that
# also cancelled B; no call at all.
ROLLOUTS = [
    ([*_call(0, {"order_id": "A", "reason": "No longer needed"}), {"role": "assistant", "content": "Done."}],
     {"orders": {"A": "cancelled", "B": "pending"}}),
    ([*_call(0, {"order_id": "Z", "reason": "no longer needed"}), *_call(1, {"order_id": "A"}),
      {"role": "assistant", "content": "Done."}], {"orders": {"A": "cancelled", "B": "cancelled"}}),
    ([{"role": "assistant", "content": "I cannot do that."}], {"orders": {"A": "pending", "B": "pending"}}),
]  # fmt: skip
# row 0: calls 1, state 2/2, terms 1; row 1: calls (1 + 1/2)/2 over 2 calls = 0.375, state 1/2,
# terms 1 - 0.1 for the tool error; row 2: no calls, state 1/2 (B untouched), terms 1.
BY_HAND = [1.0, 0.5 * 0.375 + 0.3 * 0.5 + 0.2 * 0.9, 0.3 * 0.5 + 0.2]
PROMPT = [{"role": "user", "content": "Cancel order A."}]


@pytest.fixture(scope="module")
def vf() -> Any:
    verifiers = pytest.importorskip("verifiers", reason="verifiers is not installed (see the module docstring)")
    if not hasattr(verifiers, "Rubric"):
        pytest.skip(f"verifiers {verifiers.__version__} has no classic Rubric (0.4 keeps only verifiers.v1)")
    return verifiers


def _state(vf: Any, completion: list[dict[str, Any]], env: Any, info: dict[str, Any]) -> Any:
    """A rollout state as verifiers' environments leave it: input fields under ``input``, the
    prompt and completion as verifiers message objects, the environment's state under ``db``."""
    from verifiers.utils.message_utils import normalize_messages

    state = vf.State(input={"prompt": PROMPT, "answer": "", "info": info, "example_id": 0})
    state["prompt"] = normalize_messages(PROMPT)
    state["completion"] = normalize_messages(completion)
    state["trajectory"], state["error"], state["db"] = [], None, env
    return state


def test_the_spec_gives_the_hand_numbers_in_the_library() -> None:
    rows = [{"prompt": PROMPT, "response": c, "state": env, "reference": REFERENCE} for c, env in ROLLOUTS]
    assert [r.score for r in rewardlab.score(SPEC, rows)] == pytest.approx(BY_HAND)


def test_verifiers_rubric_scores_each_rollout_with_the_spec(vf: Any) -> None:
    rubric = as_verifiers_rubric(SPEC, env_state="db")
    assert isinstance(rubric, vf.Rubric)
    states = [_state(vf, c, env, {"reference": REFERENCE}) for c, env in ROLLOUTS]
    for state in states:
        asyncio.run(rubric.score_rollout(state))
    assert [s["reward"] for s in states] == pytest.approx(BY_HAND)
    assert states[1]["metrics"]["agent/calls"] == pytest.approx(0.375) and states[1]["metrics"]["agent/state"] == 0.5
    assert all(s["metrics"]["agent_error"] == 0.0 and s["error"] is None for s in states)
    assert states[1]["rewardlab"]["agent"]["components"]["calls"]["info"]["extra_calls"] == ["cancel"]


def test_score_group_gives_the_same_numbers_and_group_advantages(vf: Any) -> None:
    rubric = vf.Rubric(funcs=[as_verifiers_reward(SPEC, env_state="db")], weights=[1.0])
    states = [_state(vf, c, env, {"reference": REFERENCE}) for c, env in ROLLOUTS]
    asyncio.run(rubric.score_group(states))
    assert [s["reward"] for s in states] == pytest.approx(BY_HAND)
    mean = sum(BY_HAND) / 3
    assert [s["advantage"] for s in states] == pytest.approx([x - mean for x in BY_HAND])


def test_an_error_result_is_nan_and_flags_the_rollout_never_a_quiet_zero(vf: Any) -> None:
    no_reference = _state(vf, ROLLOUTS[0][0], ROLLOUTS[0][1], {})
    asyncio.run(as_verifiers_rubric(SPEC, env_state="db").score_rollout(no_reference))
    assert math.isnan(no_reference["reward"]) and no_reference["metrics"]["agent_error"] == 1.0
    assert isinstance(no_reference["error"], vf.Error) and "invalid_input" in str(no_reference["error"])
    assert no_reference["rewardlab"]["agent"]["status"] == "error"
    # an explicit number instead: that number, the error still on record
    explicit = _state(vf, ROLLOUTS[0][0], ROLLOUTS[0][1], {})
    asyncio.run(as_verifiers_rubric(SPEC, env_state="db", on_error=-1.0).score_rollout(explicit))
    assert explicit["reward"] == -1.0 and explicit["error"] is None and explicit["metrics"]["agent_error"] == 1.0


def test_a_missing_environment_state_is_that_rollouts_error(vf: Any) -> None:
    state = _state(vf, ROLLOUTS[0][0], ROLLOUTS[0][1], {"reference": REFERENCE})
    del state["db"]
    asyncio.run(as_verifiers_rubric(SPEC, env_state="db").score_rollout(state))
    assert math.isnan(state["reward"]) and "'db' (env_state)" in str(state["error"])


@pytest.fixture
def server() -> Iterator[RankServer]:
    with RankServer() as s:
        yield s


def _booking(city: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "book", "arguments": {"city": city}}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Error: sold out" if city == "Oslo" else "B-17"},
            {"role": "assistant", "content": f"Booked {city}."}]  # fmt: skip


def test_a_group_spec_is_a_group_reward_function_of_score_group(vf: Any, server: RankServer) -> None:
    spec = {"reward": {"name": "rank", "components": [
        {"name": "rank", "use": "agent.rank", "params": {"base_url": server.base_url, "model": "m"}}]}}  # fmt: skip
    reward = as_verifiers_reward(spec)
    assert isinstance(reward, VerifiersGroupReward)
    rubric = vf.Rubric(funcs=[reward], weights=[1.0])
    assert rubric.has_group_rewards  # verifiers reads it as a group function from its signature
    states = [_state(vf, _booking(city), {}, {}) for city in ("Oslo", "Paris")]
    for state in states:
        state["input"]["prompt"] = "Book two nights in Paris."
    asyncio.run(rubric.score_group(states))
    # the judge server's verdicts, both orders averaged (tests/agent/test_agent_rank.py)
    assert [s["reward"] for s in states] == pytest.approx([0.4, 0.9])
    assert len(server.requests) == 2  # one group, two orders
    with pytest.raises(ConfigError, match="group rewards"):
        VerifiersReward(spec)


def test_the_function_takes_rubric_keywords_without_verifiers() -> None:
    reward = as_verifiers_reward(SPEC, env_state="db", reference_key="gold")
    state: dict[str, Any] = {"db": ROLLOUTS[1][1]}
    # the reference as a dataset column (verifiers passes the row's other columns by name)
    value = asyncio.run(reward(prompt=PROMPT, completion=ROLLOUTS[1][0], answer="", state=state, info={}, gold=REFERENCE))
    assert value == pytest.approx(BY_HAND[1]) and state["rewardlab"]["agent"]["status"] == "ok"
    with pytest.raises(ConfigError, match="on_error"):
        as_verifiers_reward(SPEC, on_error="zero")


def test_the_group_function_reads_each_rollouts_task_columns() -> None:
    reward = as_verifiers_reward(SPEC, env_state="db", group=True)
    assert isinstance(reward, VerifiersGroupReward)
    states: list[dict[str, Any]] = [{"db": env} for _, env in ROLLOUTS]
    values = asyncio.run(reward(prompts=[PROMPT] * 3, completions=[c for c, _ in ROLLOUTS], answers=[""] * 3, states=states,
                                infos=[{}] * 3, tasks=[{"reference": REFERENCE}] * 3))  # fmt: skip
    assert values == pytest.approx(BY_HAND)
    # a length mismatch cannot be paired: every rollout is an error, never a quiet 0
    short = asyncio.run(reward(completions=[c for c, _ in ROLLOUTS], states=states, answers=[""]))
    assert len(short) == 3 and all(math.isnan(v) for v in short)
    assert all("answers has 1 entries for 3 completions" in s["rewardlab"]["agent"]["error"]["message"] for s in states)
