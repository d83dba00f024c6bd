"""A DDPM or a rectified flow small enough to train and sample on a CPU in seconds, for tests,
examples and benches.

Three data sets, all generated from the config (nothing is downloaded):

* `ring`: 8 Gaussians on a circle of radius 2 (`radius`) in 2-D (the classic toy mixture);
  unconditional. A wider ring puts the modes further apart, so a DDPM chooses between them at
  higher noise, earlier in sampling.
* `image`: 8x8 "images" holding one bright Gaussian blob in the quadrant named by a label
  (0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right): the label plays the prompt.
* `scene`: 8x8 images with a blob in each quadrant a four-token prompt names, denoised by a
  network with pixel-to-token cross-attention (`rewardlab.diffusion.scene`), whose map of the
  prompt's subject token localises on the subject's quadrant.

The network predicts the noise (Ho et al. 2020, "Denoising Diffusion Probabilistic Models",
arXiv:2006.11239, eq. 14). The image network also runs one cross-attention from the label (the
"prompt token") over the 64 pixels, whose weights are recorded per step as the attention maps
spatial credit rules read, as text-image attention is in a text-to-image model.

The reverse kernel is Gaussian, `p(x_{t-1} | x_t) = N(μ_θ(x_t, t), β_t I)` with
`μ_θ = (x_t − β_t / √(1 − ᾱ_t) ε_θ) / √α_t` (Ho et al. eq. 11, with σ_t² = β_t, their first
choice, which keeps every step's log-probability defined, the last one included). Log-probs of
steps under this kernel are what a DDPO-style policy gradient differentiates (`log_probs`).

With `kind="flow"` the same network is a rectified flow (Liu et al. 2022, arXiv:2209.03003):
trained on `x_τ = (1 − τ) x_0 + τ ε` to predict the velocity `v = ε − x_0`, and sampled from
τ = 1 to 0 in K Euler steps of the SDE with the flow's marginals that Flow-GRPO (Liu et al. 2025,
arXiv:2505.05470, eq. 9) samples so that every step has a Gaussian log-prob:

    x_{τ−Δ} ~ N(x_τ − Δ [v + σ_τ² / (2τ) (x_τ + (1 − τ) v)],  σ_τ² Δ),   σ_τ = a √(τ / (1 − τ))

with Δ = 1/K and a = `noise_level` (at τ = 1, 1 − τ is replaced by Δ, as their code does).
x̂_0 = x_τ − τ v.

    >>> from rewardlab.diffusion.toy import ToyDiffusionConfig, train_toy_diffusion
    >>> model = train_toy_diffusion(ToyDiffusionConfig(train_iters=50))
    >>> model.sample(4, seed=0).trajectory().latents.shape
    (4, 21, 2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

try:
    import numpy as np
    import torch
    from torch import Tensor, nn
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab._seeding import torch_seeded
from rewardlab.core.numbers import refuse_nan
from rewardlab.credit.trajectory import DenoisingTrajectory
from rewardlab.diffusion.scene import SCENE_CLASSES, SceneDenoiser, make_scene
from rewardlab.errors import ConfigError

__all__ = ["Rollout", "ToyDenoiser", "ToyDiffusion", "ToyDiffusionConfig", "make_data", "train_toy_diffusion"]

RING_MODES = 8
RING_RADIUS = 2.0
SIDE = 8  # image side: 8x8 pixels


@dataclass(frozen=True)
class ToyDiffusionConfig:
    """Everything that defines a toy model; the same config and seed give the same weights."""

    data: Literal["ring", "image", "scene"] = "ring"
    kind: Literal["ddpm", "flow"] = "ddpm"  # noise-prediction DDPM, or rectified flow (SDE sampler)
    radius: float = RING_RADIUS  # of the ring's circle of modes
    noise_level: float = 0.7  # a of the flow sampler's σ_τ (Flow-GRPO's default); unused by ddpm
    steps: int = 20  # denoising steps K: a batch samples in K small forward passes
    beta_start: float = 1e-3
    beta_end: float = 0.35  # linear schedule; ᾱ_K ≈ 0.02 at K = 20, so x_K is close to N(0, I)
    hidden: int = 128  # the MLP's width (enough for 8 modes or 4 blob positions); scene: hidden // 4 channels
    train_iters: int = 1500  # Adam steps; about 2-4 s on one CPU core
    batch_size: int = 256
    lr: float = 2e-3
    seed: int = 0

    def __post_init__(self) -> None:
        refuse_nan(self)
        if self.data not in ("ring", "image", "scene"):
            raise ConfigError(f"data must be 'ring', 'image' or 'scene', got {self.data!r}")
        if self.kind not in ("ddpm", "flow"):
            raise ConfigError(f"kind must be 'ddpm' or 'flow', got {self.kind!r}")
        if not self.radius > 0:
            raise ConfigError(f"radius must be > 0, got {self.radius}")
        if not self.noise_level > 0:
            raise ConfigError(f"noise_level must be > 0, got {self.noise_level}")
        for name in ("steps", "hidden", "train_iters", "batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0.0 < self.beta_start <= self.beta_end < 1.0:
            raise ConfigError(f"need 0 < beta_start <= beta_end < 1, got {self.beta_start}, {self.beta_end}")
        if self.lr <= 0:
            raise ConfigError(f"lr must be > 0, got {self.lr}")

    @property
    def state_shape(self) -> tuple[int, ...]:
        """Shape of one sample: `(2,)` or `(8, 8)`."""
        return (2,) if self.data == "ring" else (SIDE, SIDE)

    @property
    def classes(self) -> int:
        """Number of labels (prompts): 1 for the ring, 4 quadrants for images, 32 scene prompts."""
        counts: dict[str, int] = {"ring": 1, "image": 4, "scene": SCENE_CLASSES}
        return counts[self.data]


def make_data(config: ToyDiffusionConfig, n: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """`n` training samples, flat `(n, D)`, and their labels `(n,)`."""
    if config.data == "ring":
        mode = torch.randint(RING_MODES, (n,), generator=generator)
        angle = 2 * math.pi * mode.double() / RING_MODES
        centre = config.radius * torch.stack([angle.cos(), angle.sin()], dim=1)
        x = centre + 0.1 * torch.randn(n, 2, generator=generator, dtype=torch.float64)
        return x.float(), torch.zeros(n, dtype=torch.long)
    if config.data == "scene":
        return make_scene(n, generator)
    label = torch.randint(4, (n,), generator=generator)
    row0, col0 = (label // 2) * 4, (label % 2) * 4
    cy = row0 + 0.5 + 3 * torch.rand(n, generator=generator)  # blob centre inside its 4x4 quadrant
    cx = col0 + 0.5 + 3 * torch.rand(n, generator=generator)
    grid = torch.arange(SIDE, dtype=torch.float32) + 0.5
    dy = (grid[None, :, None] - cy[:, None, None]) ** 2
    dx = (grid[None, None, :] - cx[:, None, None]) ** 2
    image = 2.0 * torch.exp(-(dy + dx) / 2.0) - 1.0  # background -1, blob peak up to +1
    return image.reshape(n, -1), label


def _time_embedding(t: Tensor, steps: int, dim: int = 16) -> Tensor:
    freqs = torch.exp(torch.arange(dim // 2, dtype=torch.float32) * (-math.log(100.0) / (dim // 2)))
    angles = (t.float() / steps)[:, None] * freqs[None, :] * 2 * math.pi
    return torch.cat([angles.sin(), angles.cos()], dim=1)


class ToyDenoiser(nn.Module):
    """ε_θ(x_t, t, label): an MLP, plus label-to-pixel cross-attention for images."""

    def __init__(self, config: ToyDiffusionConfig):
        super().__init__()
        dim, h = int(np.prod(config.state_shape)), config.hidden
        self.steps = config.steps
        self.attends = config.data == "image"
        self.label = nn.Embedding(config.classes, h)
        context = 0
        if self.attends:
            d = 16  # width of a pixel's key/value
            self.position = nn.Parameter(0.1 * torch.randn(dim, 8))
            self.key = nn.Linear(9, d)
            self.value = nn.Linear(9, d)
            self.query = nn.Linear(h + 16, d)
            context = d
        self.net = nn.Sequential(
            nn.Linear(dim + 16 + h + context, h), nn.SiLU(), nn.Linear(h, h), nn.SiLU(), nn.Linear(h, dim)
        )

    def forward(self, x: Tensor, t: Tensor, label: Tensor) -> tuple[Tensor, Tensor | None]:
        """`(noise (B, D), attention (B, D) or None)` for states `x` (B, D) at times `t` (B,)."""
        temb, lemb = _time_embedding(t, self.steps), self.label(label)
        parts = [x, temb, lemb]
        attention = None
        if self.attends:
            pixels = torch.cat([x[:, :, None], self.position.expand(x.shape[0], -1, -1)], dim=2)  # (B, D, 9)
            keys, values = self.key(pixels), self.value(pixels)  # (B, D, d)
            query = self.query(torch.cat([lemb, temb], dim=1))  # (B, d)
            logits = torch.einsum("bd,bpd->bp", query, keys) / math.sqrt(keys.shape[-1])
            attention = torch.softmax(logits, dim=1)  # (B, D): where the prompt token looks
            parts.append(torch.einsum("bp,bpd->bd", attention, values))
        out: Tensor = self.net(torch.cat(parts, dim=1))
        return out, attention


@dataclass
class Rollout:
    """A batch of sampled trajectories with what the policy gradient needs, as torch tensors.

    Attributes:
        latents: `(B, K + 1, D)` flat states from noise to sample (no gradient).
        labels: `(B,)` the label (prompt) of each trajectory.
        log_probs: `(B, K, D)` per-dimension log-probs of each step when it was sampled.
        attention: `(B, K, D)` the cross-attention map of each step, or None.
        predictions: `(B, K, D)` the model's estimate x̂_0 of the final sample at each step.
    """

    latents: Tensor
    labels: Tensor
    log_probs: Tensor
    attention: Tensor | None
    predictions: Tensor | None = None
    state_shape: tuple[int, ...] = field(default=(2,))

    def trajectory(self) -> DenoisingTrajectory:
        """The numpy view the credit rules read (states and maps in their own shape)."""
        b, k1 = self.latents.shape[:2]
        lat = self.latents.detach().double().numpy().reshape(b, k1, *self.state_shape)
        maps = pred = None
        if self.attention is not None:
            maps = self.attention.detach().double().numpy().reshape(b, k1 - 1, *self.state_shape)
        if self.predictions is not None:
            pred = self.predictions.detach().double().numpy().reshape(b, k1 - 1, *self.state_shape)
        return DenoisingTrajectory.of(lat, np.arange(k1 - 1, -1, -1), maps, pred)

    @property
    def final(self) -> np.ndarray:
        """`(B, *S)` float64 samples."""
        return self.latents[:, -1].detach().double().numpy().reshape(-1, *self.state_shape)


class ToyDiffusion:
    """A trained toy DDPM: the noise network and its schedule; samples and scores steps."""

    def __init__(
        self, config: ToyDiffusionConfig, net: ToyDenoiser | SceneDenoiser, losses: list[float] | None = None
    ):
        self.config = config
        self.net = net
        self.losses = losses or []
        self.betas = torch.linspace(config.beta_start, config.beta_end, config.steps)
        self.alphas = 1.0 - self.betas
        self.alpha_bar = torch.cumprod(self.alphas, dim=0)

    def _step(self, x: Tensor, t: int, labels: Tensor) -> tuple[Tensor, Tensor | None, Tensor]:
        # t is the 1-based diffusion time of x; index t - 1 into the schedule. Returns the
        # reverse kernel's mean (Ho et al. eq. 11), the attention map, and x̂_0 = (x − √(1 − ᾱ) ε̂) / √ᾱ
        # (their eq. 15, Tweedie's estimate of the final sample).
        if self.config.kind == "flow":
            return self._flow_step(x, t, labels)
        i = t - 1
        eps, attention = self.net(x, torch.full((x.shape[0],), t), labels)
        mean = (x - self.betas[i] / torch.sqrt(1 - self.alpha_bar[i]) * eps) / torch.sqrt(self.alphas[i])
        x0 = (x - torch.sqrt(1 - self.alpha_bar[i]) * eps) / torch.sqrt(self.alpha_bar[i])
        return mean, attention, x0

    def _flow_step(self, x: Tensor, t: int, labels: Tensor) -> tuple[Tensor, Tensor | None, Tensor]:
        # The Flow-GRPO SDE step from τ = t / K (module docstring): mean, attention map, x̂_0.
        k = self.config.steps
        tau = t / k
        v, attention = self.net(x, torch.full((x.shape[0],), float(t)), labels)
        drift = v + self._variance(t) * k / (2 * tau) * (x + (1 - tau) * v)  # σ² = variance / Δ
        return x - drift / k, attention, x - tau * v

    def _variance(self, t: int) -> Tensor:
        """Variance of the reverse kernel from time t: β_t (DDPM) or σ_τ² Δ (flow)."""
        if self.config.kind == "ddpm":
            return self.betas[t - 1]
        k = self.config.steps
        tau = t / k
        sigma2 = self.config.noise_level**2 * tau / max(1 - tau, 1 / k)
        return torch.tensor(sigma2 / k)

    def _gaussian_log_prob(self, x_prev: Tensor, mean: Tensor, t: int) -> Tensor:
        var = self._variance(t)
        return -((x_prev - mean) ** 2) / (2 * var) - 0.5 * torch.log(2 * math.pi * var)

    @torch.no_grad()
    def sample(
        self, n: int, *, labels: Tensor | None = None, seed: int = 0, branches: int = 1, branch_step: int = 0
    ) -> Rollout:
        """Sample `n` trajectories from noise (seeded; the caller's torch state is untouched).

        With `branches` > 1, branch-based sampling (B²-DiffuRL, arXiv:2503.11240): `n / branches`
        prefixes are denoised for `branch_step` steps, then each continues as `branches`
        independent branches, which come out consecutive and share their first `branch_step + 1`
        states (so comparing them measures what the later steps did). `labels` must then be
        the same within each run of `branches`.
        """
        cfg = self.config
        labels = torch.zeros(n, dtype=torch.long) if labels is None else labels
        if labels.shape != (n,):
            raise ConfigError(f"labels must have shape ({n},), got {tuple(labels.shape)}")
        if branches < 1 or n % branches or not 0 <= branch_step <= cfg.steps:
            raise ConfigError(
                f"need branches >= 1 dividing n={n} and 0 <= branch_step <= {cfg.steps}, "
                f"got branches={branches}, branch_step={branch_step}"
            )
        roots = labels[::branches]
        if not torch.equal(roots.repeat_interleave(branches), labels):
            raise ConfigError("labels must be the same within each group of `branches` consecutive samples")
        gen = torch.Generator().manual_seed(seed)
        dim = int(np.prod(cfg.state_shape))
        x, lab = torch.randn(n // branches, dim, generator=gen), roots
        seqs: tuple[list[Tensor], ...] = ([x], [], [], [])  # states, log-probs, maps, x̂_0
        for k, t in enumerate(range(cfg.steps, 0, -1)):
            if k == branch_step and branches > 1:  # split: every list so far is per prefix
                seqs = tuple([v.repeat_interleave(branches, 0) for v in seq] for seq in seqs)
                x, lab = seqs[0][-1], labels
            mean, attention, x0 = self._step(x, t, lab)
            x = mean + torch.sqrt(self._variance(t)) * torch.randn(x.shape, generator=gen)
            seqs[0].append(x)
            seqs[1].append(self._gaussian_log_prob(x, mean, t))
            if attention is not None:
                seqs[2].append(attention)
            seqs[3].append(x0)
        if seqs[0][-1].shape[0] != n:  # branch_step == K: the branches are copies of one run
            seqs = tuple([v.repeat_interleave(branches, 0) for v in seq] for seq in seqs)
        states, logps, maps, preds = seqs
        return Rollout(
            latents=torch.stack(states, dim=1),
            labels=labels,
            log_probs=torch.stack(logps, dim=1),
            attention=torch.stack(maps, dim=1) if maps else None,
            predictions=torch.stack(preds, dim=1),
            state_shape=cfg.state_shape,
        )

    def log_probs(self, rollout: Rollout) -> Tensor:
        """`(B, K, D)` per-dimension log-probs of the rollout's steps under the current weights
        (differentiable: the DDPO surrogate is built on these)."""
        out = []
        for k, t in enumerate(range(self.config.steps, 0, -1)):
            mean, _, _ = self._step(rollout.latents[:, k], t, rollout.labels)
            out.append(self._gaussian_log_prob(rollout.latents[:, k + 1], mean, t))
        return torch.stack(out, dim=1)

    def noise(self, x0: Tensor, t: Tensor, generator: torch.Generator) -> Tensor:
        """`q(x_t | x_0)` (Ho et al. eq. 4; the flow's `(1 − τ) x_0 + τ ε`, τ = t / K) at 1-based
        times `t` (B,); t = 0 returns x0."""
        if self.config.kind == "flow":
            tau = (t.float() / self.config.steps)[:, None]
            return (1 - tau) * x0 + tau * torch.randn(x0.shape, generator=generator)
        ab = torch.cat([torch.ones(1), self.alpha_bar])[t][:, None]
        return torch.sqrt(ab) * x0 + torch.sqrt(1 - ab) * torch.randn(x0.shape, generator=generator)


def train_toy_diffusion(config: ToyDiffusionConfig | None = None) -> ToyDiffusion:
    """Train the noise network with the simple loss ‖ε − ε_θ(x_t, t)‖² (Ho et al. eq. 14), or the
    flow's velocity with ‖(ε − x_0) − v_θ(x_τ, τ)‖² at τ uniform in (0, 1) (`kind="flow"`)."""
    config = config or ToyDiffusionConfig()
    gen = torch.Generator().manual_seed(config.seed)
    with torch_seeded(config.seed):
        net = SceneDenoiser(config.steps, max(config.hidden // 4, 4)) if config.data == "scene" else ToyDenoiser(config)
    model = ToyDiffusion(config, net)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=config.train_iters)
    losses = []
    for _ in range(config.train_iters):
        x0, labels = make_data(config, config.batch_size, gen)
        eps = torch.randn(x0.shape, generator=gen)
        if config.kind == "flow":  # continuous time, passed to the network in units of steps
            tau = torch.rand(config.batch_size, generator=gen)
            pred, _ = net((1 - tau[:, None]) * x0 + tau[:, None] * eps, tau * config.steps, labels)
            loss = ((pred - (eps - x0)) ** 2).mean()
        else:
            t = torch.randint(1, config.steps + 1, (config.batch_size,), generator=gen)
            ab = model.alpha_bar[t - 1][:, None]
            pred, _ = net(torch.sqrt(ab) * x0 + torch.sqrt(1 - ab) * eps, t, labels)
            loss = ((pred - eps) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.losses = losses
    return model
