"""`agent.rank`: a group of trajectories ranked in one judge call per order, position bias removed
by asking both orders (against a real HTTP judge server with a planted position bias)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from rank_server import RankServer

import rewardlab
from rewardlab.agent.judge import GroupRank, render_trajectory
from rewardlab.core.reward import group_keys
from rewardlab.core.sample import Sample


@pytest.fixture
def server() -> Iterator[RankServer]:
    with RankServer() as s:
        yield s


def _row(city: str, group: str = "g1", task: str = "Book two nights in Paris.") -> dict[str, Any]:
    return {"prompt": task, "group": group, "response": [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "book", "arguments": {"city": city}}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Error: sold out" if city == "Oslo" else "B-17"},
        {"role": "assistant", "content": f"Booked {city}."}]}  # fmt: skip


def test_render_shows_calls_results_and_errors() -> None:
    text = render_trajectory(Sample.from_dict(_row("Oslo")).trajectory)
    assert text.splitlines() == ['[call] book({"city": "Oslo"})', "[tool error] Error: sold out", "[assistant] Booked Oslo."]


def test_swapped_orders_cancel_the_position_bias(server: RankServer) -> None:
    rows = [_row("Paris"), _row("Paris")]  # equally good
    biased = GroupRank(base_url=server.base_url, model="m", swap=False).score_batch([Sample.from_dict(r) for r in rows])
    assert [r.score for r in biased] == [1.0, 0.8]  # the first shown wins
    fair = GroupRank(base_url=server.base_url, model="m").score_batch([Sample.from_dict(r) for r in rows])
    assert [r.score for r in fair] == [0.9, 0.9]
    assert fair[0].info["scores"] == [10.0, 8.0] and fair[0].info["consistent"] is False


def test_one_call_per_order_per_group_and_groups_apart(server: RankServer) -> None:
    rows = [_row("Oslo"), _row("Paris"), _row("Paris", group="g2"), _row("Oslo", group="g2"), _row("Oslo", group="g2")]
    results = GroupRank(base_url=server.base_url, model="m").score_batch([Sample.from_dict(r) for r in rows])
    # g2 forward: Paris 8+2, Oslo 3, Oslo 3; reversed: Oslo 3+2, Oslo 3, Paris 8. Reversal moves the
    # first-position bonus between the ends only: the middle trajectory never gets it.
    assert [r.score for r in results] == [0.4, 0.9, 0.9, 0.3, 0.4]
    assert results[0].info["consistent"] is True and results[2].info["group_size"] == 3
    assert len(server.requests) == 4  # two groups, two orders each


def test_an_answer_without_scores_is_a_parse_error_for_the_group(server: RankServer) -> None:
    rows = [_row("Paris", task="GARBLE"), _row("Oslo", task="GARBLE")]
    results = GroupRank(base_url=server.base_url, model="m").score_batch([Sample.from_dict(r) for r in rows])
    assert all(r.status == "error" and r.error is not None and r.error.kind == "parse" for r in results)


def test_a_sample_without_a_group_is_an_invalid_input_error(server: RankServer) -> None:
    row = _row("Paris")
    del row["group"]
    (result,) = GroupRank(base_url=server.base_url, model="m").score_batch([Sample.from_dict(row)])
    assert result.status == "error" and result.error is not None and result.error.kind == "invalid_input"


def test_it_is_a_group_reward_in_a_spec(server: RankServer) -> None:
    spec = {"reward": {"name": "r", "components": [{"name": "rank", "use": "agent.rank", "params": {"base_url": server.base_url, "model": "m"}}]}}
    reward = rewardlab.build(spec)
    assert group_keys(reward) == frozenset({"group"})
    results = rewardlab.score(spec, [_row("Oslo"), _row("Paris")])
    assert [r.score for r in results] == [0.4, 0.9]


def test_an_llm_judge_rates_the_rendered_trajectory(server: RankServer) -> None:
    from rewardlab.agent.judge import TrajectoryJudge

    judge = TrajectoryJudge(params={"base_url": server.base_url, "model": "m"})
    results = judge.score_batch([Sample.from_dict(_row("Paris")), Sample.from_dict(_row("Oslo"))])
    assert [r.score for r in results] == pytest.approx([(9 - 1) / 9, (2 - 1) / 9])  # score_1_10 mapped to [0, 1]
    assert "[call] book" in server.requests[0]["messages"][-1]["content"]


def test_a_pairwise_judge_compares_two_trajectories_in_both_orders(server: RankServer) -> None:
    from rewardlab.agent.judge import TrajectoryJudge

    judge = TrajectoryJudge(judge="judge.pairwise", params={"base_url": server.base_url, "model": "m"})
    good_vs_bad = Sample.from_dict({**_row("Paris"), "baseline": _row("Oslo")["response"]})
    equal = Sample.from_dict({**_row("Paris"), "baseline": _row("Paris")["response"]})
    results = judge.score_batch([good_vs_bad, equal])
    assert [r.score for r in results] == [1.0, 0.5]  # the position bias cancels between equals
    assert results[1].info["consistent"] is False
