"""Credit over denoising steps and pixels, for diffusion and flow models.

A diffusion policy takes K steps from noise to a sample and gets one reward at the end. DDPO
(Black et al. 2024, arXiv:2305.13301, eq. 3-4) multiplies every step's log-prob gradient by the
same advantage; the rules here spread that advantage (or a denser signal) over the steps that
made the difference, and over the pixels a reward is about. Each is a pure numpy function
(torch tensors in, torch out); `rewardlab.diffusion.ddpo` plugs them into a policy-gradient loop.

Shapes: B trajectories of K steps; a state of shape S; a spatial map of shape M; rewards of a
group of N samples of the same prompt are `(groups, N)`, flattened to B = groups · N in the
same order where a rule works per trajectory.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rewardlab.credit.trajectory import DenoisingTrajectory, checked_attention, checked_latents
from rewardlab.errors import ArrayError
from rewardlab.shape._arrays import EPS, F64, check_finite, group_stats, like, to_mask, to_numpy

__all__ = [
    "backward_credit",
    "backward_stage",
    "backward_step_mask",
    "cosine_progress",
    "cosine_progress_advantages",
    "cosine_progress_credit",
    "noisy_step_advantages",
    "pixel_advantages",
    "spatial_advantages",
]


def cosine_progress(trajectory: Any) -> F64:
    """`(B, K + 1)` cosine similarity with the final sample of what each step saw, then the sample.

    Entry k < K compares the model's prediction of the final sample at step k (x̂_0, when the
    trajectory carries `predictions`; the noisy state `x_k` otherwise) with the final sample;
    entry K is the final sample itself (1 unless it is zero).

    Args:
        trajectory: a `DenoisingTrajectory`, or `(B, K + 1, *S)` latents.
    """
    lat = checked_latents(trajectory)
    if isinstance(trajectory, DenoisingTrajectory) and trajectory.predictions is not None:
        lat = np.concatenate([trajectory.predictions, lat[:, -1:]], axis=1)
    flat = lat.reshape(lat.shape[0], lat.shape[1], -1)
    final = flat[:, -1:, :]
    norms = np.linalg.norm(flat, axis=2) * np.linalg.norm(final, axis=2)
    dots = (flat * final).sum(axis=2)
    # A zero state (exactly 0 noise or a blank image) has no direction: similarity 0 by convention.
    out: F64 = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
    return out


def cosine_progress_credit(
    trajectory: Any,
    advantages: Any,
    *,
    window: int = 1,
    signed: bool = True,
    eps: float = 1e-8,
    max_ratio: float | None = None,
) -> Any:
    """Dense per-step rewards from the progress each step makes towards the final sample (CoCA).

    Liao et al. 2025, "Step-level Reward for Free in RL-based T2I Diffusion Model Fine-tuning"
    (arXiv:2505.19196), contribution-based credit assignment, as their released code computes it:
    with `s_k` the cosine similarity of step k's prediction x̂_0 (or state) with the final sample
    (`cosine_progress`), the steps are cut into blocks of `window` (their fixed window), each
    block's gain is the change of its mean similarity over the previous block's (the first
    block's over `s_0`), and

        w_k = gain(block of k) / (window · Σ gains),     r_k = w_k · A

    so a trajectory's step rewards sum to its advantage A (with `window=1`,
    `w_k = (s_{k+1} − s_k) / (s_K − s_0)`: potential-based shaping with potential ∝ s_k, which
    keeps the optimal policy, as the paper proves). A step that moved away from the final
    sample gets a reward of the opposite sign. When `s_0` is already close to `s_K` the sum of
    gains is close to 0 and the weights grow without bound; `signed=False` shares A among the
    blocks that made progress only (`max(gain, 0)`), weights in [0, 1].

    The signed weights of a trajectory, and their reward-to-go, are bounded by its path ratio
    `Σ |gains| / |Σ gains|` (how far the similarity travelled per unit of net progress). In a
    high-dimensional latent `s_0` is near 0 and the ratio near 1; in a low-dimensional state the
    first prediction often already points at the final sample, and a trajectory that wanders
    off and back gets weights of hundreds of times A, which then dominate a batch.
    `max_ratio` bounds this: a trajectory whose path ratio exceeds it gets progress-only weights.

    Args:
        trajectory: a `DenoisingTrajectory` (its `predictions` are used when present) or
            `(B, K + 1, *S)` states from noise to sample.
        advantages: `(B,)` trajectory advantages (e.g. `grpo(rewards).reshape(-1)`).
        window: block size in steps; must divide K (1 = every step its own block).
        signed: keep negative gains (the paper); False keeps progress only.
        eps: a trajectory whose |Σ gains| is below `eps` has nothing to share: uniform A / K.
        max_ratio: None (the paper) or a bound >= 1 on the path ratio of a signed trajectory.

    Returns:
        `(B, K)` step rewards, each row summing to its advantage; `cosine_progress_advantages`
        turns them into the per-step advantages CoCA trains on.
    """
    sims = cosine_progress(trajectory)
    adv = to_numpy(advantages, "advantages", ndim=1)
    if adv.shape[0] != sims.shape[0]:
        raise ArrayError("advantages", f"need one per trajectory ({sims.shape[0]}), got {adv.shape[0]}")
    check_finite(adv, "advantages")
    b, k = sims.shape[0], sims.shape[1] - 1
    if window < 1 or k % window:
        raise ArrayError("window", f"must be >= 1 and divide the {k} steps, got {window}")
    if max_ratio is not None and not max_ratio >= 1.0:
        raise ArrayError("max_ratio", f"must be >= 1 (or None), got {max_ratio}")
    means = sims[:, 1:].reshape(b, k // window, window).mean(axis=2)  # (B, blocks)
    gains = np.diff(np.concatenate([sims[:, :1], means], axis=1), axis=1)
    if not signed:
        gains = np.maximum(gains, 0.0)
    elif max_ratio is not None:
        net = np.abs(gains.sum(axis=1, keepdims=True))
        wanders = np.abs(gains).sum(axis=1, keepdims=True) > max_ratio * net
        gains = np.where(wanders, np.maximum(gains, 0.0), gains)
    total = gains.sum(axis=1, keepdims=True)
    flat = np.abs(total) < eps
    block_w = np.where(flat, 1.0 / (k // window), gains / np.where(flat, 1.0, total))
    weights = np.repeat(block_w / window, window, axis=1)
    return like(weights * adv[:, None], advantages)


def cosine_progress_advantages(
    trajectory: Any,
    advantages: Any,
    *,
    window: int = 1,
    alpha: float = 0.0,
    signed: bool = True,
    eps: float = 1e-8,
    max_ratio: float | None = None,
) -> Any:
    """Per-step advantages from CoCA's dense rewards: `A (α + (1 − α) Σ_{j ≥ k} w_j)`.

    Liao et al. 2025 (arXiv:2505.19196), reward shaping step of their released trainer: step k
    is trained on the reward-to-go of the dense step rewards of `cosine_progress_credit` (the
    weights of the steps from k to the end), mixed with the plain advantage by `alpha` (0 in
    their configuration). The first step always gets A (its reward-to-go is the whole sum); a
    step late in denoising gets only what the remaining steps contributed. The paper then
    standardises these per prompt over samples and steps (the loop does that, see
    `rewardlab.diffusion.ddpo.cosine`).

    Returns:
        `(B, K)` step advantages.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ArrayError("alpha", f"must be in [0, 1], got {alpha}")
    credit = cosine_progress_credit(trajectory, advantages, window=window, signed=signed, eps=eps, max_ratio=max_ratio)
    rewards = to_numpy(credit, "rewards")
    adv = to_numpy(advantages, "advantages", ndim=1)
    to_go = np.cumsum(rewards[:, ::-1], axis=1)[:, ::-1]  # A · Σ_{j ≥ k} w_j
    return like(alpha * adv[:, None] + (1.0 - alpha) * to_go, advantages)


