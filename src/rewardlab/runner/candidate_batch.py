"""A whole candidate file's rows checked a column at a time, by the rules of `candidate_rows`.

`parse_candidate_row` checks one row, with a few Python calls per row and per list. Over a
file of 100,000 rows those calls are most of the time of loading it. Here the same rules run
over each column of all the rows at once (the set of item types of a million items is one C
loop), and the result is that of `parse_candidate_row` on every row:

- a row that every column check takes plainly (lists where lists belong, of one length, items
  that the whole-list shortcuts of `candidate_rows` accept) is kept with the values
  `parse_candidate_row` gives it;
- every other row, bad or merely unusual (a null score, a label written 1.0), goes through
  `parse_candidate_row` itself, which keeps it or gives its error. The verdicts and messages
  are thus always that function's; the column checks only pick out the rows that need it.

The checked rows come back as flat columns (`CandidateBatch`), every row's list chained in
file order, ready to be padded into arrays without one Python object per candidate in between.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import itemgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import InputError
from rewardlab.runner.candidate_rows import (
    _AT_ONCE,
    LIST_FIELDS,
    CandidateColumns,
    CandidateRow,
    FileColumns,
    columns_held,
    parse_candidate_row,
    row_meta,
)
from rewardlab.runner.io import parse_each

__all__ = ["CandidateBatch", "parse_candidate_batch"]

_ABSENT: Any = object()  # a column a row does not hold (a held value may be null)

# Each list field's array: its dtype, and the value a row that is not taken plainly holds in
# the flat column until `parse_candidate_row` has said what it holds.
_DTYPES: dict[str, tuple[Any, Any]] = {
    "responses": (object, None), "answers": (object, None), "scores": (np.float64, math.nan),
    "labels": (np.float64, math.nan), "tokens": (np.float64, math.nan),
}  # fmt: skip


@dataclass(frozen=True)
class CandidateBatch:
    """The good rows of a candidate file as columns, in file order.

    The per-candidate columns are flat: row `i`'s candidates are `counts[i]` items starting at
    `counts[:i].sum()`. A column is None when the file lacks it.

    Attributes:
        lines: per row, its line (row number) in the file.
        counts: per row, how many candidates it has (>= 1).
        prompts: per row, the problem text ("" without one).
        references: per row, the gold answer (None without one).
        responses: per candidate, the response text (object array).
        answers: per candidate, the extracted answer (None: no answer; object array).
        scores: per candidate, the score (NaN: none).
        labels: per candidate, 1.0 right, 0.0 wrong, NaN unknown.
        tokens: per candidate, the generated tokens (NaN: unknown).
        meta: per row, `CandidateRow.meta` (its line and `META_COLUMNS`), when asked for.
    """

    lines: list[int]
    counts: NDArray[np.int64]
    prompts: list[str]
    references: list[Any]
    responses: NDArray[np.object_] | None = None
    answers: NDArray[np.object_] | None = None
    scores: NDArray[np.float64] | None = None
    labels: NDArray[np.float64] | None = None
    tokens: NDArray[np.float64] | None = None
    meta: list[dict[str, Any]] | None = None


def parse_candidate_batch(
    rows: Sequence[tuple[int, dict[str, Any]]], columns: CandidateColumns, source: str,
    *, on_error: Callable[[InputError], None] | None = None, required: Sequence[str] = (), meta: bool = False,
) -> tuple[CandidateBatch, int]:
    """`parse_candidate_row` of every `(line, row)` against the file's list columns
    (`candidate_rows.file_columns`), as columns; returns them and how many rows were left out.

    Args:
        rows: the file's rows, as `runner.io.read_objects` gives them.
        columns: the file's column names.
        source: the file, named in errors.
        on_error: called with the `InputError` of each bad row, in file order; that row is
            left out. Without it the first bad row's error is raised.
        required: as `file_columns`': fields the file must have, whatever its rows hold.
        meta: also keep each row's `CandidateRow.meta` (`CandidateBatch.meta`).

    Raises:
        InputError: as `file_columns` for the file; without `on_error`, the first bad row's,
            naming the file, line and column.
    """
    dicts = list(map(itemgetter(1), rows))
    by_name = _values(dicts, list(dict.fromkeys(columns.lists().values())))
    held = {name: len(values) - sum(map(operator.is_, values, repeat(_ABSENT))) for name, values in by_name.items()}
    present = columns_held(held, len(rows), columns, source, required=required)
    fields = [f for f in LIST_FIELDS if f in present.has]
    lists = {f: by_name[present.held[f][0]] for f in fields}
    del by_name
    counts, shaped = _shapes(dicts, lists, fields, present)
    plain, flat = shaped.copy(), {}  # flat: per field, the items of the rows of plain shape
    for field in fields:
        flat[field], declined = _items(field, lists[field], shaped, counts)
        plain &= ~declined
    del lists
    taken = np.repeat(plain[shaped], counts[shaped])  # which items of `flat` are kept as they are
    all_taken = bool(taken.all())  # the usual file: no copy of the columns
    unusual = [(rows[i][0], (i, rows[i][1])) for i in np.flatnonzero(~plain).tolist()]
    rescued, bad = parse_each(unusual, lambda line, item: (item[0], parse_candidate_row(line, item[1], columns, present, source)), on_error)
    at = np.array([i for i, _ in rescued], dtype=np.intp)
    kept = plain.copy()
    kept[at] = True
    counts[at] = [row.count for _, row in rescued]
    kept_dicts = dicts if kept.all() else list(compress(dicts, kept))
    rescued_rows = [row for _, row in rescued]
    lines = list(map(itemgetter(0), compress(rows, kept)))
    batch = CandidateBatch(
        lines=lines, counts=counts[kept],
        prompts=_prompts(kept_dicts, columns.prompt), references=_column(kept_dicts, columns.reference),
        **{f: _merged(f, flat[f] if all_taken else flat[f][taken], plain[kept], counts[kept], rescued_rows) for f in fields},
        meta=list(map(row_meta, lines, kept_dicts)) if meta else None,
    )  # fmt: skip
    return batch, bad


def _values(dicts: list[dict[str, Any]], names: list[str]) -> dict[str, list[Any]]:
    """Each named column's values over the rows (`_ABSENT` where a row lacks it). All of a row's
    at once while its dict is at hand, when every row has them all (a pass over a large file's
    rows is most of the cost of a pass: they are spread over memory); else column by column."""
    if len(names) > 1 and dicts:
        try:
            at_once = list(map(itemgetter(*names), dicts))
        except KeyError:
            pass
        else:
            return dict(zip(names, map(list, zip(*at_once, strict=True)), strict=True))
    return {name: list(map(dict.get, dicts, repeat(name), repeat(_ABSENT))) for name in names}


def _column(dicts: list[dict[str, Any]], name: str | None) -> list[Any]:
    """Each row's value of a column (None where it has none, or the column is turned off)."""
    return list(map(dict.get, dicts, repeat(name))) if name else [None] * len(dicts)


