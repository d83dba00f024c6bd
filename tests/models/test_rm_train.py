"""Pairwise training really trains: held-out accuracy goes up, parameters move, options work."""

import dataclasses

import pytest
import torch

from rewardlab.models import (
    TrainConfig,
    TrainingError,
    evaluate_pairs,
    tiny_bert,
    train_reward_model,
)
from rewardlab.models.checkpoint import RewardModel
from rewardlab.models.config import EncodeConfig
from rewardlab.models.heads import ScalarHead
from rewardlab.models.synthetic import SyntheticConfig, gold_reward, make_pairs


def test_training_changes_parameters_and_improves_heldout_accuracy(hashing, unbiased_pairs):
    train, val, test = unbiased_pairs
    untrained = RewardModel(hashing, ScalarHead(hashing.dim))
    before = evaluate_pairs(untrained, test)
    model, report = train_reward_model(train, val, backbone=hashing, config=TrainConfig(epochs=8))
    after = evaluate_pairs(model, test)
    assert before == pytest.approx(0.5)  # zero-initialised head: every pair is a tie
    assert after > 0.75, report.epochs
    assert model.head.net.weight.abs().sum() > 0
    assert [e.epoch for e in report.epochs] == list(range(1, len(report.epochs) + 1))
    assert report.best_val_accuracy == max(e.val_accuracy for e in report.epochs)


@pytest.mark.slow
def test_bradley_terry_recovers_gold_ranking_as_data_grows(hashing):
    """Accuracy against noisy labels approaches the noise ceiling (1 - noise = 0.9)."""
    cfg = SyntheticConfig(bias=0.5, noise=0.1)
    val = make_pairs(200, split="test", config=SyntheticConfig(seed=1))
    test = make_pairs(1000, split="test", config=SyntheticConfig(seed=3))
    accs = []
    for n in (100, 2000):
        model, _ = train_reward_model(make_pairs(n, split="train", config=cfg), val, backbone=hashing,
                                      config=TrainConfig(epochs=10))
        accs.append(evaluate_pairs(model, test))
    # the noise ceiling measured on these very pairs: how often the gold reward agrees with the label
    ceiling = sum(gold_reward(p.chosen) > gold_reward(p.rejected) for p in test) / len(test)
    assert accs[1] > accs[0] + 0.05
    assert accs[1] >= ceiling - 0.06, (accs, ceiling)


def test_same_seed_gives_the_same_model(hashing, unbiased_pairs):
    train, val, _ = unbiased_pairs
    cfg = TrainConfig(epochs=2, seed=7)
    a, _ = train_reward_model(train[:300], val, backbone=hashing, config=cfg)
    b, _ = train_reward_model(train[:300], val, backbone=hashing, config=cfg)
    assert torch.equal(a.head.net.weight, b.head.net.weight)


def test_early_stopping_keeps_the_best_epoch(hashing, unbiased_pairs):
    train, val, _ = unbiased_pairs
    model, report = train_reward_model(train, val, backbone=hashing,
                                       config=TrainConfig(epochs=40, patience=2, lr=3e-2))
    assert report.stopped_early and len(report.epochs) < 40
    assert evaluate_pairs(model, val) == pytest.approx(report.best_val_accuracy)


def test_non_finite_loss_stops_with_a_clear_message(hashing, unbiased_pairs):
    train, val, _ = unbiased_pairs
    extreme = [dataclasses.replace(p, margin=1e39) for p in train[:100]]  # inf in float32
    with pytest.raises(TrainingError, match="loss became inf at epoch 1; lower lr"):
        train_reward_model(extreme, val, backbone=hashing, config=TrainConfig(epochs=3))


def test_overflowing_update_stops_with_a_clear_message(hashing, unbiased_pairs):
    train, val, _ = unbiased_pairs
    with pytest.raises(TrainingError, match="lower lr"):
        train_reward_model(train[:100], val, backbone=hashing, config=TrainConfig(lr=1e38, epochs=3))


def test_empty_training_set_is_an_error(hashing):
    with pytest.raises(TrainingError, match="no training pairs"):
        train_reward_model([], [], backbone=hashing)


def test_finetune_trains_only_the_last_layer_and_counts_truncation(unbiased_pairs):
    train, val, _ = unbiased_pairs
    backbone = tiny_bert(encode=EncodeConfig(max_length=24))
    frozen_before = backbone.model.encoder.layer[0].attention.self.query.weight.clone()
    last_before = backbone.model.encoder.layer[-1].output.dense.weight.clone()
    model, report = train_reward_model(train[:64], val[:32], backbone=backbone,
                                       config=TrainConfig(mode="finetune", epochs=2, lr_backbone=1e-3))
    assert torch.equal(backbone.model.encoder.layer[0].attention.self.query.weight, frozen_before)
    assert not torch.equal(backbone.model.encoder.layer[-1].output.dense.weight, last_before)
    assert model.trained_params and all(".layer.1." in n for n in model.trained_params)
    assert report.n_truncated > 0  # synthetic responses are longer than 24 tokens


@pytest.mark.parametrize("head", ["odin", "ensemble", "mlp"])
def test_every_head_kind_trains(hashing, unbiased_pairs, head):
    train, val, test = unbiased_pairs
    model, _ = train_reward_model(train, val, backbone=hashing, config=TrainConfig(head=head, epochs=6))
    assert evaluate_pairs(model, test) > 0.7


def test_bad_config_is_rejected_at_construction():
    with pytest.raises(ValueError, match="finetune_layers"):
        TrainConfig(mode="finetune", finetune_layers=0)
    with pytest.raises(ValueError, match="learning rates"):
        TrainConfig(lr=0)
