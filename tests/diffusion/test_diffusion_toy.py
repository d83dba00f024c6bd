"""The toy DDPM: built from a config, seeded, trains in seconds, and scores its own steps."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rewardlab.credit.trajectory import DenoisingTrajectory
from rewardlab.diffusion.toy import ToyDiffusionConfig, make_data, train_toy_diffusion
from rewardlab.errors import ConfigError


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"data": "cifar"}, "data"),
        ({"steps": 0}, "steps"),
        ({"beta_end": 1.0}, "beta"),
        ({"lr": 0.0}, "lr"),
        ({"kind": "gan"}, "kind"),
        ({"noise_level": 0.0}, "noise_level"),
    ],
)
def test_config_rejects_bad_values_naming_them(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        ToyDiffusionConfig(**kwargs)


def test_same_config_same_weights_and_samples_and_caller_rng_untouched():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    cfg = ToyDiffusionConfig(train_iters=5)
    a, b = train_toy_diffusion(cfg), train_toy_diffusion(cfg)
    for pa, pb in zip(a.net.parameters(), b.net.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert torch.equal(a.sample(8, seed=3).latents, b.sample(8, seed=3).latents)
    assert not torch.equal(a.sample(8, seed=3).latents, a.sample(8, seed=4).latents)
    assert torch.equal(torch.random.get_rng_state(), before)


def test_ring_model_learns_the_mixture(ring_model):
    losses = ring_model.losses
    assert np.mean(losses[-50:]) < 0.8 * np.mean(losses[:50])
    final = ring_model.sample(512, seed=1).final
    radius = np.linalg.norm(final, axis=1)
    assert np.mean(np.abs(radius - 2.0) < 0.5) > 0.6  # noise N(0, I) has ~15 % there
    angle = np.mod(np.arctan2(final[:, 1], final[:, 0]), 2 * math.pi)
    modes = np.bincount(np.round(angle / (2 * math.pi / 8)).astype(int) % 8, minlength=8)
    assert (modes > 0).all()  # every mode is reached: no collapse


def test_step_log_probs_are_the_gaussian_reverse_kernel(ring_model):
    rollout = ring_model.sample(16, seed=2)
    with torch.no_grad():
        again = ring_model.log_probs(rollout)
    torch.testing.assert_close(again, rollout.log_probs)
    # by hand for the first step: N(μ_θ(x_K, K), β_K) per dimension
    k = ring_model.config.steps
    with torch.no_grad():
        eps, _ = ring_model.net(rollout.latents[:, 0], torch.full((16,), k), rollout.labels)
    beta, alpha_bar = ring_model.betas[-1], ring_model.alpha_bar[-1]
    mean = (rollout.latents[:, 0] - beta / torch.sqrt(1 - alpha_bar) * eps) / torch.sqrt(1 - beta)
    expected = torch.distributions.Normal(mean, torch.sqrt(beta)).log_prob(rollout.latents[:, 1])
    torch.testing.assert_close(rollout.log_probs[:, 0], expected)


def test_log_probs_are_differentiable(ring_model):
    rollout = ring_model.sample(4, seed=0)
    ring_model.log_probs(rollout).sum().backward()
    grads = [p.grad for p in ring_model.net.parameters()]
    assert all(g is not None for g in grads) and any(float(g.abs().sum()) > 0 for g in grads if g is not None)
    ring_model.net.zero_grad()


def test_image_model_records_one_attention_map_per_step(image_model):
    labels = torch.arange(64) % 4
    rollout = image_model.sample(64, labels=labels, seed=0)
    traj = rollout.trajectory()
    assert isinstance(traj, DenoisingTrajectory)
    assert traj.latents.shape == (64, 21, 8, 8) and traj.attention is not None
    assert traj.attention.shape == (64, 20, 8, 8)
    np.testing.assert_allclose(traj.attention.sum(axis=(2, 3)), 1.0, rtol=1e-5)


@pytest.mark.slow
def test_default_image_model_draws_the_labelled_quadrant_and_attends_to_it():
    model = train_toy_diffusion(ToyDiffusionConfig(data="image"))
    labels = torch.arange(128) % 4
    rollout = model.sample(128, labels=labels, seed=0)
    quadrants = rollout.final.reshape(128, 2, 4, 2, 4).mean(axis=(2, 4)).reshape(128, 4)
    assert np.mean(quadrants.argmax(axis=1) == labels.numpy()) > 0.9
    assert rollout.attention is not None
    maps = rollout.attention[:, -1].numpy().reshape(128, 2, 4, 2, 4).sum(axis=(2, 4)).reshape(128, 4)
    assert maps[np.arange(128), labels.numpy()].mean() > 0.4  # uniform attention would put 0.25 there


def test_data_is_generated_from_the_config():
    gen = torch.Generator().manual_seed(0)
    x, labels = make_data(ToyDiffusionConfig(data="image"), 32, gen)
    assert x.shape == (32, 64) and set(labels.tolist()) <= {0, 1, 2, 3}
    assert float(x.min()) >= -1.0 and float(x.max()) <= 1.0


def test_branch_sampling_shares_the_prefix_and_splits_after_it(image_model):
    labels = torch.tensor([0, 0, 0, 0, 3, 3, 3, 3])
    rollout = image_model.sample(8, labels=labels, seed=5, branches=4, branch_step=6)
    lat = rollout.latents.reshape(2, 4, 21, -1)
    assert torch.equal(lat[:, :1, :7].expand(-1, 4, -1, -1), lat[:, :, :7])  # states 0..6 shared
    assert not torch.equal(lat[:, 0, 7], lat[:, 1, 7])  # the branches part at step 6
    logp = rollout.log_probs.reshape(2, 4, 20, -1)
    assert torch.equal(logp[:, :1, :6].expand(-1, 4, -1, -1), logp[:, :, :6])
    assert not torch.equal(lat[0, 0, 0], lat[1, 0, 0])  # different prefixes per group


def test_one_branch_is_plain_sampling_and_the_last_step_gives_copies(ring_model):
    plain = ring_model.sample(6, seed=9)
    assert torch.equal(plain.latents, ring_model.sample(6, seed=9, branches=1, branch_step=7).latents)
    copies = ring_model.sample(6, seed=9, branches=3, branch_step=ring_model.config.steps)
    assert torch.equal(copies.latents[0], copies.latents[2]) and copies.latents.shape == plain.latents.shape


def test_branch_sampling_refuses_bad_plans(ring_model):
    with pytest.raises(ConfigError, match="branches"):
        ring_model.sample(6, branches=4)
    with pytest.raises(ConfigError, match="branch_step"):
        ring_model.sample(6, branches=3, branch_step=99)
    with pytest.raises(ConfigError, match="same within each group"):
        ring_model.sample(4, labels=torch.tensor([0, 1, 0, 0]), branches=2)


# --- the rectified flow with an SDE sampler -------------------------------------------------


def _ring_modes(final: np.ndarray) -> np.ndarray:
    angle = np.mod(np.arctan2(final[:, 1], final[:, 0]), 2 * math.pi)
    return np.bincount(np.round(angle / (2 * math.pi / 8)).astype(int) % 8, minlength=8)


@pytest.mark.slow
def test_flow_model_learns_the_mixture(flow_ring_model):
    losses = flow_ring_model.losses
    assert np.mean(losses[-50:]) < 0.8 * np.mean(losses[:50])
    rollout = flow_ring_model.sample(512, seed=1)
    radius = np.linalg.norm(rollout.final, axis=1)
    assert np.mean(np.abs(radius - 2.0) < 0.5) > 0.8
    assert (_ring_modes(rollout.final) > 20).all()  # 64 a mode if balanced: no collapse
    # x̂_0 = x_τ − τ v of the last step is already close to the sample
    gap = (rollout.predictions[:, -1] - rollout.latents[:, -1]).norm(dim=1).mean()
    assert float(gap) < 0.3


def test_flow_step_log_probs_are_the_sde_kernel(flow_ring_model):
    rollout = flow_ring_model.sample(16, seed=2)
    with torch.no_grad():
        again = flow_ring_model.log_probs(rollout)
    torch.testing.assert_close(again, rollout.log_probs)
    # by hand for the first step, τ = 1 (1 − τ replaced by Δ = 1/K): σ² Δ = a², and the mean
    # x − Δ (v + a² K x / 2) = x − v / K − a² x / 2
    k, a = flow_ring_model.config.steps, flow_ring_model.config.noise_level
    x = rollout.latents[:, 0]
    with torch.no_grad():
        v, _ = flow_ring_model.net(x, torch.full((16,), float(k)), rollout.labels)
    mean = x - v / k - a**2 * x / 2
    expected = torch.distributions.Normal(mean, torch.tensor(a)).log_prob(rollout.latents[:, 1])
    torch.testing.assert_close(rollout.log_probs[:, 0], expected)
    noised = flow_ring_model.noise(torch.ones(3, 2), torch.tensor([0, k, k // 2]), torch.Generator().manual_seed(0))
    torch.testing.assert_close(noised[0], torch.ones(2))  # τ = 0 is the data itself

