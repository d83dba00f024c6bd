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
    """A function scoring a list of samples, on the executor `rewardlab.runner.make_executor`
    chooses: worker processes (hung or crashed samples become `error/timeout` or `error/crash`
    results) when `workers` > 0 or a `timeout` is set, otherwise this process."""
    from rewardlab.runner import make_executor

    executor = make_executor(reward, workers=workers, timeout=timeout)
    try:
        yield executor.map
    finally:
        executor.close()


def error_counts(results: Sequence[RewardResult]) -> dict[str, int]:
    """Error results by kind (skips under "skipped")."""
    out: dict[str, int] = {}
    for r in results:
        key = r.error.kind.value if r.error is not None else ("skipped" if r.score is None else None)
        if key:
            out[key] = out.get(key, 0) + 1
    return out
