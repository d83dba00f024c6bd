"""`model.rm`: a trained reward model as a Reward, usable in any spec and in the server.

    [[reward.components]]
    name = "rm"
    use = "model.rm"
    params = { path = "runs/rm" }

Loaded models are shared per process (keyed by path and file times), so a server that builds
the same spec for every request loads the weights once.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from rewardlab.core import BaseReward, ErrorKind, RewardResult, Sample
from rewardlab.errors import ConfigError
from rewardlab.models.checkpoint import RewardModel, pair_text

__all__ = ["ModelReward"]

_CACHE: dict[tuple[str, float, float], RewardModel] = {}
_LOCK = threading.Lock()


def load_cached(path: str | Path) -> RewardModel:
    """`RewardModel.load(path)`, memoised per process until the checkpoint files change."""
    root = Path(path).resolve()
    stamp = tuple((root / f).stat().st_mtime if (root / f).exists() else 0.0
                  for f in ("config.json", "model.safetensors"))
    key = (str(root), stamp[0], stamp[1])
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = RewardModel.load(root)
        return _CACHE[key]


class ModelReward(BaseReward):
    """The score of a trained reward model (`rewardlab train rm`) for (prompt, response).

    Unbounded (a Bradley-Terry reward is a logit); calibrate or normalise it in the spec.
    Empty responses are `error/invalid_input`, not a score. A sample's score does not depend
    on which other samples share its batch.

    Raises:
        InputError: at construction, when the checkpoint is missing or corrupt.
    """

    name = "model.rm"

    def __init__(self, *, path: str, batch_size: int = 32):
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        self.model = load_cached(path)
        self.batch_size = batch_size

    def compute(self, sample: Sample) -> RewardResult:
        return self.compute_batch([sample])[0]

    def compute_batch(self, samples: Sequence[Sample]) -> list[RewardResult]:
        results: list[RewardResult | None] = [None] * len(samples)
        texts, where = [], []
        for i, sample in enumerate(samples):
            if not sample.response_text.strip():
                results[i] = RewardResult.failure(ErrorKind.INVALID_INPUT, "empty response: nothing to score")
                continue
            texts.append(pair_text(self.model.backbone, sample.prompt_text, sample.response_text))
            where.append(i)
        scores = self.model.score_texts(texts, batch_size=self.batch_size)
        for i, value in zip(where, scores, strict=True):
            results[i] = RewardResult.ok(float(value))
        return [r for r in results if r is not None]
