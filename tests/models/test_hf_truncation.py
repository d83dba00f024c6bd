"""`model.hf` truncation keeps the prompt's head and the response's tail, and says so."""

from __future__ import annotations

import pytest

from rewardlab.core import Sample, Status
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.hf_tiny import save_tiny

PROMPT = " ".join(f"w{i}" for i in range(100))
RESPONSE = " ".join(f"w{i}" for i in range(100, 200)) + " the answer is w42"


@pytest.fixture(scope="module", params=["llama", "qwen2", "bert"])
def saved(request, tmp_path_factory):
    return save_tiny(tmp_path_factory.mktemp("cut") / request.param, request.param, seed=30)


def _decoded(rm: HFReward, sample: Sample):
    encoded = rm.inputs.encode(sample.prompt, [{"role": "assistant", "content": sample.response}])
    return rm.loaded.tokenizer.decode(encoded.ids), encoded


@pytest.mark.parametrize("template", [True, False])
def test_the_cut_keeps_the_prompt_head_and_the_response_tail(saved, template):
    rm = HFReward(model=str(saved), max_length=64, chat_template=template)
    text, encoded = _decoded(rm, Sample(prompt=PROMPT, response=RESPONSE))
    assert len(encoded.ids) <= 64 and len(encoded.ids) >= 56  # nearly the whole budget is used
    compact = text.replace(" ", "")
    assert "w0w1w2" in compact and "w98w99" not in compact  # the prompt's head
    assert "w199theanswerisw42" in compact and "w100w101" not in compact  # the response's tail
    assert encoded.cut is not None and encoded.cut["max_length"] == 64
    assert 0 < encoded.cut["prompt_tokens_kept"] < encoded.cut["prompt_tokens"]
    assert 0 < encoded.cut["response_tokens_kept"] < encoded.cut["response_tokens"]
    if template:  # the template's own tokens survive the cut
        assert "<|im_start|>" in text and text.count("<|im_end|>") == 2


def test_the_score_of_a_cut_sample_is_the_score_of_its_kept_text(saved):
    rm = HFReward(model=str(saved), max_length=64)
    result = rm.score(Sample(prompt=PROMPT, response=RESPONSE))
    cut = result.info["truncated"]
    tok = rm.loaded.tokenizer
    p = tok(PROMPT, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    r = tok(RESPONSE, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    head = PROMPT[: p[cut["prompt_tokens_kept"] - 1][1]]
    tail = RESPONSE[r[len(r) - cut["response_tokens_kept"]][0]:]
    by_hand = HFReward(model=str(saved)).score(Sample(prompt=head, response=tail))  # no cut needed
    assert "truncated" not in by_hand.info
    assert result.score == pytest.approx(by_hand.score, abs=1e-5)


def test_a_short_sample_is_not_cut_and_says_nothing(saved):
    result = HFReward(model=str(saved), max_length=64).score(Sample(prompt="w1", response="w2 w3"))
    assert result.status is Status.OK and "truncated" not in result.info


def test_a_chat_prompt_keeps_its_first_messages(saved):
    rm = HFReward(model=str(saved), max_length=64)
    prompt = [{"role": "system", "content": "w7 w8"}, {"role": "user", "content": PROMPT}]
    text, encoded = _decoded(rm, Sample(prompt=prompt, response=RESPONSE))
    assert encoded.cut is not None and "w7" in text and len(encoded.ids) <= 64


def test_a_budget_below_the_template_is_an_error_result(tmp_path):
    saved = save_tiny(tmp_path / "q", "qwen2")  # byte-level: the ChatML frame alone is > 8 tokens
    result = HFReward(model=str(saved), max_length=8).score(Sample(prompt=PROMPT, response=RESPONSE))
    assert result.status is Status.ERROR and result.error.kind == "invalid_input"
    assert "max_length=8" in result.error.message


@pytest.mark.parametrize("template", [True, False])
def test_longest_first_is_the_model_card_cut(saved, template):
    """`truncation = "longest_first"` scores what `tokenizer(..., truncation=True, max_length=64)`
    then `model(**features)` scores: a pair loses the end of its longer segment, a rendered chat
    its end. The default keeps the response's tail instead, so the two scores differ."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    sample = Sample(prompt=PROMPT, response=RESPONSE)
    card = HFReward(model=str(saved), max_length=64, chat_template=template, truncation="longest_first")
    result = card.score(sample)
    tok = AutoTokenizer.from_pretrained(saved)
    model = AutoModelForSequenceClassification.from_pretrained(saved).eval()
    if template:
        messages = [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": RESPONSE}]
        text = tok.apply_chat_template(messages, tokenize=False)
        features = tok(text, add_special_tokens=False, truncation=True, max_length=64, return_tensors="pt")
    else:
        features = tok(PROMPT, RESPONSE, truncation=True, max_length=64, return_tensors="pt")
    with torch.no_grad():
        expected = float(model(**features).logits[0, 0])
    assert result.score == pytest.approx(expected, abs=1e-5)
    cut = result.info["truncated"]
    assert cut["strategy"] == "longest_first" and cut["tokens_kept"] == 64 and cut["tokens"] > 64
    kept = HFReward(model=str(saved), max_length=64, chat_template=template).score(sample)
    assert abs(kept.score - result.score) > 1e-4


def test_an_unknown_truncation_is_a_config_error(saved):
    from rewardlab.errors import ConfigError

    with pytest.raises(ConfigError, match="truncation"):
        HFReward(model=str(saved), truncation="right")
