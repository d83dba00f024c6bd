"""Ensembles against over-optimisation, and the best-of-N sweep that measures it.

An ensemble here is `EnsembleHead`: K heads over one frozen backbone, aggregated by mean, worst
case (min) or uncertainty-weighted mean − λ·var (Coste et al. 2024, arXiv:2310.02743). What
works (bench/RESULTS.md, "Reward models vs TRL RewardTrainer"): MLP members from different seeds on the same full data
(`hidden=32, bootstrap=False`) — they agree in distribution and disagree out of it, where
best-of-n pushes. Linear members barely disagree (a convex loss: every seed reaches the same
head). `train_ensemble` is `train_reward_model` with `head="ensemble"`; `with_aggregation`
re-reads a trained ensemble with another rule without retraining.

`best_of_n_curve` is the over-optimisation probe of Gao et al. 2023 ("Scaling Laws for Reward
Model Overoptimization"): pick the best of n responses by the proxy reward and record the gold
reward of the pick. A proxy that is being hacked shows gold reward falling as n grows.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import numpy as np

from rewardlab.errors import ConfigError
from rewardlab.models.backbones import Backbone
from rewardlab.models.checkpoint import RewardModel, format_text
from rewardlab.models.config import TrainConfig
from rewardlab.models.data import PreferencePair
from rewardlab.models.heads import EnsembleHead
from rewardlab.models.train import TrainReport, train_reward_model

__all__ = ["best_of_n_curve", "train_ensemble", "with_aggregation"]


def train_ensemble(train: Sequence[PreferencePair], val: Sequence[PreferencePair], *, backbone: Backbone,
                   members: int = 5, how: str = "uwo", penalty: float = 1.0, feature_fraction: float = 1.0,
                   hidden: int = 0, bootstrap: bool = True,
                   config: TrainConfig | None = None) -> tuple[RewardModel, TrainReport]:
    """Train `members` heads at once over a frozen backbone.

    Args:
        hidden: 0 for linear members; > 0 for one-hidden-layer MLP members of that width, each
            from its own random initialisation (the diversity that makes min/UWO work; see
            `heads.EnsembleHead`).
        bootstrap: each member trains on its own Poisson bootstrap of the pairs; False gives
            every member the full data (Coste et al. 2024), so each is as strong as one model.
        feature_fraction: < 1 gives each member a random subspace of the features.
    """
    base = config or TrainConfig()
    cfg = TrainConfig(**{**base.__dict__, "head": "ensemble", "members": members, "ensemble_how": how,
                         "ensemble_penalty": penalty, "ensemble_feature_fraction": feature_fraction,
                         "ensemble_hidden": hidden, "ensemble_bootstrap": bootstrap, "mode": "frozen"})
    return train_reward_model(train, val, backbone=backbone, config=cfg)


def with_aggregation(model: RewardModel, how: str, *, penalty: float = 1.0) -> RewardModel:
    """The same trained ensemble, aggregated by `how` (`mean`, `min`, `uwo`)."""
    if not isinstance(model.head, EnsembleHead):
        raise ConfigError("with_aggregation needs a model trained with head='ensemble'")
    head = copy.deepcopy(model.head)
    head.how, head.penalty = how, penalty
    return RewardModel(model.backbone, head, report=model.report)


def best_of_n_curve(score: Callable[[list[str]], np.ndarray], gold: Callable[[str], float],
                    pool: Sequence[tuple[str, Sequence[str]]], ns: Sequence[int]) -> dict[int, float]:
    """Mean gold reward of the proxy's pick among the first n responses of each prompt.

    Args:
        score: proxy reward of a list of texts (`RewardModel.score_texts`).
        gold: the true reward of a response.
        pool: (prompt, responses) with at least max(ns) responses each, in random order.
        ns: the n values of the sweep (e.g. 1, 2, 4, ..., 64).
    """
    texts = [format_text(p, r) for p, rs in pool for r in rs]
    proxy = score(texts)
    curve: dict[int, float] = {}
    offset = 0
    picks: dict[int, list[float]] = {n: [] for n in ns}
    for _, responses in pool:
        if len(responses) < max(ns):
            raise ConfigError(f"every prompt needs >= {max(ns)} responses, got {len(responses)}")
        block = proxy[offset : offset + len(responses)]
        for n in ns:
            picks[n].append(gold(responses[int(np.argmax(block[:n]))]))
        offset += len(responses)
    for n in ns:
        curve[n] = float(np.mean(picks[n]))
    return curve
