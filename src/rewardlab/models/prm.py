"""Process reward models: a step-level head over `Sample.steps`, and `model.prm`.

A PRM here scores the *prefix* ending at each step: text_t = prompt + steps[0..t]. The head
outputs a logit; σ(logit) is the estimated probability that the solution is still on track
after step t (Lightman et al. 2023; Wang et al. 2024, Math-Shepherd). Labels are hard (0/1) or
soft ([0, 1]) — e.g. from `step_labels` — and `BUFFER` (-1) steps are masked out of the loss.

Two modes, the same as outcome reward models and through the same machinery (`train.Features`,
`train.trainable_groups`, `train.fit_epochs`): `frozen` embeds every prefix once and trains the
head; `finetune` also trains the top transformer blocks. The step scores go to
`rewardlab.shape.aggregate_steps` (min, product, mean, last) in `model.prm`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

try:
    import numpy as np
    import torch
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab._seeding import all_seeded
from rewardlab.core import BaseReward, ErrorKind, RewardResult, Sample
from rewardlab.core.choices import check_choices
from rewardlab.errors import InputError, TrainingError
from rewardlab.models.backbones import Backbone, load_backbone
from rewardlab.models.checkpoint import RewardModel, format_text, pair_text
from rewardlab.models.config import PRMConfig
from rewardlab.models.heads import ScalarHead
from rewardlab.models.losses import step_bce_loss
from rewardlab.models.step_labels import BUFFER
from rewardlab.models.train import EpochLog, Features, TrainReport, fit_epochs, trainable_groups

__all__ = ["PRMConfig", "ProcessReward", "ProcessRewardModel", "train_prm"]


def prefix_texts(prompt: str, steps: Sequence[str], backbone: Backbone | None = None) -> list[str]:
    """The text the PRM reads for each step: the prompt and every step up to and including it
    (with `backbone`, cut by its pair truncation: prompt head, latest steps)."""
    if backbone is None:
        return [format_text(prompt, "\n".join(steps[: t + 1])) for t in range(len(steps))]
    return [pair_text(backbone, prompt, "\n".join(steps[: t + 1])) for t in range(len(steps))]


class ProcessRewardModel:
    """A `RewardModel` read step by step: `score_steps` returns σ(head(prefix_t)) per step."""

    def __init__(self, model: RewardModel):
        self.model = model

    def score_steps(self, prompt: str, steps: Sequence[str]) -> np.ndarray:
        return self.score_many([(prompt, steps)])[0]

    def score_many(self, items: Sequence[tuple[str, Sequence[str]]], *, batch_size: int = 64) -> list[np.ndarray]:
        """Step probabilities of many solutions, all prefixes embedded in one call."""
        texts, bounds = [], [0]
        for prompt, steps in items:
            texts += prefix_texts(prompt, steps, self.model.backbone)
            bounds.append(len(texts))
        probs = 1.0 / (1.0 + np.exp(-self.model.score_texts(texts, batch_size=batch_size)))
        return [probs[a:b] for a, b in itertools.pairwise(bounds)]

    def save(self, path: str | Path) -> Path:
        self.model.report = {**self.model.report, "kind": "prm"}
        return self.model.save(path)

    @classmethod
    def load(cls, path: str | Path) -> ProcessRewardModel:
        model = RewardModel.load(path)
        if model.report.get("kind") != "prm":
            raise InputError("this checkpoint is an outcome reward model; use `model.rm` for it", source=str(path))
        return cls(model)


def _flatten(samples: Sequence[Sample], labels: Sequence[Sequence[float]], what: str,
             backbone: Backbone) -> tuple[list[str], torch.Tensor]:
    texts: list[str] = []
    targets: list[float] = []
    for i, (sample, row) in enumerate(zip(samples, labels, strict=True)):
        if not sample.steps:
            raise InputError(f"{what} sample {i} has no steps; a PRM trains on Sample.steps")
        if len(row) != len(sample.steps):
            raise InputError(f"{what} sample {i}: {len(row)} labels for {len(sample.steps)} steps")
        if any(not (0.0 <= y <= 1.0 or y == BUFFER) for y in row):
            raise InputError(f"{what} sample {i}: labels must be in [0, 1] or BUFFER (-1)")
        texts += prefix_texts(sample.prompt_text, sample.steps, backbone)
        targets += [float(y) for y in row]
    return texts, torch.tensor(targets)


def train_prm(samples: Sequence[Sample], labels: Sequence[Sequence[float]], *,
              val: tuple[Sequence[Sample], Sequence[Sequence[float]]] | None = None,
              backbone: Backbone | None = None, config: PRMConfig | None = None, progress: bool = False,
              on_epoch: Callable[[EpochLog], None] | None = None) -> tuple[ProcessRewardModel, dict[str, Any]]:
    """Train a step head with BCE on hard or soft step labels; early-stops on validation BCE.

    Training is seeded with `config.seed` on forks of torch's, numpy's and Python's global
    generators (`all_seeded`): the caller's streams are as they were before the call, so calling
    it inside an RL loop does not change the actions your policy samples.

    Args:
        samples, labels: solutions with `steps` and one label per step, in [0, 1] or `BUFFER`.
        val: held-out (samples, labels); every epoch logs step accuracy (σ(logit) > ½ against
            label > ½), Brier score and BCE on them. Without it the last epoch is kept.
        progress, on_epoch: a progress bar, and a callback with each `EpochLog` (the CLI's;
            it runs inside the seeded block, so its own torch draws would change training's).

    Raises:
        InputError: samples without steps, label counts that do not match, labels outside [0, 1].
        TrainingError: no training steps, a non-finite loss, or `finetune` on a backbone without
            transformer layers.
    """
    config = config or PRMConfig()
    with all_seeded(config.seed):
        return _train_steps(samples, labels, val, backbone, config, progress=progress, on_epoch=on_epoch)


def _train_steps(samples: Sequence[Sample], labels: Sequence[Sequence[float]],
                 val: tuple[Sequence[Sample], Sequence[Sequence[float]]] | None, backbone: Backbone | None,
                 config: PRMConfig, *, progress: bool,
                 on_epoch: Callable[[EpochLog], None] | None) -> tuple[ProcessRewardModel, dict[str, Any]]:
    """`train_prm` after `config` is resolved, run inside the seeded block."""
    start = time.perf_counter()
    backbone = backbone or load_backbone()
    truncated_before = backbone.n_truncated
    texts, y = _flatten(samples, labels, "training", backbone)
    if not texts:
        raise TrainingError("no training steps; give at least one solution with steps and labels")
    model = RewardModel(backbone, ScalarHead(backbone.dim))
    optimiser = torch.optim.AdamW(trainable_groups(model, config), weight_decay=config.weight_decay)
    features = Features(backbone, texts, finetune=config.mode == "finetune", batch_size=config.embed_batch_size)
    model.head.norm.fit(features.all)
    val_texts, val_y = _flatten(val[0], val[1], "validation", backbone) if val is not None else ([], torch.zeros(0))

    def batch_loss(idx: torch.Tensor) -> torch.Tensor:
        target = y[idx]
        return step_bce_loss(model.head(features.batch(idx))[None], target.clamp(min=0)[None],
                             (target != BUFFER)[None])

    @torch.no_grad()
    def validate() -> tuple[float, float, dict[str, float]]:
        if not val_texts:
            return float("nan"), float("nan"), {}
        model.head.eval()
        metrics = step_metrics(model.head(features.embed(val_texts)), val_y)
        return -metrics["bce"], metrics["step_accuracy"], metrics

    report = TrainReport(config=asdict(config), n_train=len(y), n_val=len(val_y))
    fit_epochs(model, len(y), batch_loss, validate, has_val=bool(val_texts), optimiser=optimiser, options=config,
               report=report, progress=progress, on_epoch=on_epoch)
    report.n_truncated = backbone.n_truncated - truncated_before
    report.seconds = time.perf_counter() - start
    best = report.epochs[report.best_epoch - 1].metrics if report.epochs else {}
    out = {**report.to_dict(), "kind": "prm", "n_steps": len(y), "best_val_bce": best.get("bce", float("nan")),
           "best_val_brier": best.get("brier", float("nan"))}
    model.report = out
    return ProcessRewardModel(model), out


def step_metrics(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, float]:
    """Validation metrics of step logits (N,) against labels (N,) in [0, 1] or `BUFFER` (ignored):
    `step_accuracy` (σ(logit) > ½ agrees with label > ½), `brier` (mean (p - label)², a proper
    score for soft labels too) and `bce`."""
    keep = labels != BUFFER
    logits, labels = logits[keep].float(), labels[keep].float()
    if not len(labels):
        return {"step_accuracy": float("nan"), "brier": float("nan"), "bce": float("nan")}
    probs = torch.sigmoid(logits)
    return {"step_accuracy": float(((probs > 0.5) == (labels > 0.5)).float().mean()),
            "brier": float((probs - labels).pow(2).mean()),
            "bce": float(step_bce_loss(logits[None], labels[None]))}


class ProcessReward(BaseReward):
    """Step scores of a trained PRM (in `RewardResult.steps`) and their aggregate as the score.

    `aggregate` is passed to `rewardlab.shape.aggregate_steps`: `min` (Lightman et al. 2023),
    `product`, `mean` or `last`. A sample without `steps` is `error/invalid_input`.
    """

    name = "model.prm"
    range = (0.0, 1.0)

    def __init__(self, *, path: str, aggregate: Literal["min", "product", "mean", "last"] = "min",
                 batch_size: int = 64):
        check_choices(ProcessReward.__init__, aggregate=aggregate)
        self.prm = ProcessRewardModel.load(path)
        self.aggregate, self.batch_size = aggregate, batch_size

    def compute(self, sample: Sample) -> RewardResult:
        return self.compute_batch([sample])[0]

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        from rewardlab.shape import aggregate_steps

        ok = [i for i, s in enumerate(samples) if s.steps]
        scored = self.prm.score_many([(samples[i].prompt_text, samples[i].steps or ()) for i in ok],
                                     batch_size=self.batch_size)
        results = [RewardResult.failure(ErrorKind.INVALID_INPUT, "no steps: a PRM needs Sample.steps")
                   for _ in samples]
        for i, probs in zip(ok, scored, strict=True):
            total = float(aggregate_steps(probs[None], how=self.aggregate)[0])
            results[i] = RewardResult.ok(total, steps=tuple(float(p) for p in probs),
                                         info={"aggregate": self.aggregate})
        return results
