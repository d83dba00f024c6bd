"""The reward layer's side of a DDPO-style policy gradient on the toy model, credit pluggable.

Black et al. 2024, "Training Diffusion Models with Reinforcement Learning" (DDPO,
arXiv:2305.13301), eq. 4-5: denoising is a K-step MDP whose actions are the steps, and

    ∇J = E[ Σ_k A · ∇ log p_θ(x_{k+1} | x_k) ]

with the PPO-style clipped ratio when a batch is reused. Here the A of every step (and of every
dimension of the state, for spatial and per-pixel rules) comes from a *credit rule*: a function
of the sampled batch that returns `(B, K)` step advantages or `(B, K, *S)` per-position ones.
`uniform` is DDPO (A at every step); the other rules are those of `rewardlab.credit.diffusion`,
on the same scale as uniform's (per-step advantages of order A), so learning rates carry over
between rules. The ratio is clipped per dimension of each step (a per-pixel policy
factorises over pixels: PXPO), which for one update per batch equals DDPO's.

This is a test bed for credit rules (the policy is the toy DDPM), not a trainer for real models.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field

try:
    import numpy as np
    import torch
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.core.numbers import refuse_nan
from rewardlab.credit.diffusion import (
    backward_credit,
    backward_stage,
    backward_step_mask,
    cosine_progress_advantages,
    noisy_step_advantages,
    pixel_advantages,
    spatial_advantages,
)
from rewardlab.credit.outcome import grpo
from rewardlab.credit.trajectory import DenoisingTrajectory
from rewardlab.diffusion.noisy_rm import NoisyLatentRM, RewardFn
from rewardlab.diffusion.toy import Rollout, ToyDiffusion
from rewardlab.errors import ArrayError, ConfigError, TrainingError

__all__ = [
    "CREDIT_RULES",
    "BackwardCredit",
    "CreditInputs",
    "CreditRule",
    "DDPOConfig",
    "DDPORun",
    "backward",
    "cosine",
    "noisy_rm",
    "pixel",
    "spatial",
    "train_ddpo",
    "uniform",
]


@dataclass(frozen=True)
class DDPOConfig:
    """One DDPO run: `groups` prompts (labels) of `group_size` samples per iteration."""

    iterations: int = 30
    groups: int = 4
    group_size: int = 16
    lr: float = 3e-4  # Adam; the toy's noise network is small and pretrained, so small steps
    inner_epochs: int = 2  # updates per sampled batch (the ratio departs from 1 after the first)
    clip: float = 0.2  # PPO clip range of the ratio
    seed: int = 0

    def __post_init__(self) -> None:
        refuse_nan(self)
        for name in ("iterations", "groups", "group_size", "inner_epochs"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.group_size < 2:
            raise ConfigError(f"group_size must be >= 2 for a group-relative advantage, got {self.group_size}")
        if self.lr <= 0 or self.clip <= 0:
            raise ConfigError(f"lr and clip must be > 0, got lr={self.lr}, clip={self.clip}")


@dataclass(frozen=True)
class CreditInputs:
    """What a credit rule sees of one sampled batch (B = groups · group_size, group-major)."""

    rollout: Rollout
    trajectory: DenoisingTrajectory
    rewards: np.ndarray  # (groups, N) final rewards
    advantages: np.ndarray  # (groups, N) GRPO advantages of the final rewards
    iteration: int
    iterations: int


#: `rule(inputs) -> (B, K)` step advantages or `(B, K, *S)` per-position advantages.
CreditRule = Callable[[CreditInputs], np.ndarray]


def uniform() -> CreditRule:
    """DDPO: the trajectory advantage at every step."""

    def rule(inputs: CreditInputs) -> np.ndarray:
        return np.repeat(inputs.advantages.reshape(-1, 1), inputs.trajectory.steps, axis=1)

    return rule


def cosine(
    window: int = 1,
    *,
    alpha: float = 0.0,
    signed: bool = True,
    standardize: bool = True,
    max_ratio: float | None = 2.0,
) -> CreditRule:
    """Cosine-progress credit (CoCA): each step trains on the reward-to-go of the dense step
    rewards (`cosine_progress_advantages`), standardised per prompt over its samples and steps
    as the paper's trainer does (`standardize=False` keeps the raw values).

    `max_ratio` (see `cosine_progress_credit`) keeps every step's advantage within twice the
    trajectory's by default: the toy's states have 2 or 64 dimensions, where a trajectory whose
    first prediction already points at the sample would otherwise get weights of hundreds of
    times A and, after the standardisation, silence the rest of its batch. None is the paper's
    rule unbounded."""

    def rule(inputs: CreditInputs) -> np.ndarray:
        adv = np.asarray(
            cosine_progress_advantages(
                inputs.trajectory,
                inputs.advantages.reshape(-1),
                window=window,
                alpha=alpha,
                signed=signed,
                max_ratio=max_ratio,
            )
        )
        if standardize:
            g = inputs.advantages.shape[0]
            per_prompt = adv.reshape(g, -1)
            centred = per_prompt - per_prompt.mean(axis=1, keepdims=True)
            adv = (centred / (per_prompt.std(axis=1, keepdims=True) + 1e-6)).reshape(adv.shape)
        return adv

    return rule


def spatial(strength: float = 1.0, temporal: CreditRule | None = None) -> CreditRule:
    """Attention allocation (STAR) of each step's advantage (uniform's, or `temporal`'s)."""

    def rule(inputs: CreditInputs) -> np.ndarray:
        steps = (temporal or uniform())(inputs)
        out: np.ndarray = spatial_advantages(steps, inputs.trajectory, strength=strength)
        return out

    return rule


