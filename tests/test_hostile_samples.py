"""Every built-in reward that builds without a model, a server or a file, on hostile samples.

The samples are what a policy or a data set sends when things go wrong: text cut inside a
surrogate pair, NUL and control characters, megabyte responses, references of every JSON type,
values nested past the parsers' limits, chat messages with missing or odd parts, bracket and
markup bombs. For each reward, one batch holds them all between two ordinary samples, and:

- the call returns one result per sample, within a bound, and raises nothing;
- no result is a `crash` (an exception the reward did not expect): a hostile sample gets a score
  or a typed error;
- an `ok` result has a finite score, and every result can be written out (`runner.io.dumps`);
- the ordinary samples get the result they get alone: one bad row never changes another.

A reward added to the registry is in this test unless it needs a model, a server or a file;
`PARAMS` gives the few that need a parameter a plain one. The Hugging Face rewards run on tiny
models saved from a config (`models.hf_tiny`): their tokenizers are where hostile text breaks.
"""

from __future__ import annotations

import math
import time

import pytest

from deadlines import nested
from rewardlab.compose import build
from rewardlab.core import Sample, Status
from rewardlab.core.registry import registry
from rewardlab.runner.io import dumps

#: rewards that need a model, an HTTP server, a file or a reward machine to exist at all
NEEDS_MORE = {
    "agent.judge", "agent.rank", "graders.python", "judge.llm", "judge.pairwise", "judge.rubric", "learn.demo",
    "learn.goal_baseline_text", "model.hf", "model.hf_prm", "model.prm", "model.rm", "multiobj.curve", "rm.trace",
}  # fmt: skip
PARAMS = {
    "graders.string_check": {"operation": "eq"},
    "graders.text_similarity": {"evaluation_metric": "fuzzy_match"},
    "text.regex": {"pattern": "a+"},
    "shaping.cosine": {"max_length": 100},
    "shaping.adaptive_length": {"max_length": 100},
    "shaping.soft_overlong": {"max_length": 100, "cache": 20},
}
HOSTILE = {
    "lone surrogate in the response": {"response": "ans \ud800 4", "reference": "4"},
    "lone surrogate in the reference": {"response": "4", "reference": "4\udc00"},
    "NUL bytes": {"prompt": "p\x00", "response": "\x00<answer>4</answer>\x00", "reference": "4\x00"},
    "control and bidi characters": {"response": "\x1b[31m4\x1b[0m\u202e\u200b", "reference": "4"},
    "a 300 KB response": {"response": "a" * 300_000, "reference": "4"},
    "30,000 lines": {"response": ("x" * 50 + "\n") * 30_000, "reference": "4"},
    "empty": {"prompt": "", "response": "", "reference": ""},
    "whitespace": {"prompt": " ", "response": " \n\t ", "reference": " "},
    "reference a list": {"response": "4", "reference": ["4", 5, None]},
    "reference an object": {"response": "4", "reference": {"a": {"b": [1, 2]}}},
    "reference a number": {"response": "4", "reference": 4},
    "reference NaN": {"response": "4", "reference": float("nan")},
    "reference a boolean": {"response": "4", "reference": True},
    "reference nested 800 deep": {"response": "4", "reference": nested(800)},
    "meta nested 800 deep": {"response": "4", "reference": "4", "meta": {"m": nested(800), "label": nested(50)}},
    "chat with multi-part content": {"prompt": [{"role": "user", "content": "q"}],
                                     "response": [{"role": "assistant", "content": [{"type": "text", "text": "4"}, {"type": "image"}]}],
                                     "reference": "4"},
    "chat with missing parts": {"prompt": [{"role": "user"}],
                                "response": [{"role": "assistant", "content": None,
                                              "tool_calls": [{"function": {"name": "f", "arguments": "{bad json"}}]}],
                                "reference": "4"},
    "hostile steps": {"response": "4", "steps": ("", "\ud800", "x" * 100_000), "reference": "4"},
    "bracket bomb": {"response": "[" * 50_000 + "]" * 50_000, "reference": "4"},
    "unclosed brackets": {"response": "[1," * 30_000, "reference": "4"},
    "markup bomb": {"response": "<" * 50_000 + "answer" + "<" * 50_000, "reference": "4"},
    "boxed bomb": {"response": "\\boxed{" * 20_000 + "4" + "}" * 20_000, "reference": "4"},
    "other digits": {"response": "\u0664\uff14 \u0664", "reference": "4"},
    "meta numbers NaN": {"response": "4", "reference": "4",
                         "meta": {"num_tokens": float("nan"), "objective_weights": [float("nan"), 1.0], "correct": float("nan")}},
    "meta numbers of the wrong type": {"response": "4", "reference": "4",
                                       "meta": {"num_tokens": "ten", "completion_ids": "abc", "objective_weights": {"a": "x"}, "correct": "yes"}},
    "meta numbers huge": {"response": "4", "reference": "4", "meta": {"num_tokens": 10**30, "completion_ids": list(range(200_000))}},
    "meta numbers negative": {"response": "4", "reference": "4", "meta": {"num_tokens": -5, "completion_ids": [-1, -2]}},
}  # fmt: skip
ORDINARY = {"prompt": "What is 2+2?", "response": "<think>ok</think><answer>4</answer> \\boxed{4}", "reference": "4"}


