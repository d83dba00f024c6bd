"""Process reward models: a step-level head over `Sample.steps`, and `model.prm`.

A PRM here scores the *prefix* ending at each step: text_t = prompt + steps[0..t]. The head
outputs a logit; σ(logit) is the estimated probability that the solution is still on track
after step t (Lightman et al. 2023; Wang et al. 2024, Math-Shepherd). Labels are hard (0/1) or
soft ([0, 1]) — e.g. from `step_labels` — and `BUFFER` (-1) steps are masked out of the loss.

The backbone is frozen and prefixes are embedded once (the fast mode of `train`); the step
scores go to `rewardlab.shape.aggregate_steps` (min, product, mean, last) in `model.prm`.
"""

from __future__ import annotations

import copy
import itertools
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from rewardlab.core import BaseReward, ErrorKind, RewardResult, Sample
from rewardlab.errors import InputError
from rewardlab.models.backbones import Backbone, EmbeddingCache, load_backbone
from rewardlab.models.checkpoint import RewardModel, format_text
from rewardlab.models.heads import ScalarHead
from rewardlab.models.losses import step_bce_loss
from rewardlab.models.step_labels import BUFFER
from rewardlab.models.train import TrainingError

__all__ = ["PRMConfig", "ProcessReward", "ProcessRewardModel", "prefix_texts", "train_prm"]


def prefix_texts(prompt: str, steps: Sequence[str]) -> list[str]:
    """The text the PRM reads for each step: the prompt and every step up to and including it."""
    return [format_text(prompt, "\n".join(steps[: t + 1])) for t in range(len(steps))]


@dataclass(frozen=True)
class PRMConfig:
    epochs: int = 30
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 1e-2
    patience: int = 4
    seed: int = 0


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
            texts += prefix_texts(prompt, steps)
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


def _flatten(samples: Sequence[Sample], labels: Sequence[Sequence[float]], what: str) -> tuple[list[str], torch.Tensor]:
    texts: list[str] = []
    targets: list[float] = []
    for i, (sample, row) in enumerate(zip(samples, labels, strict=True)):
        if not sample.steps:
            raise InputError(f"{what} sample {i} has no steps; a PRM trains on Sample.steps")
        if len(row) != len(sample.steps):
            raise InputError(f"{what} sample {i}: {len(row)} labels for {len(sample.steps)} steps")
        if any(not (0.0 <= y <= 1.0 or y == BUFFER) for y in row):
            raise InputError(f"{what} sample {i}: labels must be in [0, 1] or BUFFER (-1)")
        texts += prefix_texts(sample.prompt_text, sample.steps)
        targets += [float(y) for y in row]
    return texts, torch.tensor(targets)


def train_prm(samples: Sequence[Sample], labels: Sequence[Sequence[float]], *,
              val: tuple[Sequence[Sample], Sequence[Sequence[float]]] | None = None,
              backbone: Backbone | None = None, config: PRMConfig | None = None) -> tuple[ProcessRewardModel, dict[str, Any]]:
    """Train a step head with BCE on hard or soft step labels; early-stops on validation BCE.

    Raises:
        InputError: samples without steps, label counts that do not match, labels outside [0, 1].
        TrainingError: a non-finite loss.
    """
    config = config or PRMConfig()
    torch.manual_seed(config.seed)
    start = time.perf_counter()
    backbone = backbone or load_backbone()
    cache = EmbeddingCache(backbone)
    texts, y = _flatten(samples, labels, "training")
    x = cache(texts)
    head = ScalarHead(backbone.dim)
    head.norm.fit(x)
    if val is not None:
        val_texts, val_y = _flatten(val[0], val[1], "validation")
        val_x = cache(val_texts)
    optimiser = torch.optim.AdamW(head.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    gen = torch.Generator().manual_seed(config.seed)
    history: list[dict[str, float]] = []
    best, best_state, bad = float("inf"), copy.deepcopy(head.state_dict()), 0
    for epoch in range(1, config.epochs + 1):
        head.train()
        for idx in torch.randperm(len(y), generator=gen).split(config.batch_size):
            target = y[idx]
            loss = step_bce_loss(head(x[idx])[None], target.clamp(min=0)[None], (target != BUFFER)[None])
            if not torch.isfinite(loss):
                raise TrainingError(f"PRM loss became {loss.item()} at epoch {epoch}; lower lr (now {config.lr})")
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        if val is None:
            history.append({"epoch": epoch})
            best_state = copy.deepcopy(head.state_dict())
            continue
        with torch.no_grad():
            head.eval()
            vloss = step_bce_loss(head(val_x)[None], val_y.clamp(min=0)[None], (val_y != BUFFER)[None]).item()
        history.append({"epoch": epoch, "val_bce": vloss})
        if vloss < best:
            best, best_state, bad = vloss, copy.deepcopy(head.state_dict()), 0
        else:
            bad += 1
            if bad >= config.patience:
                break
    head.load_state_dict(best_state)
    report = {"kind": "prm", "config": asdict(config), "epochs": history, "n_steps": len(y),
              "best_val_bce": best, "seconds": time.perf_counter() - start}
    return ProcessRewardModel(RewardModel(backbone, head, report=report)), report


class ProcessReward(BaseReward):
    """Step scores of a trained PRM (in `RewardResult.steps`) and their aggregate as the score.

    `aggregate` is passed to `rewardlab.shape.aggregate_steps`: `min` (Lightman et al. 2023),
    `product`, `mean` or `last`. A sample without `steps` is `error/invalid_input`.
    """

    name = "model.prm"
    range = (0.0, 1.0)

    def __init__(self, *, path: str, aggregate: Literal["min", "product", "mean", "last"] = "min",
                 batch_size: int = 64):
        if aggregate not in ("min", "product", "mean", "last"):
            raise ValueError(f"aggregate must be min, product, mean or last, got {aggregate!r}")
        self.prm = ProcessRewardModel.load(path)
        self.aggregate, self.batch_size = aggregate, batch_size
        self.params = {"path": str(path), "aggregate": aggregate, "batch_size": batch_size}

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