def pixel(pixel_reward: RewardFn, *, baseline: str = "group") -> CreditRule:
    """Per-pixel credit (PXPO) from `pixel_reward(samples, labels) -> (B, *S)` pixel rewards."""

    def rule(inputs: CreditInputs) -> np.ndarray:
        g, n = inputs.rewards.shape
        r = np.asarray(pixel_reward(inputs.rollout.final, inputs.rollout.labels.numpy()), dtype=np.float64)
        adv = pixel_advantages(r.reshape(g, n, *r.shape[1:]), inputs.trajectory.steps, baseline=baseline)
        out: np.ndarray = np.asarray(adv).reshape(g * n, *np.asarray(adv).shape[2:])
        return out

    return rule


def noisy_rm(rm: NoisyLatentRM, *, gains: bool = False) -> CreditRule:
    """Step-wise advantages from a noisy-latent reward model's scores of every state (DRM)."""

    def rule(inputs: CreditInputs) -> np.ndarray:
        g, n = inputs.rewards.shape
        scores = rm.score_states(inputs.rollout).reshape(g, n, -1)
        out: np.ndarray = np.asarray(noisy_step_advantages(scores, gains=gains)).reshape(g * n, -1)
        return out

    return rule


class BackwardCredit:
    """Backward progressive training with branch-based sampling (B²-DiffuRL, arXiv:2503.11240).

    Only the current stage's last steps learn (`backward_credit`). With `branches` > 1 the loop
    asks `branch_plan` how to sample: the prefix before the trained interval is shared by
    `branches` consecutive samples, and the advantage is GRPO over those branches, so it
    measures what the trained interval did rather than what the shared prefix did.
    """

    name = "backward"

    def __init__(self, stages: int = 3, branches: int = 1, start: int | None = None):
        if stages < 1 or branches < 1:
            raise ConfigError(f"stages and branches must be >= 1, got stages={stages}, branches={branches}")
        self.stages, self.branches, self.start = stages, branches, start

    def branch_plan(self, iteration: int, iterations: int, steps: int) -> tuple[int, int]:
        """`(branches, branch_step)`: branch where the stage's trained interval starts."""
        stage = backward_stage(iteration, iterations, self.stages)
        mask = backward_step_mask(steps, stage=stage, stages=self.stages, start=self.start)
        return self.branches, steps - int(mask.sum())

    def __call__(self, inputs: CreditInputs) -> np.ndarray:
        stage = backward_stage(inputs.iteration, inputs.iterations, self.stages)
        adv = inputs.advantages
        if self.branches > 1:
            adv = np.asarray(grpo(inputs.rewards.reshape(-1, self.branches)))
        out: np.ndarray = backward_credit(
            adv.reshape(-1), inputs.trajectory.steps, stage=stage, stages=self.stages, start=self.start
        )
        return out


def backward(stages: int = 3, branches: int = 1, start: int | None = None) -> CreditRule:
    """Backward progressive training (B²-DiffuRL): only the current stage's last steps learn;
    with `branches` > 1, from branch-based samples (see `BackwardCredit`)."""
    return BackwardCredit(stages, branches, start)


#: Rules that need nothing but the batch, by name (`pixel` and `noisy_rm` take a model or reward).
CREDIT_RULES: dict[str, Callable[[], CreditRule]] = {
    "uniform": uniform,
    "cosine": cosine,
    "spatial": spatial,
    "backward": backward,
}