def spatial_advantages(advantages: Any, attention: Any, *, strength: float = 1.0) -> Any:
    """Allocate each step's advantage over the latent by attention maps (STAR).

    Shen et al. 2026, "STAR: SpatioTemporal Adaptive Reward Allocation for Text-to-Image RL
    Post-Training" (arXiv:2606.17979): the map of step k (text-image attention of the
    prompt's core content, normalised over the P positions) allocates the same group-relative
    advantage to the latent regions it covers, and the spatially resolved objective weights each
    position's log-prob by it:

        m̂_k = m_k / Σ_p m_{k,p},     A_{k,p} = A_k · ((1 − λ) + λ · P · m̂_{k,p})

    with λ = `strength`. The mean over positions of every step is A_k: the allocation moves the
    same advantage between regions, it does not add any (λ = 0 is uniform allocation).

    Args:
        advantages: `(B,)` trajectory advantages, or `(B, K)` step advantages (e.g. from
            `cosine_progress_credit`, for temporal and spatial allocation together).
        attention: `(B, K, *M)` non-negative maps, or a `DenoisingTrajectory` carrying them.
        strength: λ in [0, 1].

    Returns:
        `(B, K, *M)` per-position advantages.
    """
    maps = checked_attention(attention)
    if not 0.0 <= strength <= 1.0:
        raise ArrayError("strength", f"must be in [0, 1], got {strength}")
    b, k = maps.shape[:2]
    adv = to_numpy(advantages, "advantages", ndim=(1, 2))
    if adv.shape not in ((b,), (b, k)):
        raise ArrayError("advantages", f"must be ({b},) or ({b}, {k}) to match attention, got {adv.shape}")
    check_finite(adv, "advantages")
    step_adv = np.broadcast_to(adv[:, None] if adv.ndim == 1 else adv, (b, k))
    flat = maps.reshape(b, k, -1)
    positions = flat.shape[2]
    share = flat / flat.sum(axis=2, keepdims=True)
    weight = (1.0 - strength) + strength * positions * share
    out = (step_adv[:, :, None] * weight).reshape(maps.shape)
    return like(out, advantages, attention if not isinstance(attention, DenoisingTrajectory) else None)


