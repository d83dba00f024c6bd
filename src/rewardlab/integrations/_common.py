"""What every trainer adapter shares: build the reward once, score a batch, flatten results.

Adapters contain no reward logic (ARCHITECTURE.md): they map a trainer's call shape to `Sample`s,
score them with the one Reward a spec builds, and map `RewardResult`s back, keeping the
per-component breakdown and never turning an error into a number silently.
"""

from __future__ import annotations

import atexit
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rewardlab.core import JSON, ErrorKind, Reward, RewardResult, Sample, Status
from rewardlab.errors import GroupSplitError
from rewardlab.runner.reward_log import RewardLogger, RowBuffer, open_logger

SpecLike = str | Path | dict[str, JSON] | Reward


def build_reward(spec: SpecLike) -> Reward:
    """The Reward a spec (TOML path or text, dict, or built Reward) describes."""
    from rewardlab.compose import build

    return build(spec)




def batch_metrics(results: Sequence[RewardResult], names: Sequence[str], prefix: str = "rewardlab") -> dict[str, float]:
    """Scalar metrics of one batch: the rate of errors and skips, each component's mean over
    the rows where it has a score (with its own error rate), and each objective's mean."""
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
    # a spec's objectives: each one's mean over the rows where it was computed
    vectors = [r.objectives for r in results if r.objectives is not None]
    for objective in dict.fromkeys(k for v in vectors for k in v):
        values = [x for v in vectors if (x := v.get(objective)) is not None]
        if values:
            out[f"{prefix}/objective/{objective}/mean"] = sum(values) / len(values)
    return out


def layout_groups(samples: Sequence[Sample], group_size: int | None = None, *, trainer: str, size_option: str, fix: str) -> list[str]:
    """Each sample's group id in the layout of a trainer that keeps a prompt's completions
    together (TRL's `num_generations`, OpenRLHF's `n_samples_per_prompt`).

    Without `group_size`, the i-th run of consecutive identical prompts is group `i`. With it,
    samples `[k*G, (k+1)*G)` are group `k` and must share a prompt.

    Args:
        samples: one trainer call's samples, in the trainer's order.
        group_size: G, the completions per prompt; None groups runs of identical prompts.
        trainer: the trainer's name, for messages.
        size_option: the trainer's name of G (e.g. `num_generations`), for messages.
        fix: what to change when a call holds part of a group (e.g. the batch setting).

    Raises:
        GroupSplitError: with `group_size`, the call is not whole groups of one prompt each.
    """
    n = len(samples)
    if group_size is None:
        ids, run = [], -1
        for i, sample in enumerate(samples):
            if i == 0 or sample.prompt != samples[i - 1].prompt:
                run += 1
            ids.append(str(run))
        return ids
    if n % group_size:
        raise GroupSplitError(
            f"{trainer} passed {n} completions, not a multiple of {size_option}={group_size}: a group is split "
            f"across calls, and a group reward would vote on a part of it; {fix}"
        )
    for start in range(0, n, group_size):
        if any(s.prompt != samples[start].prompt for s in samples[start : start + group_size]):
            raise GroupSplitError(
                f"completions {start}..{start + group_size - 1} have different prompts, so they are not one "
                f"group of {size_option}={group_size}; pass the trainer's {size_option} (or None)"
            )
    return [str(i // group_size) for i in range(n)]


def with_groups(samples: Sequence[Sample], groups: Sequence[str]) -> list[Sample]:
    """`samples` with their `group` set to `groups` (one id per sample)."""
    return [replace(sample, group=group) for sample, group in zip(samples, groups, strict=True)]


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




def first_key(columns: Mapping[str, Any], candidates: Sequence[str]) -> str | None:
    return next((k for k in candidates if k in columns), None)


def row_log(logger: RewardLogger | str | None, every: int | None) -> RowBuffer | None:
    """Where an adapter's results are logged: a `RowBuffer` over `logger`, or None.

    `logger` is a `RewardLogger` (the caller closes it; the adapter's `close` logs what is
    left) or a ``--log`` string (``tensorboard:DIR``, ``wandb:PROJECT``), opened here and
    flushed and closed when the process exits.
    """
    if logger is None:
        return None
    if not isinstance(logger, str):
        return RowBuffer(logger, every=every)
    opened = open_logger(logger)
    buffer = RowBuffer(opened, every=every)
    atexit.register(_close_log, buffer)
    return buffer


def _close_log(buffer: RowBuffer) -> None:
    buffer.flush()
    buffer.logger.close()
