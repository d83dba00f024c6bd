"""Heads: backbone vectors (B, dim) in, rewards (B,) out.

Every head standardises its input with a mean and scale fixed from the training features
(buffers, saved with the checkpoint), so one learning rate suits MiniLM vectors (norm ~1) and
hashed counts (norm ~10) alike.
"""

from __future__ import annotations

from typing import Any

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.errors import ConfigError
from rewardlab.models.losses import ensemble_aggregate

__all__ = ["EnsembleHead", "Head", "OdinHead", "ScalarHead", "build_head"]


class _Standardise(nn.Module):
    mean: torch.Tensor  # (dim,) buffers: declared so the type checker knows them
    scale: torch.Tensor

    def __init__(self, dim: int):
        super().__init__()
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("scale", torch.ones(dim))

    def fit(self, features: torch.Tensor) -> None:
        self.mean.copy_(features.mean(0))
        # One scale for all dimensions (RMS of the per-feature std): per-feature scaling would
        # blow up rare hashed n-grams seen once in training (std ~ 0.01 -> x100 at test time).
        rms = features.std(0).pow(2).mean().sqrt().clamp(min=1e-6)
        self.scale.fill_(float(rms))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.div(x - self.mean, self.scale)


class Head(nn.Module):
    """What every head is: `norm` (the standardisation fitted by the trainer), `forward`
    (B, dim) -> (B,) rewards, and `config()`, from which `build_head` rebuilds it."""

    kind = "head"
    norm: _Standardise

    def config(self) -> dict[str, Any]:
        raise NotImplementedError


class ScalarHead(Head):
    """A linear head (`hidden=0`) or a one-hidden-layer MLP with GELU."""

    kind = "linear"

    def __init__(self, dim: int, *, hidden: int = 0):
        super().__init__()
        self.dim, self.hidden = dim, hidden
        self.norm = _Standardise(dim)
        if hidden:
            self.net: nn.Module = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, 1))
        else:
            self.net = nn.Linear(dim, 1)
            nn.init.zeros_(self.net.weight)  # start from "no preference": every pair at p = ½
            nn.init.zeros_(self.net.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.net(self.norm(x))  # (B, 1)
        return out.squeeze(-1)

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "dim": self.dim, "hidden": self.hidden}


