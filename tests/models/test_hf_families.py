"""`model.hf` on every decoder family that has a last-token sequence classifier in the installed
transformers: a batch of mixed-length samples scores as each sample alone through transformers
(the chat template → `model(**enc).logits`), with and without a pad token in the config.

The families are read from transformers' own tables at collection time, not listed here; each is
built tiny from its config (2 layers, 32 wide). A family that cannot be built tiny in this
transformers is skipped with the reason written below, and the list of such families is checked
so it cannot grow silently.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import torch
import transformers
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer
from transformers.models.auto.configuration_auto import CONFIG_MAPPING
from transformers.models.auto.modeling_auto import (
    MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
    MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES,
)

from rewardlab._seeding import torch_seeded
from rewardlab.core import Sample, Status
from rewardlab.models.hf_batch import pools_last_token
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.hf_tiny import WORDS, tiny_tokenizer

pytestmark = pytest.mark.slow  # ~130 tiny models built and scored: about a minute and a half


def _last_token_family(model_type: str, class_name: str) -> bool:
    """The class-level form of `hf_batch.pools_last_token` (no model is built to decide)."""
    cls = getattr(transformers, class_name, None)
    generic = getattr(getattr(transformers, "modeling_layers", None), "GenericForSequenceClassification", None)
    if cls is not None and generic is not None and issubclass(cls, generic):
        return True
    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES or model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return False
    return not getattr(CONFIG_MAPPING[model_type](), "is_encoder_decoder", False)


FAMILIES = sorted(mt for mt, cls in MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES.items()
                  if _last_token_family(mt, cls))

_SMALL: dict[str, Any] = {
    "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 256, "n_embd": 32, "n_layer": 2,
    "n_head": 4, "n_positions": 256, "n_inner": 64, "num_experts": 4, "num_local_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 32, "n_routed_experts": 4, "n_shared_experts": 1,
    "shared_expert_intermediate_size": 32, "ffn_dim": 64, "d_model": 32, "num_layers": 2, "num_heads": 4,
    "initializer_range": 0.3, "tie_word_embeddings": False,
}
_MLA = {"num_key_value_heads": 4, "kv_lora_rank": 16, "q_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
        "v_head_dim": 8, "qk_head_dim": 16, "head_dim": 8}
_LINEAR_ATTENTION = {"layer_types": ["linear_attention", "full_attention"], "linear_key_head_dim": 8,
                     "linear_value_head_dim": 8, "linear_num_key_heads": 2, "linear_num_value_heads": 4}
#: per-family changes to the tiny shape (names that differ, or layouts that must fit 2 layers)
_OVERRIDES: dict[str, dict[str, Any]] = {
    **{mt: _MLA for mt in ("axk1", "axk2", "deepseek_v2", "deepseek_v3", "minicpm3", "mistral4")},
    "axk1": {**_MLA, "mlp_layer_types": ["dense", "sparse"], "n_group": 1, "topk_group": 1},
    "mistral4": {**_MLA, "head_dim": 16},  # its rotary part is head_dim * partial_rotary_factor (0.5)
    "cohere_compass_text": {"rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 10000.0}}},
    "zamba": {"layers_block_type": ["mamba", "hybrid"], "attention_hidden_size": 64, "attention_head_dim": 16,
              "mamba_dt_rank": 4, "use_mamba_kernels": False},
    "zamba2": {"layers_block_type": ["mamba", "hybrid"], "hybrid_layer_ids": [1], "attention_hidden_size": 64,
               "attention_head_dim": 16, "mamba_headdim": 8, "n_mamba_heads": 8, "mamba_d_state": 8,
               "use_mamba_kernels": False},
    "qwen3_next": _LINEAR_ATTENTION, "qwen3_5": _LINEAR_ATTENTION, "qwen3_5_text": _LINEAR_ATTENTION,
    "jamba": {"attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 2, "expert_layer_offset": 1},
    "gpt_neo": {"attention_types": [[["global", "local"], 1]]},
    "gptj": {"rotary_dim": 8},
}
#: the vision tower of a multimodal family at the tiny size (SigLIP's and Qwen's names)
_SMALL_VISION = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
                 "depth": 1, "num_heads": 4, "out_hidden_size": 32}
_DROP = {"falcon": {"head_dim"}, "xlnet": {"max_position_embeddings"}}
#: families this test cannot build tiny here, and why (checked against FAMILIES below)
CANNOT_BUILD = {
    "modernbert-decoder": "its config requires an int pad_token_id (no pad-less variant exists)",
}


def tiny_config(model_type: str, vocab: int, pad_token_id: int | None) -> Any:
    small = {k: v for k, v in _SMALL.items() if k not in _DROP.get(model_type, set())}
    values = {**small, **_OVERRIDES.get(model_type, {}), "vocab_size": vocab}
    sub_configs = getattr(CONFIG_MAPPING[model_type], "sub_configs", {}) or {}
    if "text_config" in sub_configs:  # multimodal configs (Gemma3): the classifier reads the text config
        values = {"text_config": {**values, "pad_token_id": pad_token_id}, **values}
    if "vision_config" in sub_configs:  # never used on text, but built: its default tower (Qwen3.5: 27
        values["vision_config"] = _SMALL_VISION  # layers of 1152) costs half a minute to initialise
    config = AutoConfig.for_model(model_type, **values)
    text = config.get_text_config()
    for part in (config, text):
        part.pad_token_id = pad_token_id
    return config


def _samples() -> list[Sample]:
    rng = random.Random(3)
    return [Sample(prompt=" ".join(rng.choice(WORDS[:200]) for _ in range(rng.randint(1, 12))),
                   response=" ".join(rng.choice(WORDS[:200]) for _ in range(rng.randint(1, 25)))) for _ in range(5)]


def test_the_family_list_is_read_from_transformers():
    assert {"llama", "qwen2", "qwen3_moe", "gemma2", "gpt_neox", "mistral"} <= set(FAMILIES)
    assert not {"bert", "roberta", "deberta-v2", "electra"} & set(FAMILIES)
    assert set(CANNOT_BUILD) <= set(FAMILIES)


@pytest.mark.parametrize("pad", [True, False], ids=["pad", "nopad"])
@pytest.mark.parametrize("model_type", FAMILIES)
def test_a_batch_scores_as_each_sample_alone(tmp_path, model_type, pad):
    if model_type in CANNOT_BUILD and not pad:
        pytest.skip(CANNOT_BUILD[model_type])
    tokenizer = tiny_tokenizer("llama")
    config = tiny_config(model_type, len(tokenizer), tokenizer.pad_token_id if pad else None)
    with torch_seeded(7):
        model = AutoModelForSequenceClassification.from_config(config).eval()
    assert pools_last_token(model)
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(tmp_path)  # what a card loads (a Qwen2 directory: Qwen2Tokenizer)

    samples = _samples()
    expected = []
    with torch.no_grad():
        for s in samples:
            messages = [{"role": "user", "content": s.prompt}, {"role": "assistant", "content": s.response}]
            enc = tokenizer.apply_chat_template(messages, return_dict=True, return_tensors="pt")
            expected.append(float(model(**enc).logits[0, 0]))
    got = HFReward(model=str(tmp_path), combine="LABEL_0").score_batch(samples)
    assert [r.status for r in got] == [Status.OK] * len(samples), [r.error for r in got]
    torch.testing.assert_close(torch.tensor([r.score for r in got]), torch.tensor(expected), atol=2e-5, rtol=0)
