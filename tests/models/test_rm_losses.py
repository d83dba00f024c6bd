"""Losses are pure functions: checked on hand-made numbers."""

import math

import pytest
import torch

from rewardlab.models.losses import (
    bradley_terry_loss,
    ensemble_aggregate,
    odin_loss,
    pairwise_accuracy,
    pinball_loss,
    step_bce_loss,
)


def test_bradley_terry_matches_the_formula():
    c, r = torch.tensor([2.0, 0.0]), torch.tensor([1.0, 1.0])
    expected = -(math.log(1 / (1 + math.exp(-1.0))) + math.log(1 / (1 + math.exp(1.0)))) / 2
    assert bradley_terry_loss(c, r).item() == pytest.approx(expected, rel=1e-6)


def test_margin_raises_the_loss_of_a_correct_pair():
    c, r = torch.tensor([1.0]), torch.tensor([0.0])
    assert bradley_terry_loss(c, r, margin=torch.tensor([2.0])) > bradley_terry_loss(c, r)


def test_label_smoothing_penalises_overconfidence():
    c, r = torch.tensor([20.0]), torch.tensor([0.0])
    assert bradley_terry_loss(c, r).item() < 1e-6
    assert bradley_terry_loss(c, r, label_smoothing=0.1).item() == pytest.approx(0.1 * 20.0, rel=1e-3)


def test_tie_is_minimised_at_equal_rewards():
    tie = torch.tensor([True])
    at_zero = bradley_terry_loss(torch.tensor([0.0]), torch.tensor([0.0]), tie=tie)
    apart = bradley_terry_loss(torch.tensor([1.0]), torch.tensor([0.0]), tie=tie)
    assert at_zero.item() == pytest.approx(math.log(2)) and apart > at_zero


def test_centering_adds_the_squared_sum():
    c, r = torch.tensor([3.0]), torch.tensor([1.0])
    delta = bradley_terry_loss(c, r, center_coef=0.01) - bradley_terry_loss(c, r)
    assert delta.item() == pytest.approx(0.01 * 16.0)


def test_label_smoothing_out_of_range_is_rejected():
    with pytest.raises(ValueError, match="label_smoothing"):
        bradley_terry_loss(torch.zeros(1), torch.zeros(1), label_smoothing=0.5)


def test_weighted_loss_ignores_zero_weight_pairs():
    c, r = torch.tensor([[5.0, -5.0]]), torch.tensor([[0.0, 0.0]])
    only_first = bradley_terry_loss(c, r, weight=torch.tensor([[1.0, 0.0]]))
    assert only_first.item() == pytest.approx(bradley_terry_loss(c[:, :1], r[:, :1]).item())


def test_ensemble_aggregations():
    s = torch.tensor([[1.0, 0.0], [3.0, 0.0]])
    assert ensemble_aggregate(s, how="mean").tolist() == [2.0, 0.0]
    assert ensemble_aggregate(s, how="min").tolist() == [1.0, 0.0]
    assert ensemble_aggregate(s, how="uwo", penalty=0.5).tolist() == [1.5, 0.0]  # var = 1
    with pytest.raises(ValueError, match="unknown ensemble"):
        ensemble_aggregate(s, how="max")


def test_pairwise_accuracy_counts_ties_as_half():
    assert pairwise_accuracy(torch.tensor([1.0, 0.0, 2.0]), torch.tensor([0.0, 1.0, 2.0])) == pytest.approx(0.5)


def test_odin_penalises_length_in_the_quality_head():
    length = torch.tensor([10.0, 20.0, 30.0, 40.0])
    q_len = length / 10  # a quality head that tracks length
    q_flat = torch.tensor([1.0, -1.0, -1.0, 1.0])  # uncorrelated with length
    zeros = torch.zeros(2)
    hacked = odin_loss(q_len[:2], q_len[2:], zeros, zeros, length[:2], length[2:])
    clean = odin_loss(q_flat[:2], q_flat[2:], length[:2] / 10, length[2:] / 10, length[:2], length[2:])
    assert clean < hacked


def test_step_bce_masks_padding_steps():
    logits = torch.tensor([[10.0, -10.0]])
    targets = torch.tensor([[1.0, 1.0]])
    assert step_bce_loss(logits, targets, torch.tensor([[1, 0]])).item() < 1e-3
    assert step_bce_loss(logits, targets).item() > 4.0


def test_pinball_is_asymmetric():
    q = torch.tensor([0.9])
    under = pinball_loss(torch.tensor([[0.0]]), torch.tensor([1.0]), q)
    over = pinball_loss(torch.tensor([[2.0]]), torch.tensor([1.0]), q)
    assert under.item() == pytest.approx(0.9) and over.item() == pytest.approx(0.1)
