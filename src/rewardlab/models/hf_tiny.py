"""Tiny randomly initialised Hugging Face models saved as real model directories, so `model.hf`
and `model.hf_prm` can be tried, tested and benchmarked offline (nothing is downloaded).

    from rewardlab.models.hf_tiny import save_tiny
    path = save_tiny("/tmp/tiny-rm", "llama")       # config.json, model.safetensors, tokenizer
    # use = "model.hf", params = { model = "/tmp/tiny-rm" }

Llama and BERT get a word-level tokenizer (`tokenizers` WordLevel over `WORDS`); Qwen2 gets a
byte-level BPE without merges (one token per byte), because transformers always loads a
`qwen2` directory with `Qwen2Tokenizer`. Both carry a ChatML chat template (unless
`chat_template=False`) and the Qwen2.5-Math-PRM step tag `<extra_0>` as a special token; the
BERT one returns `token_type_ids` for pairs (segment B for the second text), as real BERT
tokenizers do.
Scores of such models mean nothing; they exercise the real loading and scoring code paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from rewardlab._seeding import torch_seeded

__all__ = ["ARCH", "WORDS", "save_tiny", "tiny_tokenizer"]

#: the ChatML layout (Qwen2's template)
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<extra_0>"]
#: the words a word-level tiny tokenizer knows (others become [UNK])
WORDS = [f"w{i}" for i in range(200)] + ["user", "assistant", "system", "the", "answer", "is", "step", "+", "-"]

_SHAPE = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "max_position_embeddings": 512}
#: the configs: 2 layers, 32 wide; enough to have attention, positions and padding to get right
ARCH: dict[str, dict[str, Any]] = {
    "llama": {"model_type": "llama", **_SHAPE, "num_attention_heads": 4, "num_key_value_heads": 2},
    "qwen2": {"model_type": "qwen2", **_SHAPE, "num_attention_heads": 4, "num_key_value_heads": 2},
    "bert": {"model_type": "bert", **_SHAPE, "num_attention_heads": 2, "hidden_dropout_prob": 0.0,
             "attention_probs_dropout_prob": 0.0},
}
Kind = Literal["sequence", "token", "causal_lm"]


def tiny_tokenizer(arch: str, *, chat_template: bool = True) -> Any:
    """The tokenizer `save_tiny` saves for `arch` (see the module doc)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, Qwen2Tokenizer

    tokenizer: Any
    if arch == "qwen2":
        vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
        for special in ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<extra_0>"):
            vocab[special] = len(vocab)
        tokenizer = Qwen2Tokenizer(vocab=vocab, merges=[], eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   unk_token="<|endoftext|>")
        tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>", "<extra_0>"]})
    else:
        words = {tok: i for i, tok in enumerate(_SPECIALS + WORDS)}
        backend = Tokenizer(models.WordLevel(vocab=words, unk_token="[UNK]"))
        backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        bert = arch == "bert"
        single, pair, marks = (("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", ["[CLS]", "[SEP]"]) if bert
                               else ("<s> $A", "<s> $A $B:1", ["<s>"]))
        backend.post_processor = processors.TemplateProcessing(single=single, pair=pair,
                                                               special_tokens=[(m, words[m]) for m in marks])
        tokens = {"unk_token": "[UNK]", "pad_token": "[PAD]", "bos_token": "<s>", "eos_token": "</s>",
                  "cls_token": "[CLS]" if bert else None, "sep_token": "[SEP]" if bert else None,
                  "additional_special_tokens": ["<|im_start|>", "<|im_end|>", "<extra_0>"]}
        # a BERT tokenizer returns segment ids (0 for the prompt, 1 for the response), as real ones do
        names = ["input_ids", "token_type_ids", "attention_mask"] if bert else ["input_ids", "attention_mask"]
        tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, model_input_names=names,  # type: ignore[no-untyped-call]
                                            **tokens)
    if chat_template:
        tokenizer.chat_template = CHATML
    return tokenizer


def save_tiny(directory: str | Path, arch: str, *, kind: Kind = "sequence", num_labels: int = 1,
              labels: list[str] | None = None, chat_template: bool = True, seed: int = 0,
              pad_in_config: bool = True, layers: int | None = None, hidden: int | None = None) -> Path:
    """Save a randomly initialised `arch` model (`llama`, `qwen2`, `bert`) and its tokenizer.

    Args:
        kind: `sequence` (a reward model), `token` (a token-classification PRM) or `causal_lm`.
        num_labels, labels: classifier outputs and their names (`id2label`).
        pad_in_config: write `pad_token_id` into the config (published decoders often lack it).
        layers, hidden: override the 2 layers / 32 wide shape (benchmarks use larger models).
    """
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForSequenceClassification,
        AutoModelForTokenClassification,
    )

    if arch not in ARCH:
        raise ValueError(f"arch must be one of {sorted(ARCH)}, got {arch!r}")
    directory = Path(directory)
    tokenizer = tiny_tokenizer(arch, chat_template=chat_template)
    cfg = dict(ARCH[arch])
    model_type = cfg.pop("model_type")
    if layers is not None:
        cfg["num_hidden_layers"] = layers
    if hidden is not None:
        cfg["hidden_size"], cfg["intermediate_size"] = hidden, 2 * hidden
    # 0.3, not the usual 0.02: a 2-layer random model's last token then depends on its context,
    # so scores differ between inputs and a wrong position or mask shows in the tests
    extra: dict[str, Any] = {"num_labels": num_labels, "vocab_size": len(tokenizer), "initializer_range": 0.3}
    if labels is not None:
        extra["id2label"] = dict(enumerate(labels))
        extra["label2id"] = {name: i for i, name in enumerate(labels)}
    if pad_in_config:
        extra["pad_token_id"] = tokenizer.pad_token_id
    config = AutoConfig.for_model(model_type, **cfg, **extra)
    auto = {"sequence": AutoModelForSequenceClassification, "token": AutoModelForTokenClassification,
            "causal_lm": AutoModelForCausalLM}[kind]
    with torch_seeded(seed):  # seeded initial weights without resetting the caller's generator
        model = auto.from_config(config)  # type: ignore[no-untyped-call]  # unannotated in transformers
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