def noisy_step_advantages(
    state_rewards: Any, mask: Any = None, *, gains: bool = False, eps: float = EPS, ddof: int = 1
) -> Any:
    """Step-wise group-relative advantages from a reward model that scores noisy states (DRM).

    Zhang et al. 2026, "DRM: Diffusion-based Reward Model with Step-wise Guidance"
    (arXiv:2605.25661, CVPR 2026), Step-GRPO: the reward model scores the state every step
    produces, `r_{i,k} = RM(x^i_{k+1}, t_{k+1})`, and the states of the N samples of a prompt at
    the same step are compared with each other, as GRPO compares final rewards:

        A_{i,k} = (r_{i,k} − mean_j r_{j,k}) / (std_j r_{j,k} + eps)

    With `gains=True` the step's reward is its improvement, `r_{i,k} = RM(x_{k+1}) − RM(x_k)`
    (Savani et al. 2026, "Stepwise Credit Assignment for GRPO on Flow-Matching Models",
    arXiv:2603.28718, gain-based advantages `g_t = r_{t−1} − r_t`), whose sum over a trajectory
    telescopes to `RM(x_K) − RM(x_0)`.

    Args:
        state_rewards: `(groups, N, K + 1)` reward-model scores of every state, from the noise
            (index 0) to the sample (index K).
        mask: `(groups, N)` False for a sample with no score (its advantages are 0).
        gains: score steps by their improvement instead of the state they reach.
        eps: added to the std, as in `grpo`. A (group, step) whose valid scores are all equal
            gives 0.
        ddof: 1 = unbiased std, as in `grpo`.

    Returns:
        `(groups, N, K)` step advantages.
    """
    r = to_numpy(state_rewards, "state_rewards", ndim=3)
    if r.shape[2] < 2:
        raise ArrayError("state_rewards", f"need scores of at least 2 states (K + 1), got {r.shape[2]}")
    valid = to_mask(mask, "mask", r.shape[:2])
    check_finite(r, "state_rewards", np.broadcast_to(valid[:, :, None], r.shape))
    step = np.diff(r, axis=2) if gains else r[:, :, 1:]  # (G, N, K)
    g, n, k = step.shape
    per_step = np.moveaxis(step, 2, 1).reshape(g * k, n)  # one row per (group, step)
    valid_rows = np.repeat(valid, k, axis=0)
    stats = group_stats(per_step, valid_rows, ddof=ddof)
    with np.errstate(divide="ignore", invalid="ignore"):  # eps=0 on a constant row: masked below
        adv = (per_step - stats.mean) / (stats.std + eps)
    adv = np.where(valid_rows & ~stats.constant, adv, 0.0)
    return like(np.moveaxis(adv.reshape(g, k, n), 1, 2), state_rewards)


