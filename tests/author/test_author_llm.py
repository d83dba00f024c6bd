"""The loop against a real loopback OpenAI-compatible server that answers with scripted code:
good, buggy, hostile. The records show each candidate's fate; the second round's prompt
carries the reflection on the first."""

from __future__ import annotations

import json

import pytest
from author_helpers import small_loop
from author_llm_server import SCRIPTS, ScriptedLLM

from rewardlab.author import LLMAuthor, author_reward, extract_code
from rewardlab.errors import RewardCodeRejected
from rewardlab.store import RunStore

GOAL = "reach the goal cell, avoid the trap"
EXPECTED = {"good": "scored", "buggy": "raised", "nan": "non_finite", "loop": "timeout", "import_os": "forbidden_import",
            "escape": "dunder", "read_file": "forbidden_name", "prose": "no_code"}  # fmt: skip


def test_each_scripted_candidate_meets_its_fate(maze, pool, tmp_path):
    names = list(SCRIPTS)
    with ScriptedLLM([SCRIPTS[n] for n in names]) as server:
        author = LLMAuthor(server.base_url, "scripted", temperature=0.7)
        store = RunStore(tmp_path / "runs.sqlite")
        result = author_reward(maze, author, goal=GOAL, config=small_loop(candidates=len(names), rounds=1), pool=pool, store=store)
    assert {n: r["fate"] for n, r in zip(names, result.records, strict=True)} == EXPECTED
    assert result.best is not None and result.best["reply"] == SCRIPTS["good"]
    recorded = [row for _, row in store.iter_run(result.run_id)]
    assert [r["fate"] for r in recorded] == [EXPECTED[n] for n in names]
    assert all(r["prompt"][0]["role"] == "system" and r["author"] == "llm:scripted" for r in recorded)
    body = server.requests[0]
    assert body["model"] == "scripted" and body["temperature"] == 0.7
    assert "def reward(obs, action, next_obs, info)" in body["messages"][0]["content"]
    assert "Gridworld 7x7" in body["messages"][1]["content"]


def test_the_second_round_prompt_reflects_on_the_first(maze, pool):
    replies = [SCRIPTS["good"], SCRIPTS["nan"], SCRIPTS["good"], SCRIPTS["good"]]
    with ScriptedLLM(replies) as server:
        author_reward(maze, LLMAuthor(server.base_url, "m"), goal=GOAL, config=small_loop(), pool=pool)
    first, second = server.requests[0]["messages"][1]["content"], server.requests[2]["messages"][1]["content"]
    assert "Best reward so far" not in first
    assert "Best reward so far" in second and '10.0 * info["success"]' in second
    assert "success:" in second and "failure:" in second  # per-component statistics
    assert "non_finite" in second  # and why the other one failed


def test_an_unreachable_endpoint_is_an_author_error_not_a_crash(maze, pool):
    author = LLMAuthor("http://127.0.0.1:9/v1", "m", timeout=2.0, retries=0)
    result = author_reward(maze, author, goal=GOAL, config=small_loop(rounds=1), pool=pool)
    assert [r["fate"] for r in result.records] == ["author_error", "author_error"]
    assert result.best is None


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("```python\ndef reward(obs, action, next_obs, info):\n    return 1.0\n```", "def reward(obs, action, next_obs, info):\n    return 1.0\n"),
        ("```python\nX = 1\n```\nthen\n```python\ndef reward(o, a, n, i):\n    return X\n```\n```\npip install nothing\n```",
         "def reward(o, a, n, i):\n    return X\n"),
        ("def reward(obs, action, next_obs, info):\n    return 0.0\n", "def reward(obs, action, next_obs, info):\n    return 0.0\n"),
    ],
)
def test_code_is_taken_from_the_block_that_defines_reward(reply, code):
    assert extract_code(reply) == code


def test_a_reply_without_code_is_rejected():
    with pytest.raises(RewardCodeRejected) as info:
        extract_code("Reward the agent when it succeeds.")
    assert info.value.kind == "no_code"
    json.dumps(str(info.value))
