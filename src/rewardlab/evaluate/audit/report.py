"""Self-contained reports: an HTML page (plots inlined as base64 PNG) and a JSON of every number.

Both carry the stamps that make a run comparable with another: rewardlab version, spec hash,
data hash and seed. Plots are drawn with matplotlib's Agg backend (no display needed) and the
page is a jinja2 template with no external resources, so it can be mailed or archived as is.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab._lazy import require
from rewardlab.core import JSON, stamp
from rewardlab.core.jsontext import escape_lone_surrogates, replace_lone_surrogates

__all__ = [
    "Report",
    "Section",
    "data_hash",
    "figure_png",
    "new_figure",
    "plot_bon",
    "plot_hist_by_label",
    "plot_length_scatter",
    "plot_overoptimization",
    "plot_probe_deltas",
    "plot_reliability",
    "stamps",
    "to_json",
    "unreadable_rows",
]


def data_hash(path: str | Path) -> str:
    """blake2b-128 of a file's bytes (or of a directory's files, sorted by name)."""
    p = Path(path)
    digest = hashlib.blake2b(digest_size=16)
    files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    for f in files:
        with f.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def stamps(*, spec_hash: str, data: str | Path | None, seed: int) -> dict[str, JSON]:
    """The provenance of a report: version, spec hash, data hash, seed and time."""
    return {
        **stamp(spec_hash).to_dict(),
        "data": str(data) if data is not None else None,
        "data_hash": data_hash(data) if data is not None else None,
        "seed": seed,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _clean(value: Any) -> Any:
    """JSON-ready: numpy to Python, NaN/inf to None, dataclasses with `to_dict` expanded."""
    if hasattr(value, "to_dict"):
        return _clean(value.to_dict())
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return _clean(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def to_json(payload: Mapping[str, Any]) -> str:
    """Strict JSON (no NaN) of a report payload, text as it is (a lone surrogate from the data
    as its escape)."""
    return escape_lone_surrogates(json.dumps(_clean(payload), indent=2, ensure_ascii=False, allow_nan=False))


# -- plots -----------------------------------------------------------------------------------
def new_figure(width: float = 5.0, height: float = 3.6) -> tuple[Any, Any]:
    """A figure and its axes, drawn off-screen: a bare `matplotlib.figure.Figure` renders with
    the Agg canvas, so neither pyplot's global state nor the caller's backend (a notebook's
    inline one) is touched."""
    require("matplotlib", needed_by="the report's plots")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    return fig, fig.subplots()


def figure_png(fig: Any) -> str:
    """The figure as a base64 PNG, for inlining into a report."""
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plot_reliability(confidence: Sequence[float | None], accuracy: Sequence[float | None], count: Sequence[int], *, title: str = "Reliability diagram") -> str:
    """Reliability diagram: observed accuracy per confidence bin against the diagonal."""
    fig, ax = new_figure()
    pts = [(c, a, n) for c, a, n in zip(confidence, accuracy, count, strict=True) if n and c is not None and a is not None]
    ax.plot([0, 1], [0, 1], "--", color="grey", label="perfect calibration")
    if pts:
        c, a, n = map(np.asarray, zip(*pts, strict=True))
        ax.scatter(c, a, s=20 + 200 * n / n.max(), zorder=3, label="bins (size = count)")
        ax.plot(c, a, "-", zorder=2)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="mean confidence", ylabel="observed accuracy", title=title)
    ax.legend(loc="upper left", fontsize=8)
    return figure_png(fig)


def plot_bon(n: Sequence[float], curves: Mapping[str, Sequence[float]], *, title: str = "Best-of-N") -> str:
    """Accuracy (or gold reward) against N on a log2 axis, one line per selection method."""
    fig, ax = new_figure()
    for name, values in curves.items():
        ax.plot(n, values, "o-", label=name)
    ax.set_xscale("log", base=2)
    ax.set(xlabel="N (candidates per problem)", ylabel="accuracy / gold reward", title=title)
    ax.legend(fontsize=8)
    return figure_png(fig)


def plot_overoptimization(kl: Sequence[float], gains: Mapping[str, Sequence[float]], fits: Mapping[str, Any], *, title: str = "Gold gain vs KL (best-of-n)") -> str:
    """Gold-reward gain over n = 1 against KL(best-of-n), with Gao et al.'s fitted curve."""
    fig, ax = new_figure()
    k = np.asarray(kl, dtype=float)
    dense = np.linspace(0, max(float(k.max()), 1e-6) * 1.5, 100)
    for name, gain in gains.items():
        line = ax.plot(k, gain, "o", label=name)[0]
        if name in fits:
            ax.plot(dense, fits[name].predict(dense), "--", color=line.get_color(),
                    label=f"fit α={fits[name].alpha:.3g}, β={fits[name].beta:.3g}")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set(xlabel="KL = log n − (n−1)/n  (nats)", ylabel="gold gain over n = 1", title=title)
    ax.legend(fontsize=7)
    return figure_png(fig)


