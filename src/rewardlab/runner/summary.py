"""The numbers at the end of a run: means per component and per objective, errors by kind, skips."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rewardlab.runner.io import RowStats


@dataclass
class ColumnStats:
    """Running statistics of one score column (the total or a component)."""

    ok: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    skipped: int = 0
    total: float = 0.0
    low: float = math.inf
    high: float = -math.inf

    def add(self, status: str, score: float | None, error_kind: str | None) -> None:
        if status == "ok" and score is not None:
            self.ok += 1
            self.total += score
            self.low = min(self.low, score)
            self.high = max(self.high, score)
        elif status == "error":
            self.errors[error_kind or "unknown"] += 1
        else:
            self.skipped += 1

    @property
    def mean(self) -> float | None:
        return self.total / self.ok if self.ok else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "errors": dict(self.errors),
            "skipped": self.skipped,
            "mean": self.mean,
            "min": self.low if self.ok else None,
            "max": self.high if self.ok else None,
        }


@dataclass
class RunSummary:
    """What a scoring run did, row by row, aggregated. Every input row is counted once."""

    rows: int = 0
    total: ColumnStats = field(default_factory=ColumnStats)
    components: dict[str, ColumnStats] = field(default_factory=dict)
    #: a spec's objectives: `ok` counts the rows where the objective was computed, `skipped`
    #: the rows where it could not be (None in the vector); rows without a vector (an error
    #: result) are not counted here
    objectives: dict[str, ColumnStats] = field(default_factory=dict)
    errors_as_zero: Counter[str] = field(default_factory=Counter)
    errors_skipped: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    #: the first few errors, as (source line, kind, message), so the summary can show them
    error_examples: list[tuple[int, str, str]] = field(default_factory=list)
    max_examples: int = 5

    def add(self, stats: RowStats) -> None:
        """Count one scored row (a `rewardlab.runner.io.RowStats` tuple)."""
        line, status, score, error_kind, error, components, as_zero, skipped, vector = stats
        self.rows += 1
        self.total.add(status, score, error_kind)
        if status == "error" and len(self.error_examples) < self.max_examples:
            self.error_examples.append((line, error_kind or "unknown", error or ""))
        for name, part_status, part_score, part_kind in components:
            column = self.components.get(name)
            if column is None:
                column = self.components[name] = ColumnStats()
            column.add(part_status, part_score, part_kind)
        for name, value in vector:
            objective = self.objectives.get(name)
            if objective is None:
                objective = self.objectives[name] = ColumnStats()
            objective.add("ok" if value is not None else "skipped", value, None)
        if as_zero:
            self.errors_as_zero.update(as_zero)
        if skipped:
            self.errors_skipped.update(skipped)

    @property
    def rate(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
            "rows_per_second": round(self.rate, 1),
            "total": self.total.to_dict(),
            "components": {k: v.to_dict() for k, v in self.components.items()},
            "objectives": {k: v.to_dict() for k, v in self.objectives.items()},
            "errors_as_zero": dict(self.errors_as_zero),
            "errors_skipped": dict(self.errors_skipped),
            "error_examples": [{"line": n, "kind": k, "message": m} for n, k, m in self.error_examples],
        }
