"""Tiny config-built Hugging Face models and a word-level tokenizer with a chat template, saved to
directories the way `save_pretrained` writes them, for the `model.hf` / `model.hf_prm` tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoModelForTokenClassification
from transformers import PreTrainedTokenizerFast, Qwen2Tokenizer

#: a ChatML-style template (Qwen2's layout)
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<extra_0>"]
WORDS = [f"w{i}" for i in range(200)] + ["user", "assistant", "system", "the", "answer", "is", "step", "+", "-"]

ARCH: dict[str, dict[str, Any]] = {
    "llama": {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 512},
    "qwen2": {"model_type": "qwen2", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 512},
    "bert": {"model_type": "bert", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
             "num_attention_heads": 2, "max_position_embeddings": 512, "hidden_dropout_prob": 0.0,
             "attention_probs_dropout_prob": 0.0},
}


def tiny_tokenizer(arch: str, *, chat_template: bool) -> Any:
    """A word-level tokenizer (Llama, BERT layouts), or for Qwen2 (which transformers always
    loads as `Qwen2Tokenizer`) a byte-level BPE without merges: one token per byte."""
    if arch == "qwen2":
        vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
        for special in ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<extra_0>"):
            vocab[special] = len(vocab)
        qwen = Qwen2Tokenizer(vocab=vocab, merges=[], eos_token="<|im_end|>", pad_token="<|endoftext|>",
                              unk_token="<|endoftext|>")
        qwen.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>", "<extra_0>"]})
        if chat_template:
            qwen.chat_template = CHATML
        return qwen
    bert_style = arch == "bert"
    vocab = {tok: i for i, tok in enumerate(SPECIALS + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if bert_style:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    else:
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A $B:1", special_tokens=[("<s>", vocab["<s>"])])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]" if bert_style else None,
                                   sep_token="[SEP]" if bert_style else None,
                                   bos_token="<s>", eos_token="</s>",
                                   additional_special_tokens=["<|im_start|>", "<|im_end|>", "<extra_0>"])
    if chat_template:
        fast.chat_template = CHATML
    return fast


def save_tiny(directory: Path, arch: str, *, kind: str = "sequence", num_labels: int = 1,
              labels: list[str] | None = None, chat_template: bool = True, seed: int = 0,
              pad_in_config: bool = True) -> Path:
    """A randomly initialised `arch` classifier and its tokenizer, saved to `directory`."""
    tokenizer = tiny_tokenizer(arch, chat_template=chat_template)
    cfg = dict(ARCH[arch])
    model_type = cfg.pop("model_type")
    # a wide init (0.02 is the usual) so that a 2-layer model's last token depends on its context
    extra: dict[str, Any] = {"num_labels": num_labels, "vocab_size": len(tokenizer), "initializer_range": 0.3}
    if labels is not None:
        extra["id2label"] = dict(enumerate(labels))
        extra["label2id"] = {name: i for i, name in enumerate(labels)}
    if pad_in_config:
        extra["pad_token_id"] = tokenizer.pad_token_id
    config = AutoConfig.for_model(model_type, **cfg, **extra)
    torch.manual_seed(seed)
    auto = AutoModelForSequenceClassification if kind == "sequence" else AutoModelForTokenClassification
    model = auto.from_config(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
