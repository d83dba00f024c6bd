"""The LLM judge against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import pickle

import pytest

from rewardlab import Sample, Status, build, registry
from rewardlab.judges import LLMJudge, render
from rewardlab.judges.templates import BUILTIN
from rewardlab.templates import parse_score

pytestmark = pytest.mark.network


def judge(server, **params):
    return LLMJudge(base_url=server.base_url, model="judge-1", backoff=0.01, **params)


def test_scores_are_parsed_and_normalised(server):
    results = judge(server).score_batch([Sample(prompt="q", response="GOOD"), Sample(prompt="q", response="BAD")])
    assert [r.score for r in results] == pytest.approx([8 / 9, 1 / 9])  # [[9]], [[2]] on 1..10
    assert results[0].info["raw_mean"] == 9.0
    # the batch's requests run concurrently: find each by its content, not by arrival order
    contents = [body["messages"][1]["content"] for body in server.requests]
    assert len(contents) == 2
    assert sum("[Response]\nGOOD" in c for c in contents) == sum("[Response]\nBAD" in c for c in contents) == 1
    assert all(b["model"] == "judge-1" and b["messages"][0]["role"] == "system" for b in server.requests)


def test_unparseable_answer_is_a_parse_error_not_zero(server):
    result = judge(server).score(Sample(prompt="q", response="GARBLE"))
    assert result.status is Status.ERROR and result.error.kind == "parse"
    assert "rather not rate" in result.error.message


def test_k_sample_averaging(server):
    result = judge(server, samples=4, temperature=0.7).score(Sample(prompt="q", response="NOISY"))
    assert result.info["judge_scores"] == [4.0, 8.0, 4.0, 8.0]
    assert result.info["raw_mean"] == 6.0
    assert all(b["temperature"] == 0.7 for b in server.requests)


def test_retry_with_backoff_on_503_and_429(server):
    j = judge(server, retries=3)
    flaky = j.score(Sample(prompt="q", response="FLAKY"))
    limited = j.score(Sample(prompt="q", response="RATELIMIT"))
    assert flaky.info["raw_mean"] == 7.0 and limited.info["raw_mean"] == 5.0
    assert j.usage.retries == 3  # two 503s, one 429


def test_retries_exhausted_is_a_remote_error(server):
    result = judge(server, retries=1).score(Sample(prompt="q", response="FLAKY"))
    assert result.status is Status.ERROR and result.error.kind == "remote"
    assert "503" in result.error.message


def test_timeout_is_a_timeout_error_and_the_batch_goes_on(server):
    # SLOW never answers before the server stops; 2 s leaves GOOD time to answer under load
    results = judge(server, timeout=2.0, retries=0).score_batch([Sample(prompt="q", response="SLOW"), Sample(prompt="q", response="GOOD")])
    assert results[0].status is Status.ERROR and results[0].error.kind == "timeout"
    assert results[1].score == pytest.approx(8 / 9)


def test_client_errors_are_not_retried(server):
    j = LLMJudge(base_url=server.base_url, model="missing", backoff=0.01)
    result = j.score(Sample(prompt="q", response="GOOD"))
    assert result.error.kind == "remote" and "404" in result.error.message
    assert len(server.requests) == 1


def test_unreachable_endpoint_is_a_remote_error():
    j = LLMJudge(base_url="http://127.0.0.1:9/v1", model="m", retries=1, backoff=0.01, timeout=2)
    result = j.score(Sample(prompt="q", response="GOOD"))
    assert result.status is Status.ERROR and result.error.kind == "remote"


def test_cache_in_the_sqlite_store_avoids_repeat_requests(server, tmp_path):
    path = str(tmp_path / "judge.sqlite")
    samples = [Sample(prompt="q", response="GOOD"), Sample(prompt="q", response="BAD")]
    first = judge(server, cache=path).score_batch(samples)
    assert len(server.requests) == 2
    again = judge(server, cache=path)  # a new judge, same description: same cache key
    second = again.score_batch(samples)
    assert len(server.requests) == 2 and again.usage.cache_hits == 2
    assert [r.score for r in second] == [r.score for r in first]
    judge(server, cache=path, samples=2).score_batch(samples[:1])  # other params: other key
    assert len(server.requests) == 4


def test_a_lone_surrogate_is_sent_as_the_replacement_character_and_cached(server, tmp_path):
    # A response cut inside a surrogate pair: a request and the cache key are UTF-8, which has
    # no code for it.
    samples = [Sample(prompt="q \ud83d", response="GOOD \udc00"), Sample(prompt="q", response="BAD")]
    results = judge(server, cache=str(tmp_path / "judge.sqlite")).score_batch(samples)
    assert [r.status for r in results] == [Status.OK, Status.OK]
    assert results[0].score == pytest.approx(8 / 9)
    sent = next(b["messages"][1]["content"] for b in server.requests if "GOOD" in b["messages"][1]["content"])
    assert "GOOD \ufffd" in sent and "q \ufffd" in sent
    again = judge(server, cache=str(tmp_path / "judge.sqlite"))
    assert again.score_batch(samples[:1])[0].score == results[0].score and again.usage.cache_hits == 1


def test_errors_are_not_cached(server, tmp_path):
    path = str(tmp_path / "judge.sqlite")
    judge(server, cache=path).score(Sample(prompt="q", response="GARBLE"))
    judge(server, cache=path).score(Sample(prompt="q", response="GARBLE"))
    assert len(server.requests) == 2


def test_token_and_cost_accounting(server):
    j = judge(server, price_per_1k_prompt=1.0, price_per_1k_completion=2.0)
    result = j.score(Sample(prompt="q", response="GOOD"))
    prompt_tokens = sum(len(m["content"].split()) for m in server.requests[0]["messages"])
    assert result.info["prompt_tokens"] == prompt_tokens
    assert result.info["completion_tokens"] == 5  # "Clear and correct. Rating: [[9]]"
    assert result.info["cost"] == pytest.approx((prompt_tokens + 2 * 5) / 1000)
    assert j.usage.to_dict()["requests"] == 1 and j.usage.cost == pytest.approx(result.info["cost"])


def test_api_key_comes_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-test")
    judge(server, api_key_env="MY_JUDGE_KEY").score(Sample(prompt="q", response="GOOD"))
    judge(server, api_key_env="UNSET_VARIABLE_XYZ").score(Sample(prompt="q", response="BAD"))
    assert server.auth == ["Bearer sk-test", None]


def test_pass_fail_template_with_reference(server):
    j = judge(server, template="pass_fail")
    ok = j.score(Sample(prompt="q", response="PASSCASE", reference="r"))
    bad = j.score(Sample(prompt="q", response="FAILCASE", reference="r"))
    assert (ok.score, bad.score) == (1.0, 0.0)
    missing = j.score(Sample(prompt="q", response="PASSCASE"))
    assert missing.error.kind == "invalid_input" and "reference" in missing.error.message


def test_custom_messages_and_raw_scale(server):
    messages = [{"role": "user", "content": "Grade {{ sample.output_text }} against {{ item.answer }}"}]
    j = judge(server, messages=messages, scale=(0, 10), normalize=False)
    result = j.score(Sample(response="GOOD", reference={"answer": "42"}))
    assert result.score == 9.0 and j.range == (0.0, 10.0)
    assert server.requests[0]["messages"] == [{"role": "user", "content": "Grade GOOD against 42"}]


def test_judge_in_a_spec_and_a_worker_process(server):
    spec = {"reward": {"name": "j", "components": [{"name": "judge", "use": "judge.llm", "params": {"base_url": server.base_url, "model": "m"}}]}}
    reward = build(spec)
    assert reward.score(Sample(prompt="q", response="GOOD")).components["judge"].score == pytest.approx(8 / 9)
    clone = pickle.loads(pickle.dumps(registry.create("judge.llm", {"base_url": server.base_url, "model": "m"})))
    assert clone.score(Sample(prompt="q", response="BAD")).score == pytest.approx(1 / 9)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Rating: [[7]]", 7.0), ("[[3]] then [[8]]", 8.0), ("no score", None), ("[[7.5]]", 7.5)],
)
def test_parse_score_table(text, expected):
    import re

    assert parse_score(text, re.compile(BUILTIN["score_1_10"][2])) == expected


def test_bad_construction():
    with pytest.raises(ValueError, match="http"):
        LLMJudge(base_url="localhost:8000", model="m")
    with pytest.raises(ValueError, match="scale"):
        LLMJudge(base_url="http://x/v1", model="m", scale=(5, 1))


def test_render_serialises_non_strings():
    assert render("{{ meta.k }} {{ reference }}", Sample(response="r", reference=[1, 2], meta={"k": {"a": 1}})) == '{"a": 1} [1, 2]'


def test_rubric_template_reads_the_rubric_from_the_row(server):
    j = judge(server, template="rubric_1_10")
    result = j.score(Sample(prompt="q", response="GOOD", meta={"rubric": "- mentions Paris"}))
    assert result.score == pytest.approx(8 / 9)
    assert "[Rubric]\n- mentions Paris" in server.requests[0]["messages"][1]["content"]
    missing = j.score(Sample(prompt="q", response="GOOD"))
    assert missing.error.kind == "invalid_input" and "item.rubric" in missing.error.message
