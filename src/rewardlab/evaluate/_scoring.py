"""How the evaluate runs score samples: in-process, or in a killable worker pool with timeouts."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from rewardlab.core import JSON, Reward, RewardResult, Sample

ScoreFn = Callable[[list[Sample]], list[RewardResult]]


def load_reward(spec: str | Path | dict[str, JSON] | Reward) -> Reward:
    """A built Reward from a spec path, TOML text, dict or Reward (`rewardlab.compose.build`)."""
    from rewardlab.compose import build

    return build(spec)


@contextmanager
def scorer(reward: Reward, *, workers: int = 0, timeout: float | None = None) -> Iterator[ScoreFn]:
    """A function scoring a list of samples. With `workers` or `timeout`, scoring runs in a
    `WorkerPool` (hung or crashed samples become `error/timeout` or `error/crash` results);
    otherwise in this process with `reward.score_batch`."""
    if workers <= 0 and timeout is None:
        yield lambda batch: reward.score_batch(batch)
        return
    from rewardlab.runner import WorkerPool

    with WorkerPool(reward, workers=workers or None, timeout=timeout) as pool:
        yield lambda batch: pool.map(batch)


def error_counts(results: Sequence[RewardResult]) -> dict[str, int]:
    """Error results by kind (skips under "skipped")."""
    out: dict[str, int] = {}
    for r in results:
        key = r.error.kind.value if r.error is not None else ("skipped" if r.score is None else None)
        if key:
            out[key] = out.get(key, 0) + 1
    return out
