"""`model.hf`: config-built Llama / Qwen2 / BERT reward models saved to disk score through specs
exactly as the same model called directly with transformers (to 1e-5)."""

from __future__ import annotations

import random

import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from rewardlab.compose import build
from rewardlab.core import Sample, Status, registry
from rewardlab.errors import ConfigError, SpecError
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.hf_tiny import WORDS, save_tiny


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS[:200]) for _ in range(n))


def mixed_samples(n: int = 12, seed: int = 0) -> list[Sample]:
    rng = random.Random(seed)
    return [Sample(prompt=_text(rng, rng.randint(1, 30)), response=_text(rng, rng.randint(1, 60))) for _ in range(n)]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    return {
        "llama": save_tiny(root / "llama", "llama"),
        "qwen2": save_tiny(root / "qwen2", "qwen2", seed=1),
        "bert": save_tiny(root / "bert", "bert", seed=2),
        "llama_nopad": save_tiny(root / "llama_nopad", "llama", seed=3, pad_in_config=False),
        "multi": save_tiny(root / "multi", "qwen2", num_labels=4, seed=4,
                           labels=["helpful", "honest", "gate_helpful", "gate_honest"]),
    }


def direct_logits(directory, samples, *, template: bool, system: str | None = None) -> torch.Tensor:
    """The reference: each sample alone, the way a model card calls the model."""
    tok = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForSequenceClassification.from_pretrained(directory).eval()
    rows = []
    with torch.no_grad():
        for s in samples:
            if template:
                messages = ([{"role": "system", "content": system}] if system else []) + [
                    {"role": "user", "content": s.prompt}, {"role": "assistant", "content": s.response}]
                enc = tok.apply_chat_template(messages, return_dict=True, return_tensors="pt")
            else:
                enc = tok(s.prompt, s.response, return_tensors="pt")
            rows.append(model(**enc).logits[0])
    return torch.stack(rows)


def spec_results(directory, samples, **params):
    spec = {"reward": {"name": "rm", "components": [
        {"name": "rm", "use": "model.hf", "params": {"model": str(directory), **params}}]}}
    return [r.components["rm"] for r in build(spec).score_batch(samples)]


@pytest.mark.parametrize("arch", ["llama", "qwen2", "bert", "llama_nopad"])
@pytest.mark.parametrize("template", [True, False])
def test_scalar_scores_equal_the_direct_transformers_call(dirs, arch, template):
    samples = mixed_samples()
    expected = direct_logits(dirs[arch], samples, template=template)[:, 0]
    got = spec_results(dirs[arch], samples, chat_template=template, max_tokens_per_batch=300)
    assert all(r.status is Status.OK for r in got)
    torch.testing.assert_close(torch.tensor([r.score for r in got]), expected, atol=1e-5, rtol=0)
    assert len(set(round(r.score, 4) for r in got)) > len(got) // 2  # the scores actually differ


def test_system_prompt_goes_first(dirs):
    samples = mixed_samples(4)
    expected = direct_logits(dirs["qwen2"], samples, template=True, system="w7 w8")[:, 0]
    got = spec_results(dirs["qwen2"], samples, system_prompt="w7 w8")
    torch.testing.assert_close(torch.tensor([r.score for r in got]), expected, atol=1e-5, rtol=0)
    plain = spec_results(dirs["qwen2"], samples)
    assert any(abs(a.score - b.score) > 1e-4 for a, b in zip(got, plain, strict=True))


def test_chat_prompts_are_rendered_as_messages(dirs):
    prompt = [{"role": "system", "content": "w1"}, {"role": "user", "content": "w2 w3"}]
    sample = Sample(prompt=prompt, response="w4 w5")
    tok = AutoTokenizer.from_pretrained(dirs["qwen2"])
    model = AutoModelForSequenceClassification.from_pretrained(dirs["qwen2"]).eval()
    enc = tok.apply_chat_template([*prompt, {"role": "assistant", "content": "w4 w5"}], return_dict=True,
                                  return_tensors="pt")
    with torch.no_grad():
        expected = float(model(**enc).logits[0, 0])
    assert HFReward(model=str(dirs["qwen2"])).score(sample).score == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("template", [True, False])
def test_multi_head_heads_are_components_and_gating_mixes_them(dirs, template):
    samples = mixed_samples(8)
    logits = direct_logits(dirs["multi"], samples, template=template)  # (N, 4)
    got = spec_results(dirs["multi"], samples, chat_template=template, combine="gated", gate_temperature=0.5)
    for row, result in zip(logits, got, strict=True):
        heads = {k: v.score for k, v in result.components.items()}
        torch.testing.assert_close(torch.tensor([heads["helpful"], heads["honest"], heads["gate_helpful"],
                                                 heads["gate_honest"]]), row, atol=1e-5, rtol=0)
        gate = torch.softmax(row[2:] / 0.5, 0)
        assert result.score == pytest.approx(float((gate * row[:2]).sum()), abs=1e-5)
        assert result.info["gate"]["helpful"] == pytest.approx(float(gate[0]), abs=1e-6)