class OdinHead(Head):
    """ODIN's two heads (Chen et al. 2024): quality `r^Q` and length `r^L`.

    `forward` returns only `r^Q`, the reward used downstream; `parts` returns both for training.

    Args:
        length_from: `embedding` (default) — `r^L` is a second linear head on the backbone
            vector, as in the paper; `count` — `r^L` = a·log(1 + word count), one parameter (our
            variant): no quality signal can leak into a head that is thrown away. Both are
            measured side by side in bench/RESULTS.md.
    """

    kind = "odin"

    def __init__(self, dim: int, *, length_from: str = "embedding"):
        super().__init__()
        if length_from not in ("embedding", "count"):
            raise ConfigError(f"length_from must be 'embedding' or 'count', got {length_from!r}")
        self.dim, self.length_from = dim, length_from
        self.norm = _Standardise(dim)
        self.quality = nn.Linear(dim, 1)
        self.length = nn.Linear(dim, 1) if length_from == "embedding" else nn.Linear(1, 1, bias=False)

    def parts(self, x: torch.Tensor, words: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(r^Q, r^L), each (B,). `words` (B,) response word counts, needed when length_from='count'."""
        z = self.norm(x)
        quality = self.quality(z).squeeze(-1)
        if self.length_from == "embedding":
            return quality, self.length(z).squeeze(-1)
        if words is None:
            raise ConfigError("OdinHead(length_from='count') needs the word counts of the responses")
        return quality, self.length(torch.log1p(words.float()).unsqueeze(-1)).squeeze(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        quality: torch.Tensor = self.quality(self.norm(x))  # (B, 1)
        return quality.squeeze(-1)

    def ortho(self) -> torch.Tensor | None:
        """|cos(W_Q, W_L)|, the orthogonality penalty (scale-free form of ODIN's |W_Q·W_L|);
        None when r^L does not read the embedding."""
        if self.length_from != "embedding":
            return None
        wq, wl = self.quality.weight.flatten(), self.length.weight.flatten()
        return torch.div((wq @ wl).abs(), wq.norm() * wl.norm() + 1e-8)

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "dim": self.dim, "length_from": self.length_from}


class EnsembleHead(Head):
    """K heads over one shared (frozen) backbone, aggregated by `ensemble_aggregate`.

    Members are linear (`hidden=0`) or one-hidden-layer GELU MLPs (`hidden>0`), each from its
    own random initialisation. Why MLPs: Coste et al. 2024 (arXiv:2310.02743) train K full
    reward models from different seeds on the same data; they agree where training data was
    and disagree out of distribution, where best-of-n pushes, so min (WCO) and mean − λ·var
    (UWO) penalise the out-of-distribution picks. Linear members cannot do that: their loss is
    convex, so every seed converges to the same head and the members agree everywhere. Optional
    bootstrap resampling (train.TrainConfig.ensemble_bootstrap) and random feature subspaces
    add diversity of other kinds.
    """

    kind = "ensemble"
    mask: torch.Tensor  # (K, dim) buffer

    def __init__(self, dim: int, *, members: int = 5, how: str = "uwo", penalty: float = 1.0, seed: int = 0,
                 feature_fraction: float = 1.0, hidden: int = 0):
        super().__init__()
        if members < 2:
            raise ConfigError(f"an ensemble needs at least 2 members, got {members}")
        if not 0.0 < feature_fraction <= 1.0:
            raise ConfigError(f"feature_fraction must be in (0, 1], got {feature_fraction}")
        if hidden < 0:
            raise ConfigError(f"hidden must be >= 0 (0: linear members), got {hidden}")
        ensemble_aggregate(torch.zeros(members, 1), how=how)  # validate `how` now, not at scoring
        self.dim, self.members, self.how, self.penalty = dim, members, how, penalty
        self.feature_fraction, self.hidden = feature_fraction, hidden
        self.norm = _Standardise(dim)
        gen = torch.Generator().manual_seed(seed)
        if hidden:
            # nn.Linear's default init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn per member
            self.w1 = nn.Parameter((torch.rand(members, dim, hidden, generator=gen) * 2 - 1) / dim**0.5)
            self.b1 = nn.Parameter((torch.rand(members, hidden, generator=gen) * 2 - 1) / dim**0.5)
            self.w2 = nn.Parameter((torch.rand(members, hidden, generator=gen) * 2 - 1) / hidden**0.5)
            self.b2 = nn.Parameter(torch.zeros(members))
        else:
            self.weight = nn.Parameter(torch.randn(members, dim, generator=gen) * 0.01)  # (K, dim)
            self.bias = nn.Parameter(torch.zeros(members))
        # Random subspaces (Ho 1998): each member reads its own share of the features, so members
        # disagree where the features they rely on differ; 1.0 keeps every feature.
        self.register_buffer("mask", (torch.rand(members, dim, generator=gen) < feature_fraction).float())

    def member_scores(self, x: torch.Tensor) -> torch.Tensor:
        """(K, B) rewards of every member for backbone vectors x (B, dim)."""
        z: torch.Tensor = self.norm(x)  # (B, dim)
        mask = self.mask
        if not self.hidden:
            return (self.weight * mask) @ z.T + self.bias.unsqueeze(-1)
        h = torch.einsum("bd,kdh->kbh", z, self.w1 * mask.unsqueeze(-1)) + self.b1.unsqueeze(1)  # (K, B, H)
        return torch.einsum("kbh,kh->kb", F.gelu(h), self.w2) + self.b2.unsqueeze(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ensemble_aggregate(self.member_scores(x), how=self.how, penalty=self.penalty)

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "dim": self.dim, "members": self.members, "how": self.how,
                "penalty": self.penalty, "feature_fraction": self.feature_fraction, "hidden": self.hidden}


def build_head(config: dict[str, Any]) -> Head:
    """A head from its `config()` dict (what checkpoints store)."""
    kind = config.get("kind")
    dim = int(config["dim"])
    if kind == "linear":
        return ScalarHead(dim, hidden=int(config.get("hidden", 0)))
    if kind == "odin":
        return OdinHead(dim, length_from=str(config.get("length_from", "embedding")))
    if kind == "ensemble":
        return EnsembleHead(dim, members=int(config["members"]), how=str(config["how"]),
                            penalty=float(config["penalty"]),
                            feature_fraction=float(config.get("feature_fraction", 1.0)),
                            hidden=int(config.get("hidden", 0)))
    raise ConfigError(f"unknown head kind {kind!r}; expected 'linear', 'odin' or 'ensemble'")
