"""Credit over denoising steps and pixels: each rule against a hand computation and its invariant."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rewardlab.credit.diffusion import (
    backward_credit,
    backward_stage,
    backward_step_mask,
    cosine_progress,
    cosine_progress_advantages,
    cosine_progress_credit,
    noisy_step_advantages,
    pixel_advantages,
    spatial_advantages,
)
from rewardlab.credit.trajectory import DenoisingTrajectory
from rewardlab.errors import ArrayError, NonFiniteError

R2 = math.sqrt(2.0)


# --- the trajectory type -------------------------------------------------------------------


def test_trajectory_validates_and_reports_shape():
    traj = DenoisingTrajectory.of(np.zeros((3, 5, 2)), [4, 3, 2, 1, 0], np.ones((3, 4, 2)))
    assert (traj.batch, traj.steps, traj.final.shape) == (3, 4, (3, 2))


@pytest.mark.parametrize(
    ("latents", "timesteps", "attention", "field"),
    [
        (np.zeros((3, 5)), [4, 3, 2, 1, 0], None, "latents"),  # no state axis
        (np.zeros((3, 1, 2)), [0], None, "latents"),  # one state is no trajectory
        (np.full((1, 2, 2), np.nan), [1, 0], None, "latents"),
        (np.zeros((1, 3, 2)), [2, 1], None, "timesteps"),  # one time short
        (np.zeros((1, 3, 2)), [0, 1, 2], None, "timesteps"),  # increasing
        (np.zeros((1, 3, 2)), [2, 2, 0], None, "timesteps"),  # repeated
        (np.zeros((1, 3, 2)), [2, 1, 0], np.ones((1, 3, 2)), "attention"),  # a map per state, not per step
        (np.zeros((1, 3, 2)), [2, 1, 0], -np.ones((1, 2, 2)), "attention"),  # logits, not weights
        (np.zeros((1, 3, 2)), [2, 1, 0], np.zeros((1, 2, 2)), "attention"),  # no mass
        (np.zeros((1, 3, 2)), [2, 1, 0], np.full((1, 2, 2), np.inf), "attention"),
    ],
)
def test_trajectory_errors_name_the_bad_field(latents, timesteps, attention, field):
    with pytest.raises(ArrayError) as info:
        DenoisingTrajectory.of(latents, timesteps, attention)
    assert info.value.argument == field
    assert str(info.value).startswith(f"{field}:")


@pytest.mark.parametrize("predictions", [np.zeros((1, 3, 2)), np.zeros((1, 2, 3)), np.full((1, 2, 2), np.nan)])
def test_trajectory_predictions_need_one_finite_estimate_per_step(predictions):
    with pytest.raises(ArrayError) as info:
        DenoisingTrajectory.of(np.zeros((1, 3, 2)), [2, 1, 0], predictions=predictions)
    field = "predictions"
    assert info.value.argument == field
    assert str(info.value).startswith(f"{field}:")


# --- cosine progress (CoCA) -------------------------------------------------------------------


def test_cosine_credit_by_hand():
    # cos with the final (1, 0): 0, 1/√2, 1 -> Δ = (1/√2, 1 − 1/√2), total 1.
    lat = np.array([[[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]])
    np.testing.assert_allclose(cosine_progress(lat), [[0.0, 1 / R2, 1.0]])
    np.testing.assert_allclose(cosine_progress_credit(lat, [2.0]), [[R2, 2 - R2]])


def test_cosine_credit_step_that_moves_away():
    # cos: 1/√2, 0, 1 -> Δ = (−1/√2, 1), total 1 − 1/√2: the first step gets the opposite sign
    # (the paper's signed form); with signed=False only progress counts: weights (0, 1).
    lat = np.array([[[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]])
    credit = cosine_progress_credit(lat, [1.0])
    total = 1 - 1 / R2
    np.testing.assert_allclose(credit, [[-1 / R2 / total, 1 / total]])
    assert credit[0, 0] < 0 < credit[0, 1]
    np.testing.assert_allclose(cosine_progress_credit(lat, [1.0], signed=False), [[0.0, 1.0]])


def test_cosine_credit_without_progress_is_uniform():
    lat = np.array([[[2.0, 0.0], [0.0, 1.0], [1.0, 0.0]]])  # starts in the final direction
    np.testing.assert_allclose(cosine_progress_credit(lat, [3.0]), [[1.5, 1.5]])
    np.testing.assert_allclose(cosine_progress_credit(lat, [3.0], signed=False), [[0.0, 3.0]])  # the step back
    still = np.array([[[2.0, 0.0], [3.0, 0.0], [1.0, 0.0]]])  # never changes direction
    np.testing.assert_allclose(cosine_progress_credit(still, [3.0], signed=False), [[1.5, 1.5]])


def test_cosine_credit_block_windows_by_hand():
    # K = 4, window 2: block means m0 = (s1 + s2)/2, m1 = (s3 + s4)/2; gains g0 = m0 − s0,
    # g1 = m1 − m0; each step of a block gets its block's gain / (2 (g0 + g1)).
    lat = np.array([[[1.0, 0.0], [3.0, 1.0], [1.0, 1.0], [1.0, 3.0], [0.0, 1.0]]])
    s0, s1, s2, s3, s4 = cosine_progress(lat)[0]
    m0, m1 = (s1 + s2) / 2, (s3 + s4) / 2
    g0, g1 = m0 - s0, m1 - m0
    expected = np.array([g0, g0, g1, g1]) / (2 * (g0 + g1))
    np.testing.assert_allclose(cosine_progress_credit(lat, [1.0], window=2), [expected])
    np.testing.assert_allclose(cosine_progress_credit(lat, [1.0], window=4), [[0.25] * 4])  # one block


def test_cosine_credit_uses_the_models_predictions_when_given():
    # The final sample (1, 0); predictions x̂_0 of the two steps (0, 1) and (1, 1): the same
    # similarities as the hand case above, whatever the noisy states were.
    lat = np.array([[[5.0, -3.0], [0.3, 0.2], [1.0, 0.0]]])
    traj = DenoisingTrajectory.of(lat, [2, 1, 0], predictions=[[[0.0, 1.0], [1.0, 1.0]]])
    np.testing.assert_allclose(cosine_progress(traj), [[0.0, 1 / R2, 1.0]])
    np.testing.assert_allclose(cosine_progress_credit(traj, [2.0]), [[R2, 2 - R2]])


def test_cosine_advantages_are_the_reward_to_go():
    lat = np.array([[[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]])  # step rewards (√2, 2 − √2) for A = 2
    np.testing.assert_allclose(cosine_progress_advantages(lat, [2.0]), [[2.0, 2 - R2]])
    np.testing.assert_allclose(cosine_progress_advantages(lat, [2.0], alpha=0.5), [[2.0, 1 + (2 - R2) / 2]])
    np.testing.assert_allclose(cosine_progress_advantages(lat, [2.0], alpha=1.0), [[2.0, 2.0]])  # uniform
    with pytest.raises(ArrayError, match=r"^alpha:"):
        cosine_progress_advantages(lat, [2.0], alpha=2.0)


@pytest.mark.parametrize("seed", range(5))
def test_cosine_credit_sums_to_the_advantage(seed):
    rng = np.random.default_rng(seed)
    lat = rng.normal(size=(6, 11, 4, 4))
    adv = rng.normal(size=6)
    traj = DenoisingTrajectory.of(lat, np.arange(10, -1, -1), predictions=rng.normal(size=(6, 10, 4, 4)))
    for window, signed, source in itertools.product((1, 2, 5), (False, True), (lat, traj)):
        credit = cosine_progress_credit(source, adv, window=window, signed=signed)
        assert credit.shape == (6, 10)
        np.testing.assert_allclose(credit.sum(axis=1), adv, atol=1e-9)
        np.testing.assert_allclose(cosine_progress_advantages(source, adv, window=window, signed=signed)[:, 0], adv)
        if not signed:  # progress-only weights lie in [0, 1]: each credit has A's sign
            assert (credit * adv[:, None] >= -1e-12).all() and (np.abs(credit) <= np.abs(adv)[:, None] + 1e-12).all()


def test_cosine_credit_bad_arguments_are_named():
    lat = np.zeros((2, 3, 2)) + 1.0
    with pytest.raises(ArrayError, match=r"^advantages:"):
        cosine_progress_credit(lat, [1.0])
    with pytest.raises(ArrayError, match=r"^window:"):
        cosine_progress_credit(lat, [1.0, 2.0], window=3)
    with pytest.raises(NonFiniteError, match=r"^advantages:"):
        cosine_progress_credit(lat, [1.0, np.nan])
    with pytest.raises(ArrayError, match=r"^latents:"):
        cosine_progress_credit(np.zeros((2, 3)), [1.0, 2.0])


def test_cosine_credit_path_ratio_bounds_a_trajectory_that_starts_aligned_and_wanders():
    # s: cos 0.1 rad ≈ 0.995, then 0 (orthogonal), then 1. Gains (−0.995, 1): net 0.005, path
    # 1.995, so the signed weights are ≈ ∓199 A. Past max_ratio the progress-only weights apply.
    a = 0.1
    lat = np.array([[[math.cos(a), math.sin(a)], [0.0, 1.0], [1.0, 0.0]]])
    net = 1 - math.cos(a)
    unbounded = cosine_progress_credit(lat, [1.0])
    np.testing.assert_allclose(unbounded, [[-math.cos(a) / net, 1 / net]])
    assert np.abs(unbounded).max() > 100
    np.testing.assert_allclose(cosine_progress_credit(lat, [1.0], max_ratio=2.0), [[0.0, 1.0]])
    np.testing.assert_allclose(cosine_progress_advantages(lat, [1.0], max_ratio=2.0), [[1.0, 1.0]])
    # a trajectory within the bound keeps the paper's signed weights: s = 1/√2, 0, 1, path
    # ratio (1/√2 + 1) / (1 − 1/√2) = 3 + 2√2 ≈ 5.83
    back = np.array([[[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]])
    np.testing.assert_allclose(cosine_progress_credit(back, [1.0], max_ratio=6.0), cosine_progress_credit(back, [1.0]))
    np.testing.assert_allclose(cosine_progress_credit(back, [1.0], max_ratio=5.8), [[0.0, 1.0]])
    with pytest.raises(ArrayError, match=r"^max_ratio:"):
        cosine_progress_credit(lat, [1.0], max_ratio=0.5)


@pytest.mark.parametrize("seed", range(3))
def test_cosine_advantages_stay_within_the_path_ratio(seed):
    rng = np.random.default_rng(seed)
    lat = rng.normal(size=(50, 9, 2))  # 2-D states: many start near the final direction
    adv = rng.normal(size=50)
    for bound in (1.0, 2.0, 5.0):
        out = cosine_progress_advantages(lat, adv, max_ratio=bound)
        assert (np.abs(out) <= bound * np.abs(adv)[:, None] + 1e-9).all()
        np.testing.assert_allclose(cosine_progress_credit(lat, adv, max_ratio=bound).sum(axis=1), adv, atol=1e-9)


def test_cosine_credit_hands_torch_back():
    torch = pytest.importorskip("torch")
    lat = torch.tensor([[[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]])
    out = cosine_progress_credit(lat, torch.tensor([2.0]))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), [[R2, 2 - R2]], rtol=1e-6)


# --- spatial allocation (STAR) ----------------------------------------------------------------


def test_spatial_allocation_by_hand():
    maps = np.array([[[1.0, 3.0]]])  # one trajectory, one step, two positions: shares 1/4, 3/4
    np.testing.assert_allclose(spatial_advantages([2.0], maps), [[[1.0, 3.0]]])  # 2 · 2 · share
    np.testing.assert_allclose(spatial_advantages([2.0], maps, strength=0.5), [[[1.5, 2.5]]])
    np.testing.assert_allclose(spatial_advantages([2.0], maps, strength=0.0), [[[2.0, 2.0]]])


def test_spatial_allocation_keeps_each_steps_advantage():
    rng = np.random.default_rng(0)
    maps = rng.random((4, 6, 8, 8))
    step_adv = rng.normal(size=(4, 6))
    out = spatial_advantages(step_adv, DenoisingTrajectory.of(rng.normal(size=(4, 7, 8, 8)), range(6, -1, -1), maps))
    assert out.shape == (4, 6, 8, 8)
    np.testing.assert_allclose(out.mean(axis=(2, 3)), step_adv, atol=1e-12)
    hot = np.unravel_index(maps[0, 0].argmax(), (8, 8))
    assert np.sign(out[0, 0][hot]) == np.sign(step_adv[0, 0])  # the attended pixel keeps the sign


def test_spatial_allocation_errors():
    with pytest.raises(ArrayError, match=r"^attention:"):
        spatial_advantages([1.0], np.array([[[0.0, 0.0]]]))
    with pytest.raises(ArrayError, match=r"^attention:"):
        spatial_advantages([1.0], DenoisingTrajectory.of(np.ones((1, 2, 2)), [1, 0]))
    with pytest.raises(ArrayError, match=r"^advantages:"):
        spatial_advantages([1.0, 2.0], np.ones((1, 1, 2)))
    with pytest.raises(ArrayError, match=r"^strength:"):
        spatial_advantages([1.0], np.ones((1, 1, 2)), strength=1.5)


# --- noisy-latent step rewards (DRM Step-GRPO) --------------------------------------------------


def test_noisy_step_advantages_by_hand():
    # One group of 2, K = 1: step rewards 1 and 3 -> mean 2, std √2 -> ∓1/√2.
    r = np.array([[[0.0, 1.0], [0.0, 3.0]]])
    np.testing.assert_allclose(noisy_step_advantages(r, eps=0.0), [[[-1 / R2], [1 / R2]]])
    # gains: 1 and 3 again (the noise states score the same).
    np.testing.assert_allclose(noisy_step_advantages(r, gains=True, eps=0.0), [[[-1 / R2], [1 / R2]]])
    # different starts: levels (2, 3) vs gains (1, 3) rank the same, scale differs.
    r2 = np.array([[[1.0, 2.0], [0.0, 3.0]]])
    np.testing.assert_allclose(noisy_step_advantages(r2, eps=0.0), [[[-1 / R2], [1 / R2]]])


def test_noisy_step_advantages_compare_samples_at_the_same_step():
    rng = np.random.default_rng(1)
    r = rng.normal(size=(3, 5, 7))
    adv = noisy_step_advantages(r, eps=0.0)
    assert adv.shape == (3, 5, 6)
    np.testing.assert_allclose(adv.mean(axis=1), 0.0, atol=1e-12)  # centred per (group, step)
    np.testing.assert_allclose(adv.std(axis=1, ddof=1), 1.0, atol=1e-12)
    gains = np.diff(r, axis=2)
    np.testing.assert_allclose(gains.sum(axis=2), r[:, :, -1] - r[:, :, 0])  # telescoping, before normalising


def test_noisy_step_advantages_masked_sample_gets_zero_and_no_vote():
    r = np.array([[[0.0, 1.0], [0.0, 3.0], [0.0, np.nan]]])
    adv = noisy_step_advantages(r, mask=[[True, True, False]], eps=0.0)
    np.testing.assert_allclose(adv, [[[-1 / R2], [1 / R2], [0.0]]])
    with pytest.raises(NonFiniteError, match=r"^state_rewards:"):
        noisy_step_advantages(r)
    with pytest.raises(ArrayError, match=r"^state_rewards:"):
        noisy_step_advantages(np.zeros((1, 2, 1)))


# --- backward progressive schedule (B²-DiffuRL) -------------------------------------------------


def test_backward_step_mask_by_hand():
    assert backward_step_mask(5, stage=0, stages=3).tolist() == [False, False, False, True, True]
    assert backward_step_mask(5, stage=1, stages=3).tolist() == [False, True, True, True, True]
    assert backward_step_mask(5, stage=2, stages=3).all()
    assert [backward_stage(i, 9, 3) for i in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]


@pytest.mark.parametrize(("steps", "stages"), [(1, 1), (7, 3), (20, 4), (3, 5)])
def test_backward_intervals_grow_towards_the_noise_and_end_with_every_step(steps, stages):
    masks = [backward_step_mask(steps, stage=s, stages=stages) for s in range(stages)]
    assert masks[0][-1] and masks[-1].all()
    for before, after in itertools.pairwise(masks):
        assert (after >= before).all()  # nested: a stage keeps training what the last one did
    for m in masks:  # always a suffix: the steps nearest the sample
        assert not (m[:-1] & ~m[1:]).any()


def test_backward_schedule_from_a_start_matches_the_released_script():
    # run_process.sh: level = i * (20 - 14 + 1) // 100, split step = 14 + level, over 100 stages.
    for stage in range(100):
        mask = backward_step_mask(20, stage=stage, stages=100, start=14)
        assert mask.sum() == 14 + stage * 7 // 100
    assert backward_step_mask(20, stage=99, stages=100, start=14).all()
    with pytest.raises(ArrayError, match=r"^start:"):
        backward_step_mask(20, stage=0, stages=3, start=0)


def test_backward_credit_and_errors():
    np.testing.assert_allclose(backward_credit([2.0, -1.0], 3, stage=0, stages=3), [[0, 0, 2.0], [0, 0, -1.0]])
    with pytest.raises(ArrayError, match=r"^stage:"):
        backward_step_mask(3, stage=3, stages=3)
    with pytest.raises(ArrayError, match=r"^iteration:"):
        backward_stage(9, 9, 3)


# --- per-pixel credit (PXPO) ---------------------------------------------------------------------


def test_pixel_advantages_by_hand():
    r = np.array([[[1.0, 0.0], [3.0, 2.0]]])  # one group of 2 images of 2 pixels
    out = pixel_advantages(r, 3)
    assert out.shape == (1, 2, 3, 2)
    np.testing.assert_allclose(out[0, :, 0], [[-1.0, -1.0], [1.0, 1.0]])
    np.testing.assert_allclose(out[0, :, 2], out[0, :, 0])  # the same at every step
    np.testing.assert_allclose(pixel_advantages(r, 1, baseline="none")[0, :, 0], r[0])


def test_pixel_advantages_sum_to_the_image_advantage():
    rng = np.random.default_rng(2)
    r = rng.normal(size=(2, 4, 8, 8))
    out = pixel_advantages(r, 5)
    image = r.sum(axis=(2, 3))
    np.testing.assert_allclose(out[:, :, 0].sum(axis=(2, 3)), image - image.mean(axis=1, keepdims=True), atol=1e-9)


def test_pixel_advantages_mask_and_errors():
    r = np.array([[[1.0, 0.0], [3.0, 2.0], [np.nan, np.nan]]])
    out = pixel_advantages(r, 1, mask=[[True, True, False]])
    np.testing.assert_allclose(out[0, :, 0], [[-1.0, -1.0], [1.0, 1.0], [0.0, 0.0]])
    with pytest.raises(ArrayError, match=r"^baseline:"):
        pixel_advantages(r[:, :2], 1, baseline="mean")
    with pytest.raises(ArrayError, match=r"^pixel_rewards:"):
        pixel_advantages(np.zeros((2, 3)), 1)
