"""A tiny reward model that scores noisy intermediate states, for step-wise rewards (DRM).

Zhang et al. 2026, "DRM: Diffusion-based Reward Model with Step-wise Guidance"
(arXiv:2605.25661) train a preference model on the noisy latents of a diffusion backbone, so it
can score the state after any denoising step, not only the final image. This is the same idea at
toy scale: an MLP on `(x_t, t, label)` trained with the Bradley-Terry loss on pairs of samples
that were both noised to the same time by `q(x_t | x_0)` (Ho et al. 2020, eq. 4), the pair's
order given by a reward on the clean samples. `score_states` then scores every state of a
rollout at its own time; `rewardlab.credit.noisy_step_advantages` turns those scores into
step-wise group-relative advantages.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

try:
    import numpy as np
    import torch
    from torch import Tensor, nn
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab._seeding import torch_seeded
from rewardlab.core.numbers import refuse_nan
from rewardlab.diffusion.toy import Rollout, ToyDiffusion, _time_embedding
from rewardlab.errors import ConfigError, TrainingError

__all__ = ["NoisyLatentRM", "NoisyRMConfig", "NoisyRMReport", "train_noisy_rm"]

#: `reward_fn(samples (n, *S) float64, labels (n,)) -> (n,)` rewards of clean samples.
RewardFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class NoisyRMConfig:
    """Training of the noisy-latent reward model."""

    hidden: int = 64
    pool: int = 1024  # clean samples drawn from the policy once; pairs are drawn from them
    iters: int = 400  # Adam steps of `batch_size` pairs each
    batch_size: int = 128
    lr: float = 3e-3
    seed: int = 0

    def __post_init__(self) -> None:
        refuse_nan(self)
        for name in ("hidden", "pool", "iters", "batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.pool < 2:
            raise ConfigError(f"pool must hold at least 2 samples to make a pair, got {self.pool}")
        if self.lr <= 0:
            raise ConfigError(f"lr must be > 0, got {self.lr}")


class NoisyLatentRM(nn.Module):
    """`RM(x_t, t, label) -> score`: an MLP over the flat state, a time and a label embedding."""

    def __init__(self, dim: int, steps: int, classes: int, hidden: int):
        super().__init__()
        self.steps = steps
        self.label = nn.Embedding(classes, 16)
        self.net = nn.Sequential(nn.Linear(dim + 32, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, x: Tensor, t: Tensor, labels: Tensor) -> Tensor:
        """`(B,)` scores of states `x` (B, D) at 0-based times `t` (0 = clean)."""
        out: Tensor = self.net(torch.cat([x, _time_embedding(t, self.steps), self.label(labels)], dim=1))
        return out[:, 0]

    @torch.no_grad()
    def score_states(self, rollout: Rollout) -> np.ndarray:
        """`(B, K + 1)` float64 score of every state of the rollout at its own time (K … 0)."""
        b, k1, _ = rollout.latents.shape
        times = torch.arange(k1 - 1, -1, -1)
        scores = [self(rollout.latents[:, i], times[i].repeat(b), rollout.labels) for i in range(k1)]
        return torch.stack(scores, dim=1).double().numpy()


@dataclass
class NoisyRMReport:
    """Loss per step and held-out pair accuracy by noise level (time 0 = clean)."""

    losses: list[float] = field(default_factory=list)
    accuracy: dict[int, float] = field(default_factory=dict)


def train_noisy_rm(
    policy: ToyDiffusion, reward_fn: RewardFn, config: NoisyRMConfig | None = None
) -> tuple[NoisyLatentRM, NoisyRMReport]:
    """Train a `NoisyLatentRM` on the policy's own samples ranked by `reward_fn`."""
    config = config or NoisyRMConfig()
    cfg = policy.config
    dim = int(np.prod(cfg.state_shape))
    labels = torch.arange(config.pool) % cfg.classes
    rollout = policy.sample(config.pool, labels=labels, seed=config.seed + 7919)
    x0 = rollout.latents[:, -1]
    rewards = np.asarray(reward_fn(rollout.final, labels.numpy()), dtype=np.float64)
    if rewards.shape != (config.pool,) or not np.isfinite(rewards).all():
        raise TrainingError(f"reward_fn must return {config.pool} finite rewards, got shape {rewards.shape}")
    r = torch.from_numpy(rewards).float()
    gen = torch.Generator().manual_seed(config.seed)
    with torch_seeded(config.seed):
        rm = NoisyLatentRM(dim, cfg.steps, cfg.classes, config.hidden)
    opt = torch.optim.Adam(rm.parameters(), lr=config.lr)
    held = config.pool // 5  # the last fifth of the pool is held out for the accuracy report
    train_n = config.pool - held
    report = NoisyRMReport()
    for _ in range(config.iters):
        loss = _pair_loss(policy, rm, x0[:train_n], r[:train_n], labels[:train_n], config.batch_size, gen)
        if not math.isfinite(float(loss.detach())):
            raise TrainingError("noisy-latent reward model loss became non-finite; lower lr")
        opt.zero_grad()
        torch.autograd.backward(loss)
        opt.step()
        report.losses.append(float(loss.detach()))
    with torch.no_grad():
        for t in sorted({0, cfg.steps // 4, cfg.steps // 2, cfg.steps}):
            report.accuracy[t] = _accuracy(policy, rm, x0[train_n:], r[train_n:], labels[train_n:], t, gen)
    return rm, report


def _pairs(n: int, size: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    return torch.randint(n, (size,), generator=gen), torch.randint(n, (size,), generator=gen)


def _pair_loss(
    policy: ToyDiffusion, rm: NoisyLatentRM, x0: Tensor, r: Tensor, labels: Tensor, size: int, gen: torch.Generator
) -> Tensor:
    i, j = _pairs(x0.shape[0], size, gen)
    t = torch.randint(0, policy.config.steps + 1, (size,), generator=gen)  # both of a pair at one time
    si = rm(policy.noise(x0[i], t, gen), t, labels[i])
    sj = rm(policy.noise(x0[j], t, gen), t, labels[j])
    target = (r[i] > r[j]).float()
    weight = (r[i] != r[j]).float()  # a tie says nothing about the order
    bce = nn.functional.binary_cross_entropy_with_logits(si - sj, target, reduction="none")
    return (bce * weight).sum() / weight.sum().clamp(min=1.0)


def _accuracy(
    policy: ToyDiffusion, rm: NoisyLatentRM, x0: Tensor, r: Tensor, labels: Tensor, t: int, gen: torch.Generator
) -> float:
    i, j = _pairs(x0.shape[0], 2000, gen)
    keep = r[i] != r[j]
    i, j = i[keep], j[keep]
    times = torch.full((i.shape[0],), t)
    si = rm(policy.noise(x0[i], times, gen), times, labels[i])
    sj = rm(policy.noise(x0[j], times, gen), times, labels[j])
    return float(((si > sj) == (r[i] > r[j])).float().mean())
