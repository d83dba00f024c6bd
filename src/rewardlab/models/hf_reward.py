"""`model.hf`: any Hugging Face sequence-classification reward model as a spec component.

    [[reward.components]]
    name = "rm"
    use = "model.hf"
    params = { model = "Skywork/Skywork-Reward-V2-Llama-3.1-8B", device = "cuda", dtype = "bf16" }

The model's own chat template renders prompt + response (the way its model card scores a
conversation), batches are cut by a token budget (`rewardlab.models.hf_batch`), and the weights
come from a directory or the local Hugging Face cache only (`rewardlab.models.hf_load`).

Heads: a model with one label gives its logit. A multi-head model (`num_labels` > 1) reports
every head as a component named by the config's `id2label`, and `combine` says how they make the
score: `mean`, `sum`, `weighted` (`weights`), one head by name, `gated` or `model`.

* `gated` is the mixture-of-experts rule of ArmoRM (Wang et al. 2024, "Interpretable
  Preferences via Multi-Objective Reward Modeling and Mixture-of-Experts", eq. 3):
  score = Σ_k softmax(g / τ)_k · r_k, where each reward head `X` has a gating head `gate_X`
  in the same classifier. Here the gate logits are read from the same token as the rewards;
  ArmoRM's own code gates on the prompt's last token, so load the real ArmoRM with
  `trust_remote_code = true` and `combine = "model"`.
* `model` takes the `score` field of the model's own output (ArmoRM's remote code returns
  `score`, the per-objective `rewards` and `gating_output`; the rewards become the components).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

try:
    import torch
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.core import BaseReward, ErrorKind, RewardResult, Sample
from rewardlab.core.choices import check_choices
from rewardlab.core.reward import UNBOUNDED
from rewardlab.core.sample import JSON
from rewardlab.errors import ConfigError, ScoringError
from rewardlab.models.hf_batch import Encoded, InputBuilder, messages_of, score_each
from rewardlab.models.hf_load import Dtype, load_model, rebuild, remote_kind, scoring_params

__all__ = ["HFReward"]

Normalize = Literal["none", "sigmoid", "zscore"]
Truncation = Literal["head_tail", "longest_first"]
_COMBINE = ("auto", "mean", "sum", "weighted", "gated", "model")
_DEFAULT_LABEL = re.compile(r"^LABEL_\d+$")


def head_names(config: Any) -> list[str]:
    """One name per classifier output: the config's `id2label` (`LABEL_i` when unnamed)."""
    n = int(getattr(config, "num_labels", 1))
    labels = getattr(config, "id2label", None) or {}
    return [str(labels.get(i, labels.get(str(i), f"LABEL_{i}"))) for i in range(n)]