def _prompts(dicts: list[dict[str, Any]], name: str | None) -> list[str]:
    """Each row's prompt as `parse_candidate_row` has it: the text, "" for none."""
    values = _column(dicts, name)
    return values if set(map(type, values)) == {str} else ["" if v is None else str(v) for v in values]


def _shapes(
    dicts: list[dict[str, Any]], lists: dict[str, list[Any]], fields: list[str], present: FileColumns
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Per row, its candidate count (the anchor list's length, 0 where it has none) and whether
    its shape is plainly right: the file's columns there and no other named one, each a list
    of the anchor's length, which is not empty (the order of checks of `candidate_rows._lists`)."""
    plain = np.ones(len(dicts), dtype=bool)
    for field, (name, _, _) in present.held.items():
        if field not in present.has:  # a column too few rows hold: a row holding it is bad
            plain &= ~np.fromiter(map(operator.contains, dicts, repeat(name)), dtype=bool, count=len(dicts))
    lengths = {}
    for field in fields:
        values = lists[field]
        is_list = np.fromiter(map(isinstance, values, repeat(list)), dtype=bool, count=len(values))
        plain &= is_list  # the absent marker is no list either
        sized = values if is_list.all() else [v if isinstance(v, list) else () for v in values]
        lengths[field] = np.fromiter(map(len, sized), dtype=np.int64, count=len(values))
    counts = lengths[fields[0]]  # the responses, else the answers, else the scores set the count
    plain &= counts > 0
    for field in fields[1:]:
        plain &= lengths[field] == counts
    return np.where(plain, counts, 0), plain


def _items(field: str, values: list[Any], plain: NDArray[np.bool_], counts: NDArray[np.int64]) -> tuple[NDArray[Any], NDArray[np.bool_]]:
    """One list column's items checked by the whole-list shortcut of `candidate_rows`: the flat
    array of the items of the rows of plain shape (`counts[i]` each), and which rows the
    shortcut declines (their items hold the fill value). The shortcut runs on all the rows'
    items at once, and only when it declines them, row by row to find the rows it declines."""
    at_once = _AT_ONCE[field]
    dtype, fill = _DTYPES[field]
    shaped = values if plain.all() else list(compress(values, plain))
    declined = np.zeros(len(values), dtype=bool)
    items = list(chain.from_iterable(shaped))
    taken = at_once(items) if items else []
    if taken is None:
        parts = []
        for i, count in zip(np.flatnonzero(plain).tolist(), counts[plain].tolist(), strict=True):
            part = at_once(values[i])
            if part is None:
                declined[i], part = True, [fill] * count
            parts.append(part)
        taken = list(chain.from_iterable(parts))
    return _array(taken, dtype), declined


def _array(values: list[Any], dtype: Any) -> NDArray[Any]:
    # fromiter fills the array item by item, without np.array's look for nested sequences
    # (0.6x its time on a million strings, 0.8x on floats); the values are checked already.
    return np.fromiter(values, dtype=dtype, count=len(values))


def _merged(
    field: str, plain_items: NDArray[Any], is_plain: NDArray[np.bool_], counts: NDArray[np.int64], rescued: list[CandidateRow]
) -> NDArray[Any]:
    """The kept rows' items of one column: the plain rows' from the column checks, the others'
    from `parse_candidate_row` (labels as 1.0/0.0/NaN), each at its row's place."""
    if not rescued:
        return plain_items
    dtype, _ = _DTYPES[field]
    out = np.empty(int(counts.sum()), dtype=dtype)
    out[np.repeat(is_plain, counts)] = plain_items
    starts = np.cumsum(counts) - counts
    for start, row in zip(starts[~is_plain].tolist(), rescued, strict=True):
        items: list[Any] = getattr(row, field)
        if field == "labels":
            items = [math.nan if v is None else float(v) for v in items]
        out[start : start + row.count] = _array(items, dtype)
    return out
