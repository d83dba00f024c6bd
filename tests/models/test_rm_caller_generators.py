"""Training leaves the caller's generators alone and its weights depend only on the seed.

A user trains a reward model inside an RL loop or a seeded script; whatever their own code draws
next from torch's, numpy's or Python's global generator (a policy's actions, a shuffle) must be
what it would have drawn had training not run — also when training stops with an error.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from caller_generators import caller_draws, seed_caller
from rewardlab.errors import InputError
from rewardlab.models import TrainConfig, TrainingError, train_reward_model
from rewardlab.models.backbones import HFBackbone
from rewardlab.models.config import EncodeConfig, PRMConfig
from rewardlab.models.prm import train_prm
from rewardlab.models.synthetic import make_step_samples


def _dropout_bert() -> HFBackbone:
    """A tiny BERT whose dropout is on, so fine-tuning draws from torch's generator every step."""
    config = {"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
              "intermediate_size": 64, "max_position_embeddings": 512, "vocab_size": 30522,
              "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}
    return HFBackbone.from_config(config, encode=EncodeConfig(max_length=64), seed=3)


@pytest.fixture(scope="module")
def steps():
    return make_step_samples(60, seed=0)[:2], make_step_samples(20, seed=1)[:2]


def _train_rm(pairs, val, backbone, **config):
    model, _ = train_reward_model(pairs, val, backbone=backbone, config=TrainConfig(epochs=1, **config))
    return model


def _train_prm(steps, backbone, *, val_labels=None, **config):
    (samples, labels), (val, val_gold) = steps
    prm, _ = train_prm(samples, labels, val=(val, val_labels or val_gold), backbone=backbone,
                       config=PRMConfig(epochs=1, **config))
    return prm.model


def _weights(model) -> list[torch.Tensor]:
    named = dict(model.backbone.named_parameters()) if model.trained_params else {}
    return [t.detach().clone() for t in model.head.state_dict().values()] + [named[n].detach().clone()
                                                                            for n in model.trained_params]


def _same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_training_a_reward_model_leaves_the_callers_generators_alone(hashing, unbiased_pairs):
    train, val, _ = unbiased_pairs
    seed_caller()
    want = caller_draws()
    seed_caller()
    _train_rm(train[:100], val[:40], hashing, head="mlp", seed=0)  # an MLP head draws its init
    assert caller_draws() == want


def test_training_a_prm_leaves_the_callers_generators_alone(hashing, steps):
    seed_caller()
    want = caller_draws()
    seed_caller()
    _train_prm(steps, hashing, seed=0)
    assert caller_draws() == want


def test_a_reward_model_training_that_fails_midway_still_gives_the_state_back(hashing, unbiased_pairs):
    train, val, _ = unbiased_pairs
    extreme = [dataclasses.replace(p, margin=1e39) for p in train[:100]]  # inf in float32 at the first step
    seed_caller()
    want = caller_draws()
    seed_caller()
    with pytest.raises(TrainingError, match="loss became inf at epoch 1"):
        _train_rm(extreme, val[:40], hashing, head="mlp", seed=0)
    assert caller_draws() == want


def test_a_prm_training_that_fails_midway_still_gives_the_state_back(hashing, steps):
    val_gold = steps[1][1]
    bad = [[2.0] * len(row) for row in val_gold]  # rejected after the head is built
    seed_caller()
    want = caller_draws()
    seed_caller()
    with pytest.raises(InputError, match="validation sample 0: labels must be in"):
        _train_prm(steps, hashing, val_labels=bad, seed=0)
    assert caller_draws() == want


def test_same_seed_gives_the_same_mlp_head_whatever_the_caller_drew(hashing, unbiased_pairs):
    train, val, _ = unbiased_pairs
    seed_caller(1)
    a = _weights(_train_rm(train[:200], val[:40], hashing, head="mlp", seed=7))
    seed_caller(2)
    caller_draws()
    b = _weights(_train_rm(train[:200], val[:40], hashing, head="mlp", seed=7))
    other = _weights(_train_rm(train[:200], val[:40], hashing, head="mlp", seed=8))
    assert _same(a, b)
    assert not _same(a, other)  # the seed is what decides the initial weights


def test_same_seed_gives_the_same_finetuned_layers_with_dropout(unbiased_pairs):
    train, val, _ = unbiased_pairs
    runs = []
    for caller_seed in (1, 2):
        seed_caller(caller_seed)
        runs.append(_weights(_train_rm(train[:40], val[:20], _dropout_bert(), mode="finetune",
                                       finetune_layers=1, seed=7)))
    assert len(runs[0]) > 2 and _same(*runs)  # head and the top block's weights


def test_same_seed_gives_the_same_prm_with_dropout(steps):
    runs = []
    for caller_seed in (1, 2):
        seed_caller(caller_seed)
        runs.append(_weights(_train_prm(steps, _dropout_bert(), mode="finetune", finetune_layers=1, seed=4)))
    assert len(runs[0]) > 2 and _same(*runs)
