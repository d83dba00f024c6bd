"""An imported OpenAI `score_model` grader (the guide's example) against the loopback judge."""

from __future__ import annotations

import pytest

from rewardlab import Sample, Status, build
from rewardlab.integrations.openai_graders import grader_to_spec

pytestmark = pytest.mark.network

SCORE_MODEL = {
    "type": "score_model",
    "name": "Example score model grader",
    "input": [
        {
            "role": "user",
            "content": (
                "Score how close the reference answer is to the model answer. Score 1.0 if they are "
                "the same and 0.0 if they are different. Return just a floating point score\n\n"
                "Reference answer: {{item.reference_answer}}\n\nModel answer: {{sample.output_text}}"
            ),
        }
    ],
    "model": "o4-mini-2025-04-16",
    "sampling_params": {"temperature": 1, "top_p": 1, "seed": 42, "max_completions_tokens": 32768},
}


def test_score_model_grader_scores_like_the_documented_example(server):
    reward = build(grader_to_spec(SCORE_MODEL, judge_base_url=server.base_url))
    same = Sample(response="Paris", meta={"reference_answer": "Paris"})
    different = Sample(response="Rome", meta={"reference_answer": "Paris"})
    assert [r.score for r in reward.score_batch([same, different])] == [1.0, 0.0]
    # the two requests run concurrently: pick the one for `same` by its content
    body = next(b for b in server.requests if b["messages"][0]["content"].endswith("Model answer: Paris"))
    assert body["model"] == "o4-mini-2025-04-16"
    assert body["temperature"] == 1.0 and body["max_tokens"] == 32768
    assert body["messages"][0]["content"].endswith("Reference answer: Paris\n\nModel answer: Paris")


def test_score_model_input_text_parts_and_range(server):
    grader = {**SCORE_MODEL, "range": [0, 1], "input": [{"role": "user", "content": {"type": "input_text", "text": SCORE_MODEL["input"][0]["content"]}}]}
    reward = build(grader_to_spec(grader, judge_base_url=server.base_url))
    assert reward.score(Sample(response="x", meta={"reference_answer": "x"})).score == 1.0


def test_score_model_unparseable_is_an_error(server):
    grader = {**SCORE_MODEL, "input": [{"role": "user", "content": "GARBLE {{ sample.output_text }}"}]}
    result = build(grader_to_spec(grader, judge_base_url=server.base_url)).score(Sample(response="x"))
    assert result.status is Status.ERROR and result.components["Example_score_model_grader"].error.kind == "parse"
