"""Saved verdicts of a pairwise judge, scored as JudgeBench scores them (no reward is run).

Two row shapes:

- JudgeBench's own output files (`run_judge.py` of ScalerLab/JudgeBench): `label` ("A>B" or
  "B>A"), `source` (e.g. "mmlu-pro-law"), and `judgments`: one or two objects whose `decision`
  is "A>B", "B>A", "A=B" or null (a judgment object may itself be null when the judge failed).
  The second judgment is the swapped order. Subsets are the source prefixes JudgeBench reports:
  mmlu-pro, livebench-reasoning, livebench-math, livecodebench.
- rewardlab's: `verdict_ab`, `verdict_ba` ("A", "B", "tie" or null), optional `label` ("A"/"B")
  and `subset`.

Counting follows `utils/metrics.py::compute_final_metrics`: a verdict equal to the label adds 1,
one equal to the other side subtracts 1, a tie or a null adds 0; an item is correct when the sum is
positive, and accuracy divides by all items, nulls included. Null verdicts are counted and
reported, never an error; any other verdict is an error naming the file and line.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from rewardlab.errors import InputError
from rewardlab.evaluate import pairwise
from rewardlab.evaluate.audit import report as rp
from rewardlab.evaluate.datasets import OnError, read_parsed

__all__ = ["evaluate_judge"]

#: The source prefixes JudgeBench's `run_judge.py` reports, in its order.
JUDGEBENCH_SOURCES = ("mmlu-pro", "livebench-reasoning", "livebench-math", "livecodebench")

Outcome = tuple[list[tuple[str, str]], list[rp.Section], dict[str, Any]]
_DECISIONS = {"A>B": "A", "B>A": "B", "A=B": "tie", None: None}
_OURS = {"A": "A", "B": "B", "tie": "tie", None: None}


def _native(row: dict[str, Any], source: str, line: int) -> tuple[list[str | None], str | None, str]:
    judgments = row["judgments"]
    if not isinstance(judgments, list) or len(judgments) not in (1, 2):
        raise InputError("`judgments` must be a list of one or two judgments", source=source, line=line)
    verdicts = []
    for j in judgments:
        decision = j.get("decision") if isinstance(j, dict) else None
        if (j is not None and not isinstance(j, dict)) or not isinstance(decision, str | None) or decision not in _DECISIONS:
            raise InputError(f"judgment decision must be 'A>B', 'B>A', 'A=B' or null, got {decision!r}", source=source, line=line)
        verdicts.append(_DECISIONS[decision])
    label = row.get("label")
    if label is not None and label not in ("A>B", "B>A"):
        raise InputError(f"label must be 'A>B' or 'B>A', got {label!r}", source=source, line=line)
    origin = str(row.get("source", "all"))
    subset = next((p for p in JUDGEBENCH_SOURCES if origin.startswith(p)), origin)
    return verdicts, None if label is None else _DECISIONS[label], subset


def _ours(row: dict[str, Any], source: str, line: int) -> tuple[list[str | None], str | None, str]:
    if "verdict_ab" not in row or "verdict_ba" not in row:
        raise InputError("judge rows need `judgments` (JudgeBench) or `verdict_ab` and `verdict_ba`", source=source, line=line)
    verdicts = [row["verdict_ab"], row["verdict_ba"]]
    for v in verdicts:
        if v not in _OURS:
            raise InputError(f"verdicts must be 'A', 'B', 'tie' or null, got {v!r}", source=source, line=line)
    label = row.get("label")
    if label is not None and label not in ("A", "B"):
        raise InputError(f"label must be 'A' or 'B', got {label!r}", source=source, line=line)
    return verdicts, label, str(row.get("subset", "all"))


_Item = tuple[list[str | None], str | None, str, int]  # verdicts, label, subset, line


def _read(path: str | Path, on_error: OnError | None = None) -> tuple[list[list[str | None]], list[str | None], list[str], list[int]]:
    source = str(path)

    def item(line: int, row: dict[str, Any]) -> _Item:
        return (*(_native if "judgments" in row else _ours)(row, source, line), line)

    items = _one_order_count(read_parsed(path, item, on_error=on_error), source, on_error)
    return [i[0] for i in items], [i[1] for i in items], [i[2] for i in items], [i[3] for i in items]


def _one_order_count(items: list[_Item], source: str, on_error: OnError | None) -> list[_Item]:
    """The items, all with one judgment or all with two (single-order and swapped runs are
    scored apart). Without `on_error` a mix raises at the first single-order row; with it, the
    rows of the rarer count (on a tie: the single-order ones) are handed to it and left out."""
    counts = Counter(len(v) for v, *_ in items)
    if len(counts) < 2:
        return items
    if on_error is None:
        first_single = next(line for v, *_, line in items if len(v) == 1)
        raise InputError("rows mix one and two judgments; score single-order and swapped runs apart",
                         source=source, line=first_single)
    usual = 2 if counts[2] >= counts[1] else 1
    for v, *_, line in items:
        if len(v) != usual:
            on_error(InputError(f"holds {len(v)} judgment(s) where {counts[usual]} other rows hold {usual}; "
                                "score single-order and swapped runs apart", source=source, line=line))
    return [i for i in items if len(i[0]) == usual]


def _single_game(verdicts: list[list[str | None]], labels: list[str | None]) -> dict[str, Any]:
    # JudgeBench without the swapped order: correct when the one decision equals the label
    return {"accuracy": float(np.mean([v[0] == lab for v, lab in zip(verdicts, labels, strict=True)])),
            "nulls": sum(v[0] is None for v in verdicts), "items": len(verdicts)}


def evaluate_judge(path: str | Path, *, on_error: OnError | None = None) -> Outcome:
    """Accuracy (JudgeBench's counting), order-swap consistency and null verdicts per subset.
    With `on_error`, a row that cannot be read (an unknown decision or label, a judgment count
    other than the other rows') is handed to it and left out."""
    source = str(path)
    verdicts, labels, subsets, lines = _read(path, on_error)
    has_labels = all(lab is not None for lab in labels)
    swapped = len(verdicts[0]) == 2
    if not swapped and not has_labels:
        raise InputError("single-order verdicts need labels to be scored", source=source)
    null_lines = [f"{source}:{line}" for v, line in zip(verdicts, lines, strict=True) if None in v]
    by_subset: dict[str, Any] = {}
    for name in [*sorted(set(subsets)), "all"]:
        part = [i for i, s in enumerate(subsets) if name in ("all", s)]
        if swapped:
            by_subset[name] = pairwise.judge_consistency([verdicts[i][0] for i in part], [verdicts[i][1] for i in part],
                                                         [str(labels[i]) for i in part] if has_labels else None)
        else:
            by_subset[name] = _single_game([verdicts[i] for i in part], [labels[i] for i in part])
    total = by_subset["all"]

    def get(v: Any, key: str) -> Any:
        return getattr(v, key) if swapped else v[key]

    nulls = get(total, "nulls")
    summary = [("items", str(len(verdicts))), ("order", "both orders" if swapped else "one order"),
               ("items with a null verdict (counted as no vote)", f"{nulls}" + (f", first at {null_lines[0]}" if null_lines else ""))]
    if swapped:
        summary += [("order-swap consistency", f"{total.consistency:.4f}"), ("inconsistent (counted wrong)", str(total.inconsistent))]
    if has_labels:
        summary.append(("accuracy (JudgeBench counting)", f"{get(total, 'accuracy'):.4f}"))
    columns = ["subset", "items", "accuracy", "nulls"] + (["consistency", "inconsistent"] if swapped else [])
    rows = []
    for k, v in by_subset.items():
        acc = get(v, "accuracy")
        row = [k, len(v.decisions) if swapped else v["items"], "—" if acc is None else f"{acc:.4f}", get(v, "nulls")]
        rows.append(row + ([f"{v.consistency:.4f}", v.inconsistent] if swapped else []))
    section = rp.Section("Judge accuracy and order-swap consistency (JudgeBench)",
                         text="+1 per verdict equal to the label, −1 per verdict for the other side, 0 for a tie or null; "
                              "correct when positive; nulls stay in the denominator.",
                         columns=columns, rows=rows, examples=[f"null verdicts at: {', '.join(null_lines[:20])}"] if null_lines else [])
    return summary, [section], {"items": len(verdicts), "swapped": swapped, "subsets": by_subset,
                                "null_verdicts": {"items": nulls, "where": null_lines}}
