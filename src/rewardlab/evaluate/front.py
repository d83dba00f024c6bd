"""Front reports: where a set of reward vectors sits, as numbers and a plot.

    report = front_report(results)                      # RewardResults with objective vectors
    report = front_report(read_scored_vectors("scored.jsonl"))   # a `rewardlab score` output
    html, js = write_front(report, "out/")

The numbers: how many rows carry a whole vector (the others are counted, never read as 0),
each objective's mean, min and max, the distinct non-dominated points and how many rows sit on
them, and the hypervolume above a reference point (default: each objective's minimum over the
scored rows, so the number compares runs only with the same `ref`; pass one to compare runs).
The plot shows the first two objectives: every scored row, the front as a staircase.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rewardlab.core.result import RewardResult
from rewardlab.errors import ArrayError, InputError
from rewardlab.multiobj import hypervolume, pareto_ranks
from rewardlab.multiobj.pareto import pareto_front
from rewardlab.multiobj.vectors import vectors_of

__all__ = ["FrontVectors", "front_report", "read_scored_vectors", "write_front"]

_PREFIX = "objective/"


@dataclass(frozen=True)
class FrontVectors:
    """Reward vectors to report on: `(n, objectives)` values, the rows holding a whole vector."""

    names: tuple[str, ...]
    values: np.ndarray
    mask: np.ndarray
    spec_hash: str = ""
    source: str | None = None

    @classmethod
    def of_results(cls, results: Sequence[RewardResult], names: Sequence[str] | None = None) -> FrontVectors:
        found, values, mask = vectors_of(results, names)
        hashes = {r.stamp.spec_hash for r in results if r.stamp is not None}
        return cls(found, values, mask, hashes.pop() if len(hashes) == 1 else "")


def read_scored_vectors(path: str | Path) -> FrontVectors:
    """The `objective/<name>` columns of a scored file (`rewardlab score`'s output).

    Raises:
        InputError: the file has no objective columns, or a value that is not a number.
    """
    from rewardlab.runner.io import read_objects

    rows = read_objects(path)
    names = tuple(dict.fromkeys(k[len(_PREFIX) :] for _, row in rows for k in row if k.startswith(_PREFIX)))
    if not names:
        raise InputError("no objective/<name> columns: score the file with a spec that declares [[reward.objectives]]", source=str(path))
    values = np.full((len(rows), len(names)), np.nan)
    for i, (line, row) in enumerate(rows):
        for j, name in enumerate(names):
            value = row.get(_PREFIX + name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(f"objective/{name} must be a number or null, got {value!r}", source=str(path), line=line)
            values[i, j] = float(value)
    mask = np.isfinite(values).all(axis=1)
    hashes = {str(row.get("spec_hash")) for _, row in rows if row.get("spec_hash")}
    return FrontVectors(names, values, mask, hashes.pop() if len(hashes) == 1 else "", str(path))


def plot_front(values: np.ndarray, front: np.ndarray, names: Sequence[str]) -> str:
    """The first two objectives: every row as a dot, the front as a staircase; base64 PNG."""
    from rewardlab.evaluate.audit.report import figure_png, new_figure

    fig, ax = new_figure(5.5, 4.2)
    ax.scatter(values[:, 0], values[:, 1], s=10, alpha=0.4, color="grey", label="rows")
    if front.size:
        order = np.argsort(front[:, 0])
        ax.step(front[order, 0], front[order, 1], where="post", color="C3", lw=1.2)
        ax.scatter(front[:, 0], front[:, 1], s=30, color="C3", zorder=3, label="non-dominated")
    ax.set(xlabel=names[0], ylabel=names[1], title="Reward vectors and their front")
    ax.legend(fontsize=8)
    return figure_png(fig)


def front_report(
    vectors: FrontVectors | Sequence[RewardResult],
    *,
    ref: Sequence[float] | None = None,
    title: str = "Reward front",
    plot: bool = True,
) -> Any:
    """An `evaluate` `Report` of reward vectors: summary, per-objective table, front, plot.

    Args:
        vectors: `FrontVectors`, or results carrying objective vectors.
        ref: the hypervolume's reference point (default: each objective's minimum).
        title: the page's title.
        plot: draw the front (needs matplotlib, the `eval` extra).
    """
    from rewardlab.evaluate.audit.report import Report, Section, stamps

    data = vectors if isinstance(vectors, FrontVectors) else FrontVectors.of_results(vectors)
    scored = data.values[data.mask]
    if scored.shape[0] == 0:
        raise ArrayError("vectors", "no row carries a whole objective vector")
    reference = np.min(scored, axis=0) if ref is None else np.asarray(ref, dtype=np.float64)
    front = pareto_front(scored)
    on_front = int((pareto_ranks(scored) == 0).sum())
    volume = hypervolume(scored, reference)
    k = len(data.names)
    numbers: dict[str, Any] = {
        "objectives": list(data.names),
        "rows": int(data.values.shape[0]),
        "scored": int(scored.shape[0]),
        "unscored": int((~data.mask).sum()),
        "per_objective": {n: _stats(scored[:, j]) for j, n in enumerate(data.names)},
        "front": front.tolist(),
        "rows_on_front": on_front,
        "hypervolume": volume,
        "reference": reference.tolist(),
    }
    table = Section(
        "Objectives",
        columns=["objective", "mean", "min", "max"],
        rows=[[n, *(round(numbers["per_objective"][n][s], 4) for s in ("mean", "min", "max"))] for n in data.names],
    )
    figures = [("front", plot_front(scored, front, data.names))] if plot and k >= 2 else []
    points = Section("Front (distinct non-dominated vectors)", columns=list(data.names),
                     rows=[[round(float(v), 4) for v in p] for p in front], figures=figures)  # fmt: skip
    summary = [
        ("rows", f"{numbers['rows']} ({numbers['unscored']} without a whole vector, left out)"),
        ("front", f"{len(front)} distinct vectors; {on_front} rows on it"),
        ("hypervolume", f"{volume:.6g} above reference {[round(float(x), 4) for x in reference]}"),
    ]
    return Report(title, stamps(spec_hash=data.spec_hash, data=data.source, seed=0), summary, [table, points], numbers)


def _stats(column: np.ndarray) -> dict[str, float]:
    return {"mean": float(column.mean()), "min": float(column.min()), "max": float(column.max())}


def write_front(report: Any, out_dir: str | Path) -> tuple[Path, Path]:
    """Write `front.html` and `front.json` into `out_dir`; returns both paths."""
    from rewardlab.evaluate.audit.report import to_json

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    html_path, json_path = out / "front.html", out / "front.json"
    html_path.write_text(report.html(), encoding="utf-8")
    json_path.write_text(to_json({"stamps": report.stamps, **report.numbers}), encoding="utf-8")
    return html_path, json_path