def test_multi_head_mean_weighted_and_one_head(dirs):
    samples = mixed_samples(5)
    logits = direct_logits(dirs["multi"], samples, template=True)
    mean = spec_results(dirs["multi"], samples, combine="mean")
    weighted = spec_results(dirs["multi"], samples, combine="weighted", weights={"helpful": 2.0, "honest": -1.0})
    honest = spec_results(dirs["multi"], samples, combine="honest")
    for row, m, w, h in zip(logits, mean, weighted, honest, strict=True):
        assert m.score == pytest.approx(float(row[:2].mean()), abs=1e-5)  # gate heads are not rewards
        assert w.score == pytest.approx(float(2 * row[0] - row[1]), abs=1e-5)
        assert h.score == pytest.approx(float(row[1]), abs=1e-5)


def test_multi_head_without_combine_is_a_config_error(dirs):
    with pytest.raises(ConfigError, match="4 heads"):
        HFReward(model=str(dirs["multi"]))


def test_gated_without_gate_heads_is_a_config_error(dirs, tmp_path):
    path = save_tiny(tmp_path / "m", "llama", num_labels=2, labels=["a", "b"])
    with pytest.raises(ConfigError, match="gate_a"):
        HFReward(model=str(path), combine="gated")


def test_weights_naming_an_unknown_head_are_a_config_error(dirs):
    with pytest.raises(ConfigError, match="helpfull"):
        HFReward(model=str(dirs["multi"]), combine="weighted", weights={"helpfull": 1.0})


def test_a_typo_in_params_fails_at_spec_check(dirs):
    with pytest.raises(SpecError, match="max_lenght"):
        registry.create("model.hf", {"model": str(dirs["llama"]), "max_lenght": 64})


def test_normalisation_sigmoid_and_zscore(dirs):
    sample = mixed_samples(1)[0]
    raw = HFReward(model=str(dirs["llama"])).score(sample).score
    sig = HFReward(model=str(dirs["llama"]), normalize="sigmoid").score(sample)
    z = HFReward(model=str(dirs["llama"]), normalize="zscore", mean=0.5, std=2.0).score(sample)
    assert sig.score == pytest.approx(1 / (1 + torch.exp(torch.tensor(-raw)).item()), abs=1e-6)
    assert z.score == pytest.approx((raw - 0.5) / 2.0) and z.info["raw_score"] == pytest.approx(raw)


def test_empty_response_is_an_error_and_the_rest_is_scored(dirs):
    rm = HFReward(model=str(dirs["llama"]))
    results = rm.score_batch([Sample(prompt="w1", response="  "), Sample(prompt="w1", response="w2")])
    assert results[0].status is Status.ERROR and results[0].error.kind == "invalid_input"
    assert results[1].status is Status.OK


@pytest.mark.parametrize("arch", ["llama", "qwen2", "bert"])
@pytest.mark.parametrize("template", [True, False])
def test_a_lone_surrogate_is_scored_as_the_replacement_character_and_the_batch_is_scored(dirs, arch, template):
    # A text cut inside a surrogate pair (JSON's "\ud800" escape): the tokenizers refuse such a
    # string, and the batch is tokenized together, so one such row must not fail the others.
    cut = [Sample(prompt="w1 \ud83d w2", response="w3 \udc00 w4"), Sample(prompt="w1", response="w5 w6")]
    shown = [Sample(prompt="w1 \ufffd w2", response="w3 \ufffd w4"), Sample(prompt="w1", response="w5 w6")]
    got = spec_results(dirs[arch], cut, chat_template=template)
    assert [r.status for r in got] == [Status.OK, Status.OK]
    assert [r.score for r in got] == pytest.approx([r.score for r in spec_results(dirs[arch], shown, chat_template=template)])


def test_a_row_the_tokenizer_refuses_is_that_rows_error_and_the_rest_is_scored(dirs):
    rm = HFReward(model=str(dirs["llama"]), chat_template=False)
    tokenizer = rm.loaded.tokenizer
    real_call = type(tokenizer).__call__

    def refusing(self, text, *args, **kwargs):  # fault injection: a tokenizer that fails on one text
        if "w9" in str((text, args)):
            raise TypeError("TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]")
        return real_call(self, text, *args, **kwargs)

    samples = [Sample(prompt="w1", response="w2"), Sample(prompt="w1", response="w9"), Sample(prompt="w3", response="w4")]
    expected = rm.score_batch([samples[0], samples[2]])
    type(tokenizer).__call__ = refusing
    try:
        results = rm.score_batch(samples)
    finally:
        type(tokenizer).__call__ = real_call
    assert results[1].status is Status.ERROR and results[1].error.kind == "crash"
    assert "cannot encode the input: TypeError" in results[1].error.message
    assert [results[0].score, results[2].score] == pytest.approx([r.score for r in expected])


def test_a_score_does_not_depend_on_the_batch_or_budget(dirs):
    samples = mixed_samples(16, seed=5)
    one = [HFReward(model=str(dirs["qwen2"])).score(s).score for s in samples]
    for budget, size in ((64, 64), (400, 3), (100000, 64)):
        many = HFReward(model=str(dirs["qwen2"]), max_tokens_per_batch=budget, max_batch_size=size).score_batch(samples)
        assert [r.score for r in many] == pytest.approx(one, abs=1e-5)


def test_one_loaded_copy_per_process(dirs):
    a = HFReward(model=str(dirs["llama"]))
    b = registry.create("model.hf", {"model": str(dirs["llama"]), "normalize": "sigmoid"})
    assert a.loaded is b.loaded and a.loaded.model is b.loaded.model


def test_describe_names_the_resolved_options(dirs):
    params = HFReward(model=str(dirs["bert"])).describe()["params"]
    assert params["chat_template"] is True and params["max_length"] == 512 and params["device"] == "cpu"
