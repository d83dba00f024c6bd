"""The scene toy: prompts of four tokens, a pixel-to-token cross-attention whose maps localise."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rewardlab.credit.diffusion import spatial_advantages
from rewardlab.diffusion.scene import (
    SCENE_CLASSES,
    SceneDenoiser,
    make_scene,
    region_mass,
    scene_content,
    subject_masks,
)
from rewardlab.diffusion.toy import ToyDiffusionConfig, make_data, train_toy_diffusion
from rewardlab.errors import ArrayError, ConfigError


def test_labels_decode_to_the_subject_and_the_quadrants_holding_blobs():
    # label = subject * 8 + bits; bit i marks the i-th quadrant other than the subject
    labels = torch.tensor([0, 31, 9, 12, 22])
    subject, content = scene_content(labels)
    assert subject.tolist() == [0, 3, 1, 1, 2]
    assert content.tolist() == [
        [1, 0, 0, 0],  # subject 0 alone
        [1, 1, 1, 1],  # subject 3, all three others
        [1, 1, 0, 0],  # subject 1, bit 0 -> quadrant 0
        [0, 1, 0, 1],  # subject 1, bit 2 -> the third other quadrant, 3
        [0, 1, 1, 1],  # subject 2, bits 1 and 2 -> quadrants 1 and 3
    ]
    assert SCENE_CLASSES == 32
    subjects, every = scene_content(torch.arange(SCENE_CLASSES))
    assert (every[torch.arange(SCENE_CLASSES), subjects] == 1).all()
    # each subject with each of the 8 sets of other quadrants: every non-empty set, once per member
    nonempty = {tuple((m >> q) & 1 for q in range(4)) for m in range(1, 16)}
    assert {tuple(row) for row in every.tolist()} == nonempty
    assert sorted(every.sum(dim=1).tolist()) == sorted(bin(m).count("1") for m in range(1, 16) for _ in range(bin(m).count("1")))
    for bad in (torch.tensor([32]), torch.tensor([-1]), torch.tensor([0.0])):
        with pytest.raises(ArrayError, match="labels"):
            scene_content(bad)


def test_subject_masks_mark_the_subject_quadrant():
    masks = subject_masks(np.array([24, 8]))
    assert masks.shape == (2, 8, 8) and masks.sum(axis=(1, 2)).tolist() == [16.0, 16.0]
    assert masks[0, 4:, 4:].all() and masks[1, :4, 4:].all()


def test_scenes_hold_a_blob_exactly_where_the_prompt_says():
    x, labels = make_scene(256, torch.Generator().manual_seed(0))
    assert x.shape == (256, 64) and float(x.min()) >= -1.0 and float(x.max()) <= 1.0
    _, content = scene_content(labels)
    peaks = x.reshape(256, 2, 4, 2, 4).amax(dim=(2, 4)).reshape(256, 4)
    # a blob's centre is within half a pixel of a pixel centre on each axis: that pixel is at
    # least 2 exp(-1/4) - 1 = 0.557; an empty quadrant's nearest blob is a pixel away: at most
    # 2 exp(-1/2) - 1 = 0.213
    assert float(peaks[content == 1].min()) >= 2 * np.exp(-0.25) - 1 - 1e-6
    assert float(peaks[content == 0].max()) <= 2 * np.exp(-0.5) - 1 + 1e-6
    again, _ = make_data(ToyDiffusionConfig(data="scene"), 256, torch.Generator().manual_seed(0))
    assert torch.equal(again, x)


def test_region_mass_by_hand():
    maps = np.array([[[[1.0, 3.0], [0.0, 4.0]], [[1.0, 1.0], [1.0, 1.0]]]])  # one trajectory, two steps
    region = np.array([[[0.0, 1.0], [0.0, 1.0]]])  # the right column
    np.testing.assert_allclose(region_mass(maps, region), [[7 / 8, 1 / 2]])
    rng = np.random.default_rng(0)
    random_region = (rng.random((3, 8, 8)) < 0.3).astype(float)
    even = np.ones((3, 5, 8, 8))
    np.testing.assert_allclose(region_mass(even, random_region), np.repeat(random_region.mean(axis=(1, 2))[:, None], 5, 1))
    with pytest.raises(ArrayError, match="regions"):
        region_mass(maps, region[0])
    with pytest.raises(ArrayError, match="maps"):
        region_mass(-maps, region)
    with pytest.raises(ArrayError, match="maps"):
        region_mass(np.zeros_like(maps), region)


def test_denoiser_attends_over_tokens_and_reports_the_subject_token_map():
    torch.manual_seed(0)
    net = SceneDenoiser(steps=10)
    x, labels = torch.randn(6, 64), torch.tensor([0, 9, 12, 22, 31, 5])
    t = torch.full((6,), 4)
    maps = net.token_maps(x, t, labels)
    assert maps.shape == (6, 64, 4)
    torch.testing.assert_close(maps.sum(dim=2), torch.ones(6, 64))  # softmax over the tokens, per pixel
    noise, subject_map = net(x, t, labels)
    assert noise.shape == (6, 64)
    torch.testing.assert_close(subject_map, maps[torch.arange(6), :, labels // 8])


def test_a_subject_token_nobody_attends_to_still_has_a_map_spatial_credit_can_read():
    torch.manual_seed(0)
    net = SceneDenoiser(steps=10)
    with torch.no_grad():  # every pixel attends to token 0 with a logit lead of ~1e4: float32 underflows
        net.key.weight.zero_()
        net.key.bias.zero_()
        net.query.weight.zero_()
        net.query.bias.fill_(100.0)
        net.quadrant.weight.zero_()
        net.quadrant.weight[0].fill_(1.0)
        net.key.weight[:, 0] = 1.0
    x, labels = torch.randn(2, 64), torch.tensor([8, 31])  # subjects 1 and 3: never attended
    maps = net.token_maps(x, torch.full((2,), 3), labels)
    assert float(maps[:, :, 1:].detach().max()) == 0.0
    _, subject_map = net(x, torch.full((2,), 3), labels)
    assert (subject_map > 0).all()
    even = spatial_advantages(np.array([1.0, -2.0]), subject_map.detach().double().numpy().reshape(2, 1, 8, 8))
    np.testing.assert_allclose(even, np.array([1.0, -2.0])[:, None, None, None] * np.ones((2, 1, 8, 8)))


def test_scene_config_samples_with_one_subject_map_per_step():
    model = train_toy_diffusion(ToyDiffusionConfig(data="scene", train_iters=3, batch_size=16, steps=5))
    assert model.config.classes == 32 and isinstance(model.net, SceneDenoiser)
    rollout = model.sample(4, labels=torch.tensor([0, 8, 16, 31]), seed=0)
    traj = rollout.trajectory()
    assert traj.latents.shape == (4, 6, 8, 8) and traj.attention is not None and traj.attention.shape == (4, 5, 8, 8)
    with pytest.raises(ConfigError, match="radius"):
        ToyDiffusionConfig(radius=0.0)


def test_ring_radius_sets_where_the_modes_are():
    x, _ = make_data(ToyDiffusionConfig(data="ring", radius=5.0), 512, torch.Generator().manual_seed(0))
    assert abs(float(x.norm(dim=1).mean()) - 5.0) < 0.05  # modes on the circle, sd 0.1 around them


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_brief_training_localises_the_subject_token_on_its_quadrant(seed):
    config = ToyDiffusionConfig(data="scene", lr=1e-2, train_iters=150, batch_size=64, steps=10, seed=seed)
    model = train_toy_diffusion(config)
    labels = torch.arange(64) % SCENE_CLASSES
    rollout = model.sample(64, labels=labels, seed=0)
    mass = region_mass(np.asarray(rollout.trajectory().attention), subject_masks(labels.numpy()))
    assert mass.mean() > 0.6  # a map spread evenly puts 0.25 inside; these give 0.83-0.90
