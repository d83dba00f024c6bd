"""Curves as files: `curves.json` (every number, stamped) and `curves.html` (plots with CI bands).

The page is an `evaluate` report (`rewardlab.evaluate.audit.report.Report`): one self-contained
HTML template for every report of the project, plots inlined as base64 PNG (matplotlib Agg).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewardlab.select.curves import Curves

__all__ = ["write_curves"]


def plot_curves(curves: Curves, *, x: str = "n") -> str:
    """Accuracy against n (or tokens) per method, with the bootstrap interval as a band; base64 PNG."""
    from rewardlab.evaluate.audit.report import figure_png, new_figure

    fig, ax = new_figure(6.0, 4.0)
    for method, points in curves.points.items():
        if x != "n" and any(p.tokens is None for p in points):
            continue
        xs = [float(p.n) if x == "n" else float(p.tokens or 0.0) for p in points]
        (line,) = ax.plot(xs, [p.accuracy.estimate for p in points], marker="o", ms=3, label=method,
                          ls="--" if method == "oracle" else "-")  # fmt: skip
        ax.fill_between(xs, [p.accuracy.low for p in points], [p.accuracy.high for p in points], alpha=0.1,
                        color=line.get_color())  # fmt: skip
    label = "candidates per problem (n)" if x == "n" else f"generated {curves.token_unit} per problem"
    ax.set_xscale("log", base=2)
    ax.set(xlabel=label, ylabel="accuracy", title=f"Accuracy vs {'samples' if x == 'n' else curves.token_unit}")
    ax.legend(fontsize=8)
    return figure_png(fig)


def curves_report(curves: Curves, *, title: str = "Test-time selection: accuracy vs compute") -> Any:
    """An `evaluate` `Report` of the curves: a table per budget and the two plots."""
    from rewardlab.evaluate.audit.report import Report, Section

    methods = list(curves.points)
    ns = [p.n for p in curves.points[methods[0]]]
    rows: list[list[Any]] = []
    for i, n in enumerate(ns):
        first = curves.points[methods[0]][i]
        row: list[Any] = [n, None if first.tokens is None else round(first.tokens, 1)]
        row += [str(curves.points[m][i].accuracy) for m in methods]
        rows.append(row)
    figures = [("accuracy vs n", plot_curves(curves, x="n"))]
    if curves.token_unit != "none":
        figures.append((f"accuracy vs {curves.token_unit}", plot_curves(curves, x="tokens")))
    table = Section("Accuracy [95% bootstrap CI over problems]", columns=["n", curves.token_unit, *methods], rows=rows,
                    figures=figures)  # fmt: skip
    last = [(m, str(curves.points[m][-1].accuracy)) for m in methods]
    if curves.unlabelled:
        last.append(("candidates without a label", f"{curves.unlabelled} (not counted as right: accuracies are lower bounds)"))
    return Report(title, curves.stamps, [("budget", f"n = {ns[-1]}"), *last], [table], curves.to_dict(),
                  unreadable=curves.unreadable)  # fmt: skip


def write_curves(curves: Curves, out_dir: str | Path) -> tuple[Path, Path]:
    """Write `curves.html` and `curves.json` into `out_dir`; returns both paths."""
    from rewardlab.evaluate.audit.report import to_json

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    html_path, json_path = out / "curves.html", out / "curves.json"
    html_path.write_text(curves_report(curves).html(), encoding="utf-8")
    json_path.write_text(to_json(curves.to_dict()), encoding="utf-8")
    return html_path, json_path
