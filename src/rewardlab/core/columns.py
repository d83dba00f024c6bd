"""A result as trainer columns: the same keys on every row, whatever was scored.

Trainers stack per-row dicts into columns (OpenRLHF's `extra_logs`, verl's `reward_extra_info`);
both the server's `/get_reward` route and the trainer adapters build those dicts here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rewardlab.core.result import RewardResult
from rewardlab.core.reward import Reward

__all__ = ["component_columns", "component_names", "objective_columns", "objective_names"]

def component_names(reward: Reward) -> list[str]:
    """Names of a composite's components, in spec order (empty for a plain reward)."""
    components = getattr(reward, "components", ())
    return [c.name for c in components if hasattr(c, "name")]


def objective_names(reward: Reward) -> list[str]:
    """Names of a reward's declared objectives (`[[reward.objectives]]`), in spec order."""
    return [o.name for o in getattr(reward, "objectives", ()) if hasattr(o, "name")]


#: What a component without a score (error, skipped, gated off) is in a trainer's log column.
#: Trainers average these columns (verl's validation metrics, OpenRLHF's `extra_logs`), and a
#: NaN turns every mean it enters into `nan`; so the column holds this finite value and the
#: companion column `<name>/scored` says which rows are real: the mean over scored rows is
#: `sum(column) / sum(<name>/scored)`.
UNSCORED_VALUE = 0.0
SCORED_SUFFIX = "/scored"
#: The column of objective `<name>` is `objective/<name>` (in scored files, trainer logs).
OBJECTIVE_PREFIX = "objective/"


def component_columns(result: RewardResult, names: Sequence[str], prefix: str = "") -> dict[str, float]:
    """Every component's score and its scored mask, the same keys for every row.

    `{prefix}{name}` is the component's score, or `UNSCORED_VALUE` when it has none;
    `{prefix}{name}/scored` is 1.0 or 0.0. A trainer that stacks per-row dicts into columns
    (OpenRLHF's `Experience.concat_experiences`, verl's `reward_extra_info`) needs the same keys
    on every row, so a component missing from `result` is unscored, not absent.
    """
    out: dict[str, float] = {}
    for name in names:
        sub = result.components.get(name)
        score = sub.score if sub is not None else None
        scored = score is not None and math.isfinite(score)
        out[f"{prefix}{name}"] = float(score) if score is not None and scored else UNSCORED_VALUE
        out[f"{prefix}{name}{SCORED_SUFFIX}"] = 1.0 if scored else 0.0
    return out


def objective_columns(result: RewardResult, names: Sequence[str], prefix: str = "") -> dict[str, float]:
    """Every objective's value and its scored mask, the same keys for every row, as
    `component_columns`: `{prefix}objective/{name}` is the value (`UNSCORED_VALUE` where it
    could not be computed) and `{prefix}objective/{name}/scored` is 1.0 or 0.0."""
    vector = result.objectives or {}
    out: dict[str, float] = {}
    for name in names:
        value = vector.get(name)
        scored = value is not None and math.isfinite(value)
        key = f"{prefix}{OBJECTIVE_PREFIX}{name}"
        out[key] = float(value) if value is not None and scored else UNSCORED_VALUE
        out[key + SCORED_SUFFIX] = 1.0 if scored else 0.0
    return out
