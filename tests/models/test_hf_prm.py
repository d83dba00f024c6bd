"""`model.hf_prm`: step scores of config-built token-classification and step-tag PRMs equal the
model card's own recipe run with transformers (to 1e-5)."""

from __future__ import annotations

import random

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForTokenClassification, AutoTokenizer

from rewardlab.compose import build
from rewardlab.core import Sample, Status
from rewardlab.errors import ConfigError
from rewardlab.models.hf_prm import HFProcessReward
from rewardlab.models.hf_tiny import WORDS, save_tiny

SYSTEM = "Please reason step by step"


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS[:200]) for _ in range(n))


def solutions(n: int = 8, seed: int = 0) -> list[Sample]:
    rng = random.Random(seed)
    return [Sample(prompt=_text(rng, rng.randint(2, 20)),
                   steps=tuple(_text(rng, rng.randint(1, 12)) for _ in range(rng.randint(1, 5))),
                   response="unused") for _ in range(n)]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("prm")
    return {
        "qwen2": save_tiny(root / "qwen2", "qwen2", kind="token", num_labels=2, seed=10),
        "llama": save_tiny(root / "llama", "llama", kind="token", num_labels=1, seed=11),
        "bert": save_tiny(root / "bert", "bert", kind="token", num_labels=2, seed=12, chat_template=False),
        "shepherd": save_tiny(root / "shepherd", "llama", kind="causal_lm", seed=13, chat_template=False),
    }


def qwen_prm_card(directory, samples, *, system: str | None) -> list[list[float]]:
    """Qwen2.5-Math-PRM's model card recipe, step for step: steps joined by <extra_0>, the chat
    template rendered, `tokenizer.encode`, softmax over the labels at the separators, index 1."""
    tok = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForTokenClassification.from_pretrained(directory).eval()
    sep = tok.encode("<extra_0>")[0]
    out = []
    with torch.no_grad():
        for s in samples:
            messages = ([{"role": "system", "content": system}] if system else []) + [
                {"role": "user", "content": s.prompt},
                {"role": "assistant", "content": "<extra_0>".join(s.steps) + "<extra_0>"}]
            text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=False)
            ids = tok.encode(text, return_tensors="pt")
            probs = model(input_ids=ids).logits[0].softmax(-1)  # (T, 2)
            out.append(probs[ids[0] == sep][:, 1].tolist())
    return out


def test_qwen_style_prm_equals_the_model_card_recipe(dirs):
    samples = solutions()
    spec = {"reward": {"name": "prm", "components": [{"name": "prm", "use": "model.hf_prm", "params": {
        "model": str(dirs["qwen2"]), "system_prompt": SYSTEM, "max_tokens_per_batch": 400}}]}}
    got = [r.components["prm"] for r in build(spec).score_batch(samples)]
    for expected, result in zip(qwen_prm_card(dirs["qwen2"], samples, system=SYSTEM), got, strict=True):
        assert result.status is Status.OK
        assert list(result.steps) == pytest.approx(expected, abs=1e-5)
        assert result.score == pytest.approx(min(expected), abs=1e-5)
    assert len({round(s, 4) for r in got for s in r.steps}) > 10  # the steps' scores really differ


@pytest.mark.parametrize("template", [True, False])
def test_one_label_token_classifier_gives_sigmoids(dirs, template):
    samples = solutions(6, seed=1)
    tok = AutoTokenizer.from_pretrained(dirs["llama"])
    model = AutoModelForTokenClassification.from_pretrained(dirs["llama"]).eval()
    prm = HFProcessReward(model=str(dirs["llama"]), chat_template=template, aggregate="product")
    for sample, result in zip(samples, prm.score_batch(samples), strict=True):
        content = "".join(step + "<extra_0>" for step in sample.steps)
        if template:
            enc = tok.apply_chat_template([{"role": "user", "content": sample.prompt},
                                           {"role": "assistant", "content": content}], return_dict=True,
                                          return_tensors="pt")
        else:
            enc = tok(sample.prompt, content, return_tensors="pt")
        with torch.no_grad():
            logits = model(**enc).logits[0, :, 0]
        expected = torch.sigmoid(logits[enc["input_ids"][0] == tok.convert_tokens_to_ids("<extra_0>")])
        assert list(result.steps) == pytest.approx(expected.tolist(), abs=1e-5)
        assert result.score == pytest.approx(float(expected.prod()), abs=1e-5)


def test_bert_token_classifier_without_template(dirs):
    samples = solutions(5, seed=2)
    tok = AutoTokenizer.from_pretrained(dirs["bert"])
    model = AutoModelForTokenClassification.from_pretrained(dirs["bert"]).eval()
    prm = HFProcessReward(model=str(dirs["bert"]), aggregate="last")
    assert prm.inputs.use_template is False  # the tokenizer has no template
    for sample, result in zip(samples, prm.score_batch(samples), strict=True):
        enc = tok(sample.prompt, "".join(f"{s} <extra_0>" for s in sample.steps), return_tensors="pt")
        with torch.no_grad():
            probs = model(**enc).logits[0].softmax(-1)[:, 1]
        expected = probs[enc["input_ids"][0] == tok.convert_tokens_to_ids("<extra_0>")]
        assert list(result.steps) == pytest.approx(expected.tolist(), abs=1e-5)