@dataclass
class DDPORun:
    """Mean final reward of each iteration's on-policy batch, and samples drawn so far."""

    credit: str
    rewards: list[float] = field(default_factory=list)
    samples: list[int] = field(default_factory=list)
    seconds: float = 0.0

    def samples_to(self, target: float, *, smooth: int = 3) -> int | None:
        """Samples drawn when the `smooth`-iteration running mean first reached `target`."""
        for i in range(smooth - 1, len(self.rewards)):
            if float(np.mean(self.rewards[i - smooth + 1 : i + 1])) >= target:
                return self.samples[i]
        return None


def train_ddpo(
    policy: ToyDiffusion,
    reward_fn: RewardFn,
    credit: CreditRule | str = "uniform",
    config: DDPOConfig | None = None,
) -> tuple[ToyDiffusion, DDPORun]:
    """Fine-tune a copy of `policy` on `reward_fn(samples, labels) -> (B,)` with `credit`.

    Returns the fine-tuned copy (the argument is left as it was) and the run's history.
    """
    config = config or DDPOConfig()
    name = credit if isinstance(credit, str) else _rule_name(credit)
    if isinstance(credit, str):
        if credit not in CREDIT_RULES:
            raise ConfigError(f"unknown credit rule {credit!r}; choose from {sorted(CREDIT_RULES)} or pass a function")
        credit = CREDIT_RULES[credit]()
    model = copy.deepcopy(policy)
    opt = torch.optim.Adam(model.net.parameters(), lr=config.lr)
    g, n = config.groups, config.group_size
    run = DDPORun(credit=name)
    start = time.perf_counter()
    plan = getattr(credit, "branch_plan", None)
    for it in range(config.iterations):
        labels = (torch.arange(g).repeat_interleave(n) + it * g) % model.config.classes
        branches, branch_step = (1, 0) if plan is None else plan(it, config.iterations, model.config.steps)
        if n % branches:
            raise ConfigError(f"group_size={n} must be a multiple of the rule's branches={branches}")
        seed = config.seed * 1_000_003 + it
        rollout = model.sample(g * n, labels=labels, seed=seed, branches=branches, branch_step=branch_step)
        rewards = np.asarray(reward_fn(rollout.final, labels.numpy()), dtype=np.float64)
        if rewards.shape != (g * n,) or not np.isfinite(rewards).all():
            raise TrainingError(f"reward_fn must return {g * n} finite rewards, got shape {rewards.shape}")
        inputs = CreditInputs(
            rollout=rollout,
            trajectory=rollout.trajectory(),
            rewards=rewards.reshape(g, n),
            advantages=np.asarray(grpo(rewards.reshape(g, n))),
            iteration=it,
            iterations=config.iterations,
        )
        weights = _per_dimension(credit(inputs), rollout)
        for _ in range(config.inner_epochs):
            _update(model, opt, rollout, weights, config.clip)
        run.rewards.append(float(rewards.mean()))
        run.samples.append((it + 1) * g * n)
    run.seconds = time.perf_counter() - start
    return model, run


def _rule_name(rule: CreditRule) -> str:
    named = getattr(rule, "name", None)
    if isinstance(named, str):
        return named
    return str(getattr(rule, "__qualname__", "custom")).split(".")[0]


def _per_dimension(credit: np.ndarray, rollout: Rollout) -> torch.Tensor:
    """`(B, K, D)` float32 weights from `(B, K)` or `(B, K, *S)` credit."""
    b, k1, d = rollout.latents.shape
    c = np.asarray(credit, dtype=np.float64)
    if c.shape == (b, k1 - 1):
        c = np.repeat(c[:, :, None], d, axis=2)
    elif c.shape == (b, k1 - 1, *rollout.state_shape):
        c = c.reshape(b, k1 - 1, d)
    else:
        raise ArrayError("credit", f"a rule must return ({b}, {k1 - 1}) or ({b}, {k1 - 1}, *{rollout.state_shape}), got {c.shape}")
    if not np.isfinite(c).all():
        raise ArrayError("credit", "the rule returned non-finite advantages")
    return torch.from_numpy(c).float()


def _update(model: ToyDiffusion, opt: torch.optim.Optimizer, rollout: Rollout, weights: torch.Tensor, clip: float) -> None:
    # PPO-clipped surrogate (Schulman et al. 2017, eq. 7) per step and dimension, as DDPO eq. 5.
    ratio = torch.exp(model.log_probs(rollout) - rollout.log_probs)
    surrogate = torch.minimum(ratio * weights, torch.clamp(ratio, 1 - clip, 1 + clip) * weights)
    loss = -surrogate.sum(dim=2).mean()
    opt.zero_grad()
    torch.autograd.backward(loss)
    torch.nn.utils.clip_grad_norm_(model.net.parameters(), 1.0)
    opt.step()