def backward_stage(iteration: int, iterations: int, stages: int) -> int:
    """The stage of backward progressive training at `iteration` of `iterations` (equal shares).

    Hu et al. 2025, "Towards Better Alignment: Training Diffusion Models with Reinforcement
    Learning Against Sparse Rewards" (B²-DiffuRL, arXiv:2503.11240, CVPR 2025): training
    is split into stages; stage s trains a longer interval of the last steps than stage s − 1.
    """
    if stages < 1 or iterations < 1:
        raise ArrayError("stages/iterations", f"must be >= 1, got stages={stages}, iterations={iterations}")
    if not 0 <= iteration < iterations:
        raise ArrayError("iteration", f"must be in [0, {iterations}), got {iteration}")
    return min(stages - 1, iteration * stages // iterations)


def backward_step_mask(steps: int, *, stage: int, stages: int, start: int | None = None) -> Any:
    """`(K,)` bool: the steps trained at `stage` of backward progressive training (B²-DiffuRL).

    Hu et al. 2025 (arXiv:2503.11240), backward progressive training: the first stage
    trains only the last steps of denoising (nearest the sample, where a sparse final reward is
    best attributed), and each stage extends the interval towards the noise. By default stage s
    of S trains the last `ceil((s + 1) · K / S)` steps (equal shares; the last stage trains all).
    With `start`, stage s trains the last `start + floor(s · (K − start + 1) / S)` steps: the
    schedule of the paper's released script (its split step grows from `start`, 14 of 20
    steps there, to K over the stages).
    """
    if steps < 1:
        raise ArrayError("steps", f"must be >= 1, got {steps}")
    if stages < 1 or not 0 <= stage < stages:
        raise ArrayError("stage", f"must be in [0, stages={stages}), got {stage}")
    if start is None:
        active = math.ceil((stage + 1) * steps / stages)
    elif not 1 <= start <= steps:
        raise ArrayError("start", f"must be in [1, steps={steps}], got {start}")
    else:
        active = min(steps, start + stage * (steps - start + 1) // stages)
    return np.arange(steps) >= steps - active


def backward_credit(advantages: Any, steps: int, *, stage: int, stages: int, start: int | None = None) -> Any:
    """`(B, K)` the trajectory advantage on the steps of the current stage, 0 on the others.

    With branch-based sampling (B²-DiffuRL) the samples that share the prefix before the trained
    interval form one group, so `advantages` is `grpo` over those branches: the comparison then
    measures what the trained interval contributed. (The paper's script keeps only the best and
    the worst branch of each group, when their scores pass thresholds; GRPO over all branches
    uses every sample, and a zero-variance group gives 0.)
    """
    adv = to_numpy(advantages, "advantages", ndim=1)
    check_finite(adv, "advantages")
    mask = backward_step_mask(steps, stage=stage, stages=stages, start=start)
    return like(adv[:, None] * mask[None, :], advantages)


def pixel_advantages(pixel_rewards: Any, steps: int, *, baseline: str = "group", mask: Any = None) -> Any:
    """Per-pixel advantages from per-pixel feedback (PXPO).

    Kordzanganeh et al. 2024, "Pixel-wise RL on Diffusion Models: Reinforcement Learning from
    Rich Feedback" (arXiv:2404.04356), PXPO's gradient

        ∇J = E[ Σ_{ij} r(x_0^{ij}, c) Σ_t ∇ log p_θ(x_{t−1}^{ij} | x_t, c) ]

    gives each pixel's log-prob, at every step, that pixel's own reward (no cross-talk between
    pixels). With `baseline="group"` each pixel's reward is centred on the mean of the same pixel
    over the group's samples (a per-pixel baseline, which leaves the gradient unbiased); with
    "none" the raw reward is used as in the paper. When the image reward is the sum of its pixel
    rewards, the pixel advantages of a sample sum to its image reward minus the group mean.

    Args:
        pixel_rewards: `(groups, N, *M)` reward of every pixel of every sample.
        steps: K; the advantage is the same at every step (PXPO's Σ_t).
        baseline: "group" or "none".
        mask: `(groups, N)` False for samples with no score (excluded from the mean, advantage 0).

    Returns:
        `(groups, N, K, *M)`.
    """
    r = to_numpy(pixel_rewards, "pixel_rewards")
    if r.ndim < 3:
        raise ArrayError("pixel_rewards", f"must be (groups, N, *map) with at least 3 axes, got shape {r.shape}")
    if steps < 1:
        raise ArrayError("steps", f"must be >= 1, got {steps}")
    valid = to_mask(mask, "mask", r.shape[:2])
    expand = valid.reshape(valid.shape + (1,) * (r.ndim - 2))
    check_finite(r, "pixel_rewards", np.broadcast_to(expand, r.shape))
    if baseline == "group":
        count = valid.sum(axis=1).reshape((-1, 1) + (1,) * (r.ndim - 2))
        mean = np.where(expand, r, 0.0).sum(axis=1, keepdims=True) / np.maximum(count, 1)
        adv = r - mean
    elif baseline == "none":
        adv = r
    else:
        raise ArrayError("baseline", f"unknown baseline {baseline!r}; use 'group' or 'none'")
    adv = np.where(expand, adv, 0.0)
    out = np.repeat(adv[:, :, None], steps, axis=2)
    return like(out, pixel_rewards)
