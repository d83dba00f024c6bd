"""What every trainer adapter shares: build the reward once, score a batch, flatten results.

Adapters contain no reward logic (ARCHITECTURE.md): they map a trainer's call shape to `Sample`s,
score them with the one Reward a spec builds, and map `RewardResult`s back, keeping the
per-component breakdown and never turning an error into a number silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rewardlab.core import JSON, ErrorKind, Reward, RewardResult, Sample, Status

SpecLike = str | Path | dict[str, JSON] | Reward


def build_reward(spec: SpecLike) -> Reward:
    """The Reward a spec (TOML path or text, dict, or built Reward) describes."""
    from rewardlab.compose import build

    return build(spec)


def component_scores(result: RewardResult, names: Sequence[str]) -> dict[str, float | None]:
    """Each component's score (None when it has none: error, skipped, gated)."""
    return {name: (result.components[name].score if name in result.components else None) for name in names}


def batch_metrics(results: Sequence[RewardResult], names: Sequence[str], prefix: str = "rewardlab") -> dict[str, float]:
    """Scalar metrics of one batch: the rate of errors and skips, and each component's mean
    over the rows where it has a score (with its own error rate)."""
    n = max(1, len(results))
    out = {
        f"{prefix}/error_rate": sum(r.status is Status.ERROR for r in results) / n,
        f"{prefix}/skipped_rate": sum(r.status is Status.SKIPPED for r in results) / n,
    }
    for name in names:
        subs = [r.components.get(name) for r in results]
        scores = [s.score for s in subs if s is not None and s.score is not None]
        if scores:
            out[f"{prefix}/{name}/mean"] = sum(scores) / len(scores)
        out[f"{prefix}/{name}/error_rate"] = sum(1 for s in subs if s is not None and s.status is Status.ERROR) / n
    return out




def unreferenced_components(sample: Sample, result: RewardResult) -> list[str]:
    """Components that could not compare because `sample` has no reference.

    That is an `invalid_input` error naming the reference (what `verify` raises when there is
    nothing to compare with) on a sample whose reference is None. Under `on_error = "skip"` or
    `"zero"` such a row still gets an `ok` total, which reads like a wrong answer.
    """
    if sample.reference is not None:
        return []
    return [
        name
        for name, sub in result.components.items()
        if sub.status is Status.ERROR and sub.error is not None
        and sub.error.kind is ErrorKind.INVALID_INPUT and "reference" in sub.error.message
    ]  # fmt: skip


def error_value(result: RewardResult, policy: float | None) -> float | None:
    """The number an `error`/`skipped` result becomes under an explicit policy (None: none)."""
    if result.status is Status.OK and result.score is not None:
        return result.score
    return policy


def first_key(columns: Mapping[str, Any], candidates: Sequence[str]) -> str | None:
    return next((k for k in candidates if k in columns), None)