class HFReward(BaseReward):
    """The score of an off-the-shelf sequence-classification reward model for (prompt, response).

    Args:
        model: a model directory or a hub id in the local Hugging Face cache (never downloaded).
        revision: the cached revision of a hub id (default: what `main` points to).
        device: `cpu`, `cuda`, `cuda:N` or `auto`.
        dtype: `auto` (fp32 on CPU, bf16/fp16 on GPU), `fp32`, `bf16` or `fp16` (GPU only).
        chat_template: render with the tokenizer's chat template (None: when it has one;
            false: the (prompt, response) text pair, as cross-encoders expect).
        system_prompt: a system message put first when the prompt has none.
        max_length: tokens per input (default: the model's context); longer inputs keep the
            prompt's head and the response's tail, and `info["truncated"]` says what was cut.
        truncation: `head_tail` (the above) or `longest_first`: the model card's
            `tokenizer(..., truncation=True)`, which cuts the end of the longer segment of a pair
            (the end of a rendered chat), for parity checks against a card's own numbers.
        max_tokens_per_batch: padded tokens per forward pass; the memory knob.
        max_batch_size: samples per forward pass.
        combine: how heads make the score (module doc); `auto` is the logit of a one-head model.
        weights: head name -> weight, for `combine="weighted"` (unlisted heads weigh 0).
        gate_temperature: τ of `combine="gated"`.
        normalize: `none`, `sigmoid` (a Bradley-Terry logit as a probability, range [0, 1]) or
            `zscore` ((score - mean) / std, with the statistics of a reference set); the raw
            score stays in `info["raw_score"]`.
        trust_remote_code: run the model repository's own Python code (ArmoRM); off by default.

    Raises:
        ModelNotFoundError: the model is not a directory and not in the local cache.
        MissingWeightsError: the checkpoint lacks weights of the class it is loaded as (a base
            encoder, a policy or a base model without its trained head); a `ConfigError`.
        ConfigError: an option that cannot be used with this model (named in the message).
    """

    name = "model.hf"
    #: the server computes it in its own process, one loaded copy, batched across clients
    batches_in_process = True

    def __init__(self, *, model: str, revision: str | None = None, device: str = "cpu", dtype: Dtype = "auto",
                 chat_template: bool | None = None, system_prompt: str | None = None, max_length: int | None = None,
                 max_tokens_per_batch: int = 16384, max_batch_size: int = 64, combine: str = "auto",
                 weights: dict[str, float] | None = None, gate_temperature: float = 1.0, normalize: Normalize = "none",
                 mean: float = 0.0, std: float = 1.0, trust_remote_code: bool = False,
                 truncation: Truncation = "head_tail"):
        kind = remote_kind(model, "sequence", revision=revision, trust_remote_code=trust_remote_code)
        self.loaded = load_model(model, kind=kind, device=device, dtype=dtype, revision=revision,
                                 trust_remote_code=trust_remote_code)
        _pool_last_position(self.loaded.model)
        self.inputs = InputBuilder(self.loaded, chat_template=chat_template, system_prompt=system_prompt,
                                   max_length=max_length, truncation=truncation)
        self.heads = head_names(self.loaded.config)
        self.combine = _check_combine(combine, self.heads, weights, remote=trust_remote_code)
        self.weights = dict(weights or {})
        if gate_temperature <= 0:
            raise ConfigError(f"gate_temperature must be > 0, got {gate_temperature}")
        check_choices(HFReward.__init__, normalize=normalize)
        if normalize == "zscore" and not std > 0:
            raise ConfigError(f"normalize='zscore' needs std > 0, got {std}")
        if max_tokens_per_batch < 1 or max_batch_size < 1:
            raise ConfigError("max_tokens_per_batch and max_batch_size must be >= 1")
        self.gate_temperature, self.normalize, self.mean, self.std = gate_temperature, normalize, mean, std
        self.max_tokens_per_batch, self.max_batch_size = max_tokens_per_batch, max_batch_size
        self.range = (0.0, 1.0) if normalize == "sigmoid" else UNBOUNDED
        self.params = scoring_params(self.params, chat_template=self.inputs.use_template,
                                     max_length=self.inputs.max_length, combine=self.combine, weights=self.weights)

    def __reduce__(self) -> tuple[Any, tuple[type, dict[str, Any]]]:
        """Pickled as its parameters (see `hf_load.rebuild`), never as the loaded weights."""
        batches = {"max_tokens_per_batch": self.max_tokens_per_batch, "max_batch_size": self.max_batch_size}
        return rebuild, (type(self), {**self.params, **batches})

    # -- scoring ---------------------------------------------------------------------------
    def compute(self, sample: Sample) -> RewardResult:
        return self.compute_batch([sample])[0]

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return score_each(samples, self._encode, self.loaded, self._read, self._result,
                          max_tokens=self.max_tokens_per_batch, max_batch=self.max_batch_size)

    def _encode(self, sample: Sample) -> Encoded:
        if not sample.response_text.strip():
            raise ScoringError(ErrorKind.INVALID_INPUT, "empty response: nothing to score")
        return self.inputs.encode(sample.prompt, messages_of(sample.response, "assistant"))

    def _read(self, output: Any, inputs: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        """Per row: the head logits (K,), with the model's own score appended for `model`."""
        if self.combine == "model":
            score = _field(output, "score")
            rewards = _field(output, "rewards", required=False)
            heads = rewards if rewards is not None else score.reshape(len(score), -1)
            return list(torch.cat([heads.float().reshape(len(score), -1), score.float().reshape(-1, 1)], 1).cpu())
        logits = _field(output, "logits")
        return list(logits.float().reshape(logits.shape[0], -1).cpu())

    def _result(self, row: torch.Tensor, cut: dict[str, JSON] | None) -> RewardResult:
        values = [float(v) for v in row]
        info: dict[str, JSON] = {}
        if cut is not None:
            info["truncated"] = cut
        if not all(math.isfinite(v) for v in values):
            return RewardResult.failure(ErrorKind.INVALID_OUTPUT, f"the model returned non-finite outputs {values}",
                                        info=info)
        if self.combine == "model":
            values, score = values[:-1], values[-1]
            names = self.heads if len(values) == len(self.heads) else [f"reward_{k}" for k in range(len(values))]
            heads = dict(zip(names, values, strict=True))
        else:
            heads = dict(zip(self.heads, values, strict=True))
            score = self._combine(heads, info)
        components = {name: RewardResult.ok(v) for name, v in heads.items()} if len(heads) > 1 else {}
        return RewardResult.ok(self._normalised(score, info), components=components, info=info)

    def _combine(self, heads: Mapping[str, float], info: dict[str, JSON]) -> float:
        if self.combine == "auto":
            return next(iter(heads.values()))
        rewards = {k: v for k, v in heads.items() if not k.startswith("gate_")}
        if self.combine == "mean":
            return sum(rewards.values()) / len(rewards)
        if self.combine == "sum":
            return sum(rewards.values())
        if self.combine == "weighted":
            return sum(self.weights.get(k, 0.0) * v for k, v in rewards.items())
        if self.combine == "gated":
            gates = torch.tensor([heads[f"gate_{k}"] for k in rewards]) / self.gate_temperature
            weights = torch.softmax(gates, 0).tolist()  # ArmoRM eq. 3: a convex mix of the objectives
            info["gate"] = dict(zip(rewards, weights, strict=True))
            return float(sum(w * r for w, r in zip(weights, rewards.values(), strict=True)))
        return heads[self.combine]

    def _normalised(self, score: float, info: dict[str, JSON]) -> float:
        if self.normalize == "none":
            return score
        info["raw_score"] = score
        if self.normalize == "sigmoid":
            return 1.0 / (1.0 + math.exp(-score)) if score >= 0 else math.exp(score) / (1.0 + math.exp(score))
        return (score - self.mean) / self.std


def _pool_last_position(model: Any) -> None:
    """Let a decoder without a pad token score batches as it scores one sample.

    A last-token `*ForSequenceClassification` pools the rightmost token whose id is not
    `pad_token_id`, and refuses batches when the config has none (alone, a sample pools its last
    position). Inputs of such a model are left-padded (`hf_batch.pools_last_token`), so the last
    position is always a real token: a pad id that no input holds (-1) makes every batch pool its
    last position, the one-sample rule. The text config is the one the classifier reads in
    multimodal families (Gemma3).
    """
    from rewardlab.models.hf_batch import pools_last_token

    if not pools_last_token(model):
        return
    config = model.config
    for part in {id(c): c for c in (config, config.get_text_config() if hasattr(config, "get_text_config")
                                     else config)}.values():
        if getattr(part, "pad_token_id", None) is None:
            part.pad_token_id = -1


def _field(output: Any, name: str, *, required: bool = True) -> Any:
    value = getattr(output, name, None)
    if value is None and isinstance(output, Mapping):
        value = output.get(name)
    if value is None and name == "logits" and isinstance(output, tuple):
        value = output[0]
    if value is None and required:
        raise ScoringError(ErrorKind.INVALID_OUTPUT, f"the model's output has no {name!r} field; "
                           "with combine='model' it must return `score` (ArmoRM's remote code does)")
    return value


def _check_combine(combine: str, heads: list[str], weights: dict[str, float] | None, *, remote: bool) -> str:
    """`combine` checked against the model's heads (see the module doc)."""
    rewards = [h for h in heads if not h.startswith("gate_")]
    options = f"{', '.join(_COMBINE[1:])} or a head name ({', '.join(heads)})"
    if combine == "auto":
        if len(heads) == 1:
            return combine
        if remote:
            return "model"
        raise ConfigError(f"the model has {len(heads)} heads {heads}; say how they make the score: combine = {options}")
    if combine not in _COMBINE and combine not in heads:
        raise ConfigError(f"combine must be {options}; got {combine!r}")
    if combine == "weighted":
        unknown = sorted(set(weights or {}) - set(rewards))
        if not weights or unknown:
            raise ConfigError(f"combine='weighted' needs weights for heads among {rewards}; unknown: {unknown}")
    if combine == "gated":
        missing = [f"gate_{h}" for h in rewards if f"gate_{h}" not in heads]
        if missing or not rewards:
            raise ConfigError(f"combine='gated' needs a gating head 'gate_X' for every reward head X; missing {missing} "
                              f"(heads: {heads})")
    return combine