def rewards() -> list[str]:
    return [name for name in sorted(registry.names()) if name not in NEEDS_MORE]


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """Params of `model.hf` (a Llama reward model) and `model.hf_prm` (a Qwen2 token classifier)."""
    pytest.importorskip("transformers")
    from rewardlab.models.hf_tiny import save_tiny

    root = tmp_path_factory.mktemp("tiny")
    return {"model.hf": {"model": str(save_tiny(root / "rm", "llama"))},
            "model.hf_prm": {"model": str(save_tiny(root / "prm", "qwen2", kind="token", num_labels=2))}}  # fmt: skip


def test_the_list_of_rewards_is_not_empty_and_knows_every_name_it_skips():
    assert len(rewards()) >= 30
    assert set(registry.names()) >= NEEDS_MORE and set(PARAMS) <= set(rewards())


@pytest.mark.slow
@pytest.mark.parametrize("name", rewards())
def test_hostile_samples_get_a_score_or_a_typed_error_and_leave_the_others_alone(name):
    check_on_hostile_samples(name, PARAMS.get(name, {}))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["model.hf", "model.hf_prm"])
def test_hugging_face_rewards_on_hostile_samples(name, tiny_models):
    check_on_hostile_samples(name, tiny_models[name])


def check_on_hostile_samples(name: str, params: dict[str, object]) -> None:
    reward = build({"reward": {"name": "r", "components": [{"name": "c", "use": name, "params": params}]}})
    # Group rewards vote within a group: the ordinary samples are a group of their own.
    ordinary = Sample(**ORDINARY, group="ordinary")
    hostile = [Sample(**fields, group="hostile") for fields in HOSTILE.values()]
    alone = reward.score_batch([ordinary, ordinary])
    started = time.monotonic()
    results = reward.score_batch([ordinary, *hostile, ordinary])
    assert time.monotonic() - started < 60, "a hostile batch took over a minute"
    assert len(results) == len(hostile) + 2
    assert [r.status for r in (results[0], results[-1])] == [r.status for r in alone]
    # a model's score depends on its batch's padding only in float rounding (tested to 1e-5)
    for got, want in zip((results[0], results[-1]), alone, strict=True):
        assert got.score == (None if want.score is None else pytest.approx(want.score, rel=1e-5, abs=1e-6))
    for what, result in zip(HOSTILE, results[1:-1], strict=True):
        component = result.components.get("c", result)
        if component.error is not None:
            assert component.error.kind != "crash", f"{name} on {what}: {component.error.message}"
        if result.status is Status.OK:
            assert result.score is not None and math.isfinite(result.score), (name, what, result)
        dumps(result.to_dict())  # the runner and the server can write it
