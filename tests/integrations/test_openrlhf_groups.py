"""Group rewards and OpenRLHF 0.11.2's reward calling convention.

OpenRLHF generates a prompt's `n_samples_per_prompt` samples together
(`LLMRayActor.generate_responses`), but each sample's `SingleTurnAgentExecutor.execute` asks for
its reward alone, as soon as it is generated: `_fetch_rewards_via_func` calls `reward_func` with
`batch_size = 1` on a thread. A group reward would vote on one member there, so it is refused
at start-up; calls that hold whole groups (`n_samples_per_prompt=N`) get rewardlab's numbers.
"""

from __future__ import annotations

import asyncio

import pytest

import rewardlab
from rewardlab import Sample
from rewardlab.errors import GroupSplitError
from rewardlab.integrations.openrlhf import make_reward_func

VOTE = {"reward": {"name": "ttrl", "components": [
    {"name": "vote", "use": "labelfree.majority_vote", "params": {"min_group": 3}}]}}  # fmt: skip
EXACT = {"reward": {"name": "exact", "components": [{"name": "exact", "use": "text.exact"}]}}


def chat(question: str) -> str:
    return f"<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"


# Two prompts, 4 samples each, in OpenRLHF's layout (a prompt's samples side by side).
ROWS = [(chat("2+2?"), a) for a in ("4", "5", "4", "4")] + [(chat("2+6?"), a) for a in ("7", "8", "8", "8")]


def call(reward_func, rows):
    queries = [p + f"so \\boxed{{{a}}}<|im_end|>" for p, a in rows]  # decoded with special tokens, as OpenRLHF does
    return reward_func(queries, [p for p, _ in rows], [None] * len(rows))


def expected(rows) -> list[float | None]:
    samples = [Sample(response=f"so \\boxed{{{a}}}", group=p) for p, a in rows]
    return [r.score for r in rewardlab.score(VOTE, samples)]


def test_openrlhfs_executor_asks_for_one_sample_per_reward_func_call():
    """The premise, on OpenRLHF's own code: its fetch cuts any list into calls of one."""
    pytest.importorskip("openrlhf", reason="openrlhf is not installed (make installs openrlhf==0.11.2 --no-deps)")
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    calls = []

    def recording_reward_func(queries, prompts, labels):
        calls.append(len(queries))
        return {"rewards": [0.0] * len(queries)}

    executor = SingleTurnAgentExecutor()
    executor.reward_func = recording_reward_func
    asyncio.run(executor._fetch_rewards_via_func(["q"] * 4, ["p"] * 4, [None] * 4))
    assert calls == [1, 1, 1, 1]


def test_the_module_file_with_a_group_reward_stops_openrlhf_at_start_up(tmp_path, monkeypatch):
    pytest.importorskip("openrlhf", reason="openrlhf is not installed (make installs openrlhf==0.11.2 --no-deps)")
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    import rewardlab.integrations.openrlhf as module

    (tmp_path / "vote.toml").write_text(
        '[reward]\nname = "ttrl"\n[[reward.components]]\nname = "vote"\nuse = "labelfree.majority_vote"\n'
    )
    monkeypatch.setenv("REWARDLAB_SPEC", str(tmp_path / "vote.toml"))
    monkeypatch.setenv("REWARDLAB_ERROR_REWARD", "0.0")
    with pytest.raises(GroupSplitError, match="vote on one member"):
        SingleTurnAgentExecutor(remote_rm_url=module.__file__)


def test_make_reward_func_refuses_a_group_reward_for_openrlhfs_one_sample_calls():
    with pytest.raises(GroupSplitError, match="n_samples_per_prompt=N"):
        make_reward_func(VOTE, error_reward=0.0)


def test_calls_of_whole_groups_get_the_group_rewards():
    reward_func = make_reward_func(VOTE, error_reward=0.0, n_samples_per_prompt=4)
    out = call(reward_func, ROWS)
    assert out["rewards"].tolist() == expected(ROWS) == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    assert out["extra_logs"]["rewardlab/vote/scored"].tolist() == [1.0] * 8


def test_a_call_with_part_of_a_group_raises():
    reward_func = make_reward_func(VOTE, error_reward=0.0, n_samples_per_prompt=4)
    with pytest.raises(GroupSplitError, match="not a multiple of n_samples_per_prompt=4"):
        call(reward_func, ROWS[:3])


def test_a_block_with_two_prompts_is_not_a_group():
    reward_func = make_reward_func(VOTE, error_reward=0.0, n_samples_per_prompt=4)
    with pytest.raises(GroupSplitError, match="different prompts"):
        call(reward_func, ROWS[2:6])


def test_a_per_sample_reward_ignores_n_samples_per_prompt():
    plain = make_reward_func(EXACT, error_reward=0.0)
    counted = make_reward_func(EXACT, error_reward=0.0, n_samples_per_prompt=4)
    rows = ROWS[:3]  # not a whole group: irrelevant to a per-sample reward
    queries = [p + "Paris<|im_end|>" for p, _ in rows]
    assert plain(queries, [p for p, _ in rows], ["paris"] * 3)["rewards"].tolist() == [1.0] * 3
    assert counted(queries, [p for p, _ in rows], ["paris"] * 3)["rewards"].tolist() == [1.0] * 3