def _by_label(labels: Sequence[bool | None]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Masks of the correct and the incorrect samples; an unknown label (None) is in neither."""
    correct = np.array([label is True for label in labels], dtype=bool)
    incorrect = np.array([label is False for label in labels], dtype=bool)
    return correct, incorrect


def plot_hist_by_label(scores: Sequence[float], labels: Sequence[bool | None], *, title: str = "Scores by label") -> str:
    """Overlaid score histograms of correct and incorrect samples (unlabelled ones left out)."""
    fig, ax = new_figure()
    s = np.asarray(scores, dtype=float)
    correct, incorrect = _by_label(labels)
    bins = np.histogram_bin_edges(s, bins=30) if s.size else 10
    ax.hist(s[correct], bins=bins, alpha=0.6, label=f"correct (n={int(correct.sum())})")
    ax.hist(s[incorrect], bins=bins, alpha=0.6, label=f"incorrect (n={int(incorrect.sum())})")
    ax.set(xlabel="score", ylabel="count", title=title)
    ax.legend(fontsize=8)
    return figure_png(fig)


def plot_length_scatter(lengths: Sequence[float], scores: Sequence[float], labels: Sequence[bool | None] | None = None, *, title: str = "Score vs length") -> str:
    """Score against response length (characters), coloured by label when given."""
    fig, ax = new_figure()
    x, s = np.asarray(lengths), np.asarray(scores, dtype=float)
    if labels is None:
        ax.scatter(x, s, s=8, alpha=0.5)
    else:
        correct, incorrect = _by_label(labels)
        ax.scatter(x[correct], s[correct], s=8, alpha=0.5, label="correct")
        ax.scatter(x[incorrect], s[incorrect], s=8, alpha=0.5, label="incorrect")
        unknown = ~(correct | incorrect)
        if unknown.any():
            ax.scatter(x[unknown], s[unknown], s=8, alpha=0.5, color="grey", label="no label")
        ax.legend(fontsize=8)
    ax.set(xlabel="response length (characters)", ylabel="score", title=title)
    return figure_png(fig)


def plot_probe_deltas(names: Sequence[str], mean_delta: Sequence[float | None], flag_rate: Sequence[float], *, title: str = "Probes: mean score change") -> str:
    """Horizontal bars of each probe's mean score change; flagged probes in red."""
    fig, ax = new_figure(6.0, 0.35 * len(names) + 1.2)
    values = [d if d is not None else 0.0 for d in mean_delta]
    colors = ["#c0392b" if f > 0 else "#2e86c1" for f in flag_rate]
    ax.barh(list(names), values, color=colors)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.invert_yaxis()
    ax.set(xlabel="mean(probed − original)  (red: expectation broken)", title=title)
    return figure_png(fig)


# -- the page ----------------------------------------------------------------------------------
_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<style>
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { border-bottom: 2px solid #2e86c1; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: 14px; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #eef4fa; }
td.flag { background: #fde2e0; font-weight: bold; }
.stamps { font-size: 12px; color: #555; }
.verdict { font-size: 18px; font-weight: bold; }
.figures img { max-width: 48%; margin: 4px; border: 1px solid #ddd; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: 6px; font-size: 12px; max-width: 1000px; }
</style></head>
<body>
<h1>{{ title }}</h1>
{% if verdict %}<p class="verdict">{{ verdict }}</p>{% endif %}
<p class="stamps">{% for k, v in stamps.items() %}<b>{{ k }}</b>: {{ v }}{% if not loop.last %} &middot; {% endif %}{% endfor %}</p>
<h2>Summary</h2>
<table>{% for k, v in summary %}<tr><th>{{ k }}</th><td>{{ v }}</td></tr>{% endfor %}</table>
{% for s in sections %}
<h2>{{ s.title }}</h2>
{% if s.text %}<p>{{ s.text }}</p>{% endif %}
{% if s.columns %}<table><tr>{% for c in s.columns %}<th>{{ c }}</th>{% endfor %}</tr>
{% for row in s.rows %}<tr>{% for cell in row %}<td{% if loop.index0 in s.flag_cols and cell not in (0, '0', '') %} class="flag"{% endif %}>{{ cell }}</td>{% endfor %}</tr>{% endfor %}</table>{% endif %}
{% if s.figures %}<div class="figures">{% for name, png in s.figures %}<img alt="{{ name }}" src="data:image/png;base64,{{ png }}">{% endfor %}</div>{% endif %}
{% for ex in s.examples %}<pre>{{ ex }}</pre>{% endfor %}
{% endfor %}
</body></html>
"""


@dataclass
class Section:
    """One part of a report: text, a table, figures (name, base64 PNG) and example blocks."""

    title: str
    text: str = ""
    columns: list[str] = field(default_factory=list)
    rows: list[list[JSON]] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    flag_cols: tuple[int, ...] = ()
    terminal_cols: tuple[int, ...] = ()  # columns the CLI prints (all when empty)


UNREADABLE = "rows left out (unreadable)"
_LISTED = 10  # unreadable rows spelled out in the summary line (all of them are in the JSON)


def unreadable_rows(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """`{"line", "error"}` of each `InputError` a reader handed to `on_error`, in line order."""
    return sorted(({"line": exc.line, "error": exc.reason} for exc in errors), key=lambda r: r["line"] or 0)


@dataclass
class Report:
    """What `rewardlab eval` and `rewardlab audit` write: a summary, sections and every number.

    `unreadable` lists the rows of the data file that could not be read and were left out
    (`{"line", "error"}`; see `unreadable_rows`): every number covers the other rows only, so
    when there are any the summary opens with a "rows left out (unreadable)" line naming them,
    and report.json carries the whole list.
    """

    title: str
    stamps: dict[str, JSON]
    summary: list[tuple[str, str]]
    sections: list[Section]
    numbers: dict[str, Any]
    verdict: str = ""  # the one-line conclusion the page and the CLI open with
    unreadable: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.unreadable and all(key != UNREADABLE for key, _ in self.summary):
            listed = "; ".join(f"line {r['line']}: {r['error']}" for r in self.unreadable[:_LISTED])
            more = len(self.unreadable) - _LISTED
            self.summary = [(UNREADABLE, f"{len(self.unreadable)} — {listed}" + (f"; {more} more in report.json" if more > 0 else "")),
                            *self.summary]  # fmt: skip

    def html(self) -> str:
        """The self-contained HTML page (autoescaped; no external resources). A lone surrogate in
        the data's text shows as U+FFFD: the page is UTF-8, which has no code for one."""
        require("jinja2", needed_by="the HTML report")
        import jinja2

        env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
        return replace_lone_surrogates(env.from_string(_TEMPLATE).render(
            title=self.title, verdict=self.verdict, stamps=self.stamps, summary=self.summary, sections=self.sections
        ))

    def payload(self) -> dict[str, Any]:
        return {"title": self.title, "verdict": self.verdict, "stamps": self.stamps, "summary": dict(self.summary),
                "unreadable": self.unreadable, **self.numbers}

    def write(self, out_dir: str | Path) -> tuple[Path, Path]:
        """Write `report.html` and `report.json` into `out_dir`; returns both paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        html_path, json_path = out / "report.html", out / "report.json"
        html_path.write_text(self.html(), encoding="utf-8")
        json_path.write_text(to_json(self.payload()), encoding="utf-8")
        return html_path, json_path