def test_math_shepherd_style_causal_lm_reads_good_and_bad_tokens(dirs):
    """Math-Shepherd's recipe: `question + " " + solution`, the step tag after each step,
    softmax over the logits of ("+", "-") at each tag, P("+")."""
    samples = solutions(5, seed=3)
    tok = AutoTokenizer.from_pretrained(dirs["shepherd"])
    model = AutoModelForCausalLM.from_pretrained(dirs["shepherd"]).eval()
    prm = HFProcessReward(model=str(dirs["shepherd"]), after_step=" <extra_0> ", good_token="+", bad_token="-",
                          aggregate="mean")
    good, bad, tag = (tok.convert_tokens_to_ids(t) for t in ("+", "-", "<extra_0>"))
    for sample, result in zip(samples, prm.score_batch(samples), strict=True):
        ids = tok.encode(sample.prompt + " " + "".join(f"{s} <extra_0> " for s in sample.steps), return_tensors="pt")
        with torch.no_grad():
            scores = model(ids).logits[0][:, [good, bad]].softmax(-1)[:, 0]
        expected = scores[ids[0] == tag]
        assert list(result.steps) == pytest.approx(expected.tolist(), abs=1e-5)
        assert result.score == pytest.approx(float(expected.mean()), abs=1e-5)


def test_a_sample_without_steps_is_an_error_and_the_rest_is_scored(dirs):
    prm = HFProcessReward(model=str(dirs["qwen2"]))
    results = prm.score_batch([Sample(prompt="w1", response="w2"), solutions(1)[0]])
    assert results[0].status is Status.ERROR and results[0].error.kind == "invalid_input"
    assert results[1].status is Status.OK and len(results[1].steps) == len(solutions(1)[0].steps)


def test_a_step_with_a_lone_surrogate_is_scored_as_the_replacement_character(dirs):
    prm = HFProcessReward(model=str(dirs["qwen2"]))
    cut, shown = (Sample(prompt="w1", steps=("w2 \ud83d", "w3"), response="unused"),
                  Sample(prompt="w1", steps=("w2 \ufffd", "w3"), response="unused"))  # fmt: skip
    got, want = prm.score_batch([cut, solutions(1)[0]]), prm.score_batch([shown])
    assert got[0].status is Status.OK and got[1].status is Status.OK
    assert got[0].steps == pytest.approx(want[0].steps)


def test_a_step_that_contains_the_tag_is_an_error_not_a_shifted_score(dirs):
    prm = HFProcessReward(model=str(dirs["qwen2"]))
    result = prm.score(Sample(prompt="w1", response="", steps=("w2 <extra_0> w3", "w4")))
    assert result.status is Status.ERROR and "step tags" in result.error.message


def test_a_long_prompt_is_cut_at_its_head_and_every_step_is_kept(dirs):
    prm = HFProcessReward(model=str(dirs["llama"]), max_length=40)
    sample = Sample(prompt=" ".join(f"w{i}" for i in range(100)), response="", steps=("w1 w2", "w3 w4", "w5"))
    result = prm.score(sample)
    assert result.status is Status.OK and len(result.steps) == 3
    cut = result.info["truncated"]
    assert cut["response_tokens_kept"] == cut["response_tokens"] and cut["prompt_tokens_kept"] < 100
    # the same as scoring the prompt's head by hand: nothing but the prompt's tail was dropped
    head = " ".join(f"w{i}" for i in range(cut["prompt_tokens_kept"]))
    by_hand = HFProcessReward(model=str(dirs["llama"])).score(Sample(prompt=head, response="", steps=sample.steps))
    assert list(result.steps) == pytest.approx(list(by_hand.steps), abs=1e-5)


def test_steps_that_alone_exceed_max_length_are_an_error(dirs):
    prm = HFProcessReward(model=str(dirs["llama"]), max_length=16)
    result = prm.score(Sample(prompt="w1", response="", steps=tuple(" ".join(["w2"] * 10) for _ in range(3))))
    assert result.status is Status.ERROR and result.error.kind == "invalid_input"
    assert "max_length=16" in result.error.message


def test_a_step_tag_that_is_not_one_token_is_a_config_error(dirs):
    with pytest.raises(ConfigError, match="step_tag"):
        HFProcessReward(model=str(dirs["llama"]), step_tag="w1 w2")


def test_good_token_without_bad_token_is_a_config_error(dirs):
    with pytest.raises(ConfigError, match="bad_token"):
        HFProcessReward(model=str(dirs["shepherd"]), good_token="+")


def test_after_step_without_the_tag_is_a_config_error(dirs):
    with pytest.raises(ConfigError, match="after_step"):
        HFProcessReward(model=str(dirs["llama"]), after_step="\n")
