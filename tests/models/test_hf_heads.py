"""Checkpoints without a trained scoring head are refused, never scored by the random head
transformers would initialise: a base encoder, a policy (causal-LM) checkpoint, a base decoder
under a PRM. The error names the checkpoint and the missing weights, as transformers' own
loading info reports them."""

from __future__ import annotations

import pytest
from transformers import AutoConfig, AutoModel

from rewardlab.compose import build
from rewardlab.core import Sample, Status
from rewardlab.errors import ConfigError, MissingWeightsError, SpecError
from rewardlab.models.backbones import default_model_path
from rewardlab.models.hf_prm import HFProcessReward
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.hf_tiny import ARCH, save_tiny, tiny_tokenizer

PAIR = Sample(prompt="how many legs has a spider?", response="A spider has eight legs.")


@pytest.mark.parametrize("combine", ["LABEL_0", "mean", "auto"])
def test_a_headless_encoder_is_refused_naming_the_classifier(combine):
    """The shipped all-MiniLM-L6-v2 is a sentence encoder (BertModel): no classifier weights."""
    with pytest.raises(MissingWeightsError, match=r"classifier\.bias, classifier\.weight") as caught:
        HFReward(model=str(default_model_path()), combine=combine)
    assert str(default_model_path()) in str(caught.value) and "BertModel" in str(caught.value)
    assert set(caught.value.missing) == {"classifier.bias", "classifier.weight"}
    assert "heads" not in str(caught.value)  # not the misleading "say how the heads make the score"
    assert isinstance(caught.value, ConfigError)


def test_a_headless_encoder_in_a_spec_is_refused_before_scoring():
    spec = {"reward": {"name": "rm", "components": [
        {"name": "rm", "use": "model.hf", "params": {"model": str(default_model_path()), "combine": "LABEL_0"}}]}}
    with pytest.raises((SpecError, MissingWeightsError), match=r"classifier\.weight"):
        build(spec).score(PAIR)


def test_a_policy_checkpoint_is_refused_as_a_reward_model(tmp_path):
    path = save_tiny(tmp_path / "policy", "qwen2", kind="causal_lm", seed=30)
    with pytest.raises(MissingWeightsError, match=r"score\.weight.*Qwen2ForCausalLM"):
        HFReward(model=str(path), combine="mean")


def _save_base(path, arch: str):
    """A base decoder (`Qwen2Model`, no head at all), as a pretraining checkpoint is saved."""
    tokenizer = tiny_tokenizer(arch)
    cfg = dict(ARCH[arch])
    config = AutoConfig.for_model(cfg.pop("model_type"), **cfg, vocab_size=len(tokenizer), tie_word_embeddings=False)
    AutoModel.from_config(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_a_base_decoder_is_refused_as_a_token_classifier_prm(tmp_path):
    path = _save_base(tmp_path / "base", "qwen2")
    with pytest.raises(MissingWeightsError, match=r"score\.bias, score\.weight.*Qwen2Model"):
        HFProcessReward(model=str(path))


def test_a_base_decoder_is_refused_as_a_step_tag_prm(tmp_path):
    """Math-Shepherd style reads the LM head's logits: a checkpoint without one is refused too."""
    path = _save_base(tmp_path / "base", "llama")
    with pytest.raises(MissingWeightsError, match=r"lm_head\.weight"):
        HFProcessReward(model=str(path), good_token="+", bad_token="-")


def test_a_checkpoint_with_its_head_still_scores(tmp_path):
    path = save_tiny(tmp_path / "rm", "bert", chat_template=False, seed=31)
    assert HFReward(model=str(path)).score(PAIR).status is Status.OK
