"""The OpenAI-compatible step generator against a real HTTP server on loopback."""

from __future__ import annotations

import pytest
from completions_server import CompletionsServer

from rewardlab.errors import GenerationError
from rewardlab.select.generate import Problem, StepScorer
from rewardlab.select.openai_generator import OpenAIStepGenerator
from rewardlab.select.search import beam_search, best_of_n_search


class LengthPRM:
    """A PRM that prefers longer steps (enough to drive a search in a test)."""

    def score(self, problem, prefixes):
        return [min(len(p[-1].text) / 40, 1.0) for p in prefixes]


@pytest.fixture
def server():
    with CompletionsServer() as running:
        yield running


def _gen(server, **kw):
    return OpenAIStepGenerator(server.base_url, "fake-model", backoff=0.0, **kw)


def test_one_request_per_round_stops_at_the_delimiter(server):
    gen = _gen(server)
    steps = gen.extend(Problem("What is 2 + 2?"), [(), ()])
    assert [s.text for s in steps] == ["Step 1: work on part 1.", "Step 1: work on part 1."]
    body = server.requests[-1]
    assert body["stop"] == ["\n\n"] and body["model"] == "fake-model" and len(body["prompt"]) == 2
    assert "What is 2 + 2?" in body["prompt"][0] and "\\boxed{}" in body["prompt"][0]


def test_prefix_steps_are_sent_back_joined_by_the_delimiter(server):
    gen = _gen(server)
    problem = Problem("What is 2 + 2?")
    first = gen.extend(problem, [()])[0]
    second = gen.extend(problem, [(first,)])[0]
    assert server.requests[-1]["prompt"][0].endswith("Step 1: work on part 1.\n\n")
    assert second.text.startswith("Step 2") and not second.final


def test_a_boxed_answer_ends_the_solution_and_tokens_are_exact(server):
    result = best_of_n_search(_gen(server), LengthPRM(), Problem("What is 2 + 2?"), 2)
    assert result.answer == "4"
    assert len(result.solution.steps) == 3
    assert result.tokens == 2 * sum(len(s.text.split()) for s in result.solution.steps)


def test_end_of_sequence_without_answer_is_a_final_step_with_no_answer(server):
    result = best_of_n_search(_gen(server), LengthPRM(), Problem("EOS please"), 1)
    assert result.solution.complete and result.answer is None


def test_beam_search_runs_over_http(server):
    assert isinstance(LengthPRM(), StepScorer)
    result = beam_search(_gen(server), LengthPRM(), Problem("What is 2 + 2?"), width=2, expand=2)
    assert result.answer == "4" and len(result.finished) == 2
    assert max(len(r["prompt"]) for r in server.requests) == 4  # width x expand prompts in one request


def test_a_503_is_retried(server):
    step = _gen(server).extend(Problem("FLAKY"), [()])[0]
    assert step.text.startswith("Step 1")


def test_unknown_model_is_an_error_naming_the_endpoint(server):
    gen = OpenAIStepGenerator(server.base_url, "missing", backoff=0.0)
    with pytest.raises(GenerationError, match="404"):
        gen.extend(Problem("x"), [()])


def test_a_body_that_is_not_json_is_an_error(server):
    with pytest.raises(GenerationError, match="not JSON"):
        _gen(server).extend(Problem("BADJSON"), [()])


def test_unreachable_server_fails_after_retries():
    gen = OpenAIStepGenerator("http://127.0.0.1:9/v1", "m", retries=1, backoff=0.0, timeout=2.0)
    with pytest.raises(GenerationError, match="2 attempt"):
        gen.extend(Problem("x"), [()])


def test_without_stop_reason_or_logprobs_usage_is_shared_and_answers_still_end():
    with CompletionsServer(stop_reasons=False) as plain:
        gen = OpenAIStepGenerator(plain.base_url, "fake-model", backoff=0.0)
        steps = gen.extend(Problem("What is 2 + 2?"), [(), ()])
        assert sum(s.tokens for s in steps) == 2 * 6  # usage words shared out: "Step 1: work on part 1." twice
        result = best_of_n_search(gen, LengthPRM(), Problem("What is 2 + 2?"), 1)
        assert result.answer == "4"


def test_bad_base_url_is_refused():
    with pytest.raises(GenerationError, match="http"):
        OpenAIStepGenerator("localhost:8000", "m")


@pytest.mark.parametrize(("word", "message"), [
    ("DUPINDEX", "choice indices"),
    ("NOTOBJECT", "not an object"),
    ("BADTEXT", "text is not a string"),
    ("BADUSAGE", "usage as list"),
])  # fmt: skip
def test_a_malformed_reply_is_a_generation_error_naming_what_is_wrong(server, word, message):
    with pytest.raises(GenerationError, match=message):
        _gen(server).extend(Problem(f"What is 2 + 2? {word}"), [(), ()])


def test_a_malformed_reply_costs_its_problem_only(server):
    from rewardlab.select.batch import SearchOptions, UnscoredVote, search_problems

    problems = [Problem("What is 2 + 2?", reference="4"), Problem("DUPINDEX", reference="4"), Problem("2 + 2?", reference="4")]
    rows = list(search_problems(problems, _gen(server), UnscoredVote(), SearchOptions(method="majority", n=2)))
    assert [r["answer"] for r in rows] == ["4", None, "4"]
    assert "choice indices" in rows[1]["error"] and rows[0].get("error") is None
