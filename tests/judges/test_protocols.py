"""Judge protocols against the loopback server: pairwise swap, k-vote, P(yes), cache, dead endpoints."""

from __future__ import annotations

import pickle
import time

import pytest
from judge_server import JudgeServer

import rewardlab
from rewardlab import Sample, Status
from rewardlab.judges import LLMJudge, PairwiseJudge, p_yes
from rewardlab.judges.protocols import vote_scores

pytestmark = pytest.mark.network


def pair(server, **params):
    return PairwiseJudge(base_url=server.base_url, model="judge-1", backoff=0.01, **params)


def vs(response, baseline):
    return Sample(prompt="q", response=response, meta={"baseline": baseline})


def test_order_swap_removes_the_planted_position_bias(server):
    equals = [vs(f"GOOD answer {i}", f"GOOD other {i}") for i in range(4)]
    biased = [r.score for r in pair(server, swap=False).score_batch(equals)]
    fair = pair(server, swap=True).score_batch(equals)
    assert biased == [1.0] * 4  # the judge always prefers position A
    assert [r.score for r in fair] == [0.5] * 4 and not any(r.info["consistent"] for r in fair)


def test_a_really_better_answer_wins_in_both_orders(server):
    better, worse = pair(server).score_batch([vs("GOOD", "BAD"), vs("BAD", "GOOD")])
    assert (better.score, worse.score) == (1.0, 0.0)
    assert better.info["verdicts"] == ["A", "B"] and better.info["consistent"]


def test_tie_verdicts_score_one_half(server):
    result = pair(server).score(vs("TIE a", "TIE b"))
    assert result.score == 0.5 and result.info["verdicts"] == ["C", "C"] and result.info["consistent"]


def test_missing_baseline_is_invalid_input(server):
    result = pair(server).score(Sample(prompt="q", response="GOOD"))
    assert result.status is Status.ERROR and result.error.kind == "invalid_input" and "baseline" in result.error.message


def test_pairwise_call_cache_serves_repeat_calls(server, tmp_path):
    path = str(tmp_path / "calls.sqlite")
    pair(server, cache=path).score(vs("GOOD", "BAD"))
    again = pair(server, cache=path)
    result = again.score(vs("GOOD", "BAD"))
    assert len(server.requests) == 2 and again.usage.cache_hits == 2 and result.score == 1.0
    assert result.info["cost"] == 0.0 and result.info["prompt_tokens"] == 0  # a cached call costs nothing


def test_pairwise_in_a_spec_and_pickled(server):
    spec = {"reward": {"name": "p", "components": [{"name": "vs", "use": "judge.pairwise", "params": {"base_url": server.base_url, "model": "m"}}]}}
    assert [r.score for r in rewardlab.score(spec, [{"prompt": "q", "response": "GOOD", "meta": {"baseline": "BAD"}}])] == [1.0]
    clone = pickle.loads(pickle.dumps(pair(server)))
    assert clone.score(vs("BAD", "GOOD")).score == 0.0


def test_k_vote_majority_is_self_consistency(server):
    j = LLMJudge(base_url=server.base_url, model="m", samples=3, aggregate="majority", backoff=0.01)
    result = j.score(Sample(prompt="q", response="NOISY"))  # [[4]], [[8]], [[4]]
    assert result.info["raw_vote"] == 4.0 and result.score == pytest.approx(3 / 9) and not result.info["vote_tie"]


def test_vote_tie_takes_the_mean_of_the_modes():
    assert vote_scores([4.0, 8.0], "majority") == (6.0, True)
    assert vote_scores([4.0, 8.0, 8.0], "majority") == (8.0, False)


def test_p_yes_from_logprobs(server):
    j = LLMJudge(base_url=server.base_url, model="m", template="yes_no", p_yes=True, backoff=0.01)
    high, low = j.score_batch([Sample(prompt="q", response="YESNO P=0.7"), Sample(prompt="q", response="YESNO P=0.2")])
    assert high.score == pytest.approx(0.7 / (0.7 + 0.3 * 0.9))
    assert low.score == pytest.approx(0.2 / (0.2 + 0.8 * 0.9))
    assert server.requests[0]["logprobs"] is True and server.requests[0]["top_logprobs"] == 20
    assert server.requests[0]["max_tokens"] == 1


