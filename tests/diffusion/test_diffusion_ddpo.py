"""The DDPO-side loop and the noisy-latent reward model on the toy DDPM (small budgets)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rewardlab.credit.diffusion import noisy_step_advantages
from rewardlab.diffusion.ddpo import (
    CREDIT_RULES,
    BackwardCredit,
    CreditInputs,
    DDPOConfig,
    backward,
    cosine,
    noisy_rm,
    pixel,
    spatial,
    train_ddpo,
    uniform,
)
from rewardlab.diffusion.noisy_rm import NoisyRMConfig, train_noisy_rm
from rewardlab.errors import ArrayError, ConfigError, TrainingError

TARGET = np.array([2.0, 0.0])


def near_target(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """1 at the ring's mode (2, 0), falling off over 0.5."""
    return np.exp(-((x - TARGET) ** 2).sum(axis=1) / (2 * 0.5**2))


def quadrant_brightness(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.asarray(quadrant_pixels(x, labels).reshape(len(x), -1).sum(axis=1) / 16)


def quadrant_pixels(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-pixel reward: the clipped value of the pixels of the labelled quadrant, 0 elsewhere."""
    mask = np.zeros(x.shape)
    for i, label in enumerate(labels):
        r0, c0 = (label // 2) * 4, (label % 2) * 4
        mask[i, r0 : r0 + 4, c0 : c0 + 4] = 1.0
    return np.clip(x, -1, 1) * mask


def test_uniform_credit_raises_the_reward_and_leaves_the_policy_alone(ring_model):
    before = [p.detach().clone() for p in ring_model.net.parameters()]
    tuned, run = train_ddpo(ring_model, near_target, "uniform", DDPOConfig(iterations=12, lr=1e-3))
    assert all(torch.equal(a, b) for a, b in zip(before, ring_model.net.parameters(), strict=True))
    assert np.mean(run.rewards[-3:]) > np.mean(run.rewards[:3]) + 0.15
    assert run.samples == [64 * (i + 1) for i in range(12)]
    held_out = near_target(tuned.sample(256, seed=99).final, np.zeros(256)).mean()
    assert held_out > near_target(ring_model.sample(256, seed=99).final, np.zeros(256)).mean() + 0.1


def test_a_zero_credit_rule_does_not_learn(ring_model):
    # The control: the reward moves only through the credit, so zero credit changes nothing.
    def zero(inputs: CreditInputs) -> np.ndarray:
        return np.zeros((inputs.trajectory.batch, inputs.trajectory.steps))

    tuned, _ = train_ddpo(ring_model, near_target, zero, DDPOConfig(iterations=2))
    assert all(torch.equal(a, b) for a, b in zip(tuned.net.parameters(), ring_model.net.parameters(), strict=True))


@pytest.mark.parametrize("name", sorted(CREDIT_RULES))
def test_every_named_rule_runs_on_images(image_model, name):
    _, run = train_ddpo(image_model, quadrant_brightness, name, DDPOConfig(iterations=2, groups=4, group_size=4))
    assert len(run.rewards) == 2 and np.isfinite(run.rewards).all() and run.credit == name


def test_rules_have_the_shapes_the_loop_reads(image_model):
    labels = torch.arange(8) % 4
    rollout = image_model.sample(8, labels=labels, seed=0)
    rewards = quadrant_brightness(rollout.final, labels.numpy()).reshape(2, 4)
    adv = (rewards - rewards.mean(axis=1, keepdims=True)) / rewards.std(axis=1, ddof=1, keepdims=True)
    inputs = CreditInputs(rollout, rollout.trajectory(), rewards, adv, iteration=0, iterations=3)
    k = image_model.config.steps
    assert uniform()(inputs).shape == (8, k)
    raw = cosine(standardize=False)(inputs)
    np.testing.assert_allclose(raw[:, 0], adv.reshape(-1), atol=1e-9)  # the first step's reward-to-go is A
    standardized = cosine()(inputs).reshape(2, -1)
    np.testing.assert_allclose(standardized.mean(axis=1), 0.0, atol=1e-9)
    np.testing.assert_allclose(standardized.std(axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(spatial()(inputs).mean(axis=(2, 3)), uniform()(inputs), atol=1e-9)
    first_stage = backward(stages=4)(inputs)
    assert (first_stage[:, : k - 5] == 0).all() and (first_stage[:, -5:] == adv.reshape(-1, 1)).all()
    px = pixel(quadrant_pixels)(inputs)
    assert px.shape == (8, k, 8, 8)
    np.testing.assert_allclose(px[:, 0].sum(axis=(1, 2)) / 16, (rewards - rewards.mean(axis=1, keepdims=True)).reshape(-1))


def test_bad_credit_and_rewards_are_refused(ring_model):
    with pytest.raises(ConfigError, match="unknown credit rule"):
        train_ddpo(ring_model, near_target, "gae")
    with pytest.raises(ArrayError, match=r"^credit:"):
        train_ddpo(ring_model, near_target, lambda inputs: np.zeros(3), DDPOConfig(iterations=1))
    with pytest.raises(TrainingError, match="finite rewards"):
        train_ddpo(ring_model, lambda x, labels: np.full(len(x), np.nan), "uniform", DDPOConfig(iterations=1))
    with pytest.raises(ConfigError, match="group_size"):
        DDPOConfig(group_size=1)


def test_noisy_latent_rm_ranks_clean_samples_and_gives_step_advantages(ring_model):
    rm, report = train_noisy_rm(ring_model, near_target, NoisyRMConfig(iters=150, pool=512))
    assert np.mean(report.losses[-20:]) < np.mean(report.losses[:20])
    assert report.accuracy[0] > 0.85  # clean pairs are ordered like the reward orders them
    assert report.accuracy[0] > report.accuracy[ring_model.config.steps]  # pure noise says less
    rollout = ring_model.sample(64, seed=4)
    scores = rm.score_states(rollout)
    assert scores.shape == (64, ring_model.config.steps + 1)
    # the last state's score orders samples as their true reward does (rank correlation)
    true = near_target(rollout.final, np.zeros(64))
    ranks = np.argsort(np.argsort(scores[:, -1])), np.argsort(np.argsort(true))
    assert np.corrcoef(*ranks)[0, 1] > 0.7
    step_adv = noisy_step_advantages(scores.reshape(8, 8, -1))
    assert step_adv.shape == (8, 8, ring_model.config.steps)
    _, run = train_ddpo(ring_model, near_target, noisy_rm(rm), DDPOConfig(iterations=2))
    assert run.credit == "noisy_rm"


def test_backward_rule_with_branches_compares_samples_that_share_a_prefix(image_model):
    rule = BackwardCredit(stages=2, branches=4)
    k = image_model.config.steps
    assert rule.branch_plan(0, 4, k) == (4, k // 2) and rule.branch_plan(3, 4, k) == (4, 0)
    labels = torch.arange(2).repeat_interleave(8)
    rollout = image_model.sample(16, labels=labels, seed=1, branches=4, branch_step=k // 2)
    rewards = quadrant_brightness(rollout.final, labels.numpy()).reshape(2, 8)
    inputs = CreditInputs(rollout, rollout.trajectory(), rewards, np.zeros((2, 8)), iteration=0, iterations=4)
    credit = rule(inputs)
    assert (credit[:, : k // 2] == 0).all()
    per_branch = credit[:, -1].reshape(4, 4)
    np.testing.assert_allclose(per_branch.sum(axis=1), 0.0, atol=1e-9)  # GRPO within each branch group
    _, run = train_ddpo(image_model, quadrant_brightness, backward(stages=2, branches=4),
                        DDPOConfig(iterations=2, groups=2, group_size=8))
    assert run.credit == "backward" and len(run.rewards) == 2
    with pytest.raises(ConfigError, match="multiple of the rule's branches"):
        train_ddpo(image_model, quadrant_brightness, backward(branches=3), DDPOConfig(iterations=1, group_size=8))


def test_cosine_rule_keeps_step_advantages_on_the_trajectory_scale_in_two_dimensions(ring_model):
    # On the 2-D ring the first prediction x̂_0 often already points at the final sample; the
    # unbounded rule then hands some trajectories hundreds of times their advantage.
    rollout = ring_model.sample(64, seed=1)
    adv = np.random.default_rng(0).normal(size=(4, 16))
    inputs = CreditInputs(rollout, rollout.trajectory(), adv, adv, iteration=0, iterations=1)
    bounded = cosine(standardize=False)(inputs)
    assert (np.abs(bounded) <= 2 * np.abs(adv.reshape(-1, 1)) + 1e-9).all()
    np.testing.assert_allclose(bounded[:, 0], adv.reshape(-1))  # the first step still gets A
    unbounded = cosine(standardize=False, max_ratio=None)(inputs)
    assert (np.abs(unbounded) / np.abs(adv.reshape(-1, 1))).max() > 10


@pytest.mark.slow
def test_ddpo_trains_the_flow_model_too(flow_ring_model):
    _, run = train_ddpo(flow_ring_model, near_target, "uniform", DDPOConfig(iterations=12, lr=1e-3))
    assert np.mean(run.rewards[-3:]) > np.mean(run.rewards[:3]) + 0.15