def test_p_yes_without_logprobs_is_a_parse_error(server):
    j = LLMJudge(base_url=server.base_url, model="m", p_yes=True, backoff=0.01)
    result = j.score(Sample(prompt="q", response="GOOD"))  # the server sends no logprobs here
    assert result.status is Status.ERROR and result.error.kind == "parse" and "logprobs" in result.error.message


def test_p_yes_ignores_other_tokens_and_merges_case():
    logprobs = {"content": [{"token": "Yes", "top_logprobs": [{"token": "Yes", "logprob": -1.0}, {"token": " yes", "logprob": -1.0}, {"token": "No", "logprob": -0.5}, {"token": "!", "logprob": -0.1}]}]}
    import math

    yes, no = 2 * math.exp(-1.0), math.exp(-0.5)
    assert p_yes(logprobs) == pytest.approx(yes / (yes + no))
    assert p_yes({"content": [{"token": "x", "top_logprobs": [{"token": "x", "logprob": 0.0}]}]}) is None


def test_malformed_json_body_is_a_remote_error_naming_the_body(server):
    result = LLMJudge(base_url=server.base_url, model="m", backoff=0.01).score(Sample(prompt="q", response="MALFORMED"))
    assert result.status is Status.ERROR and result.error.kind == "remote" and "{not json" in result.error.message


def test_dead_endpoint_gives_error_rows_never_zero_and_counts_them():
    j = LLMJudge(base_url="http://127.0.0.1:9/v1", model="m", retries=1, backoff=0.01, timeout=2)
    results = j.score_batch([Sample(prompt="q", response=f"GOOD {i}") for i in range(5)])
    assert all(r.status is Status.ERROR and r.error.kind == "remote" and r.score is None for r in results)
    assert j.usage.errors == 5 and j.usage.retries == 5 and j.usage.requests == 0
    spec = {"reward": {"name": "p", "components": [{"name": "vs", "use": "judge.pairwise", "params": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "retries": 0}}]}}
    rows = rewardlab.score(spec, [{"prompt": "q", "response": "a", "meta": {"baseline": "b"}}] * 3)
    assert [r.status for r in rows] == [Status.ERROR] * 3 and all(r.score is None for r in rows)


def test_batches_run_concurrently_within_the_bound():
    # 100 calls at 50 ms each take >= 5 s one after another; 25 at a time needs >= 0.2 s.
    with JudgeServer(latency=0.05) as slow:
        j = LLMJudge(base_url=slow.base_url, model="m", concurrency=25)
        started = time.perf_counter()
        results = j.score_batch([Sample(prompt="q", response=f"GOOD {i}") for i in range(100)])
        elapsed = time.perf_counter() - started
    assert all(r.is_ok for r in results) and j.usage.requests == 100
    assert 0.2 <= elapsed < 2.5  # >= 2x faster than sequential even on a loaded machine


def test_position_bias_measured_by_the_order_swap_consistency_metric(server):
    from rewardlab.evaluate.pairwise import judge_consistency

    tie = {"A": "A", "B": "B", "C": "tie"}
    equals = pair(server).score_batch([vs(f"GOOD {i}", f"GOOD other {i}") for i in range(3)])
    clear = pair(server).score_batch([vs("GOOD", "BAD"), vs("BAD", "GOOD")])
    biased = judge_consistency([tie[r.info["verdicts"][0]] for r in equals], [tie[r.info["verdicts"][1]] for r in equals])
    fair = judge_consistency([tie[r.info["verdicts"][0]] for r in clear], [tie[r.info["verdicts"][1]] for r in clear], labels=["A", "B"])
    assert (biased.consistency, biased.inconsistent) == (0.0, 3)
    assert (fair.consistency, fair.accuracy) == (1.0, 1.0)


def test_p_yes_is_a_probability_even_without_normalize(server):
    j = LLMJudge(base_url=server.base_url, model="m", template="yes_no", p_yes=True, normalize=False, backoff=0.01)
    assert j.range == (0.0, 1.0) and j.score(Sample(prompt="q", response="YESNO P=0.3")).is_ok
