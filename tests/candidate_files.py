"""Hostile candidate files for the property tests that hold the column-at-a-time readers
(`runner.candidate_batch` and the readers built on it) to the one row check they stand for.

Most rows are plain (the column checks take them); now and then a column is missing, a list is
no list, one item too many or too few, one item is hostile (every kind of item a JSON list can
hold, and numbers at the edges) or good but unusual (a null score, a label written 1.0). `jsonl_lines` also writes malformed lines, non-object
lines and blank lines around them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import strategies as st

from rewardlab.runner import candidate_rows

HOSTILE_ITEMS = [0, 1, 2, -1, 0.5, -0.0, 1.0, 0.0, math.nan, math.inf, -math.inf, True, False, None, "a", "", "1",
                 [0.5], [1], [], [[1]], [True], [None], [math.inf], [0.5, 0.5], ["0.5"], {"x": 1}, 10**400,
                 -(10**400), 2**63, 1.7e308, -1e-300]  # fmt: skip
HOSTILE_LISTS = [None, "abc", 3, 0.5, True, {"x": [1]}, [], "", [[]]]

# The usual items of each column (`CandidateColumns(tokens="ntok")`), so that most rows are plain.
PLAIN_ITEMS = {
    "code": st.text(max_size=6),
    "pred": st.one_of(st.text(max_size=3), st.none()),
    "pred_score": st.floats(allow_infinity=False, allow_nan=False, width=32).map(lambda v: [v]),
    "score": st.booleans(),
    "ntok": st.integers(0, 10**6),
}
# Items that are good but not plain (the column checks hand their rows to the row check).
UNUSUAL_ITEMS = {
    "code": ["é", "\u2028"],
    "pred": [None, 1, 2.5, math.nan, -0.0],
    "pred_score": [None, math.nan, [None], [math.nan], 3, -0.0],
    "score": [None, math.nan, 1, 0, 1.0, 0.0, -0.0],
    "ntok": [None, math.nan, 0.0, -0.0, 3],
}
PLAIN_SCORES = st.one_of(st.floats(-1e6, 1e6), st.integers(-10**6, 10**6))  # pred_score as bare numbers
PROMPTS = st.sampled_from(["q", None, 7, ["q"]])
# Row columns kept in each candidate's meta (`candidate_rows.META_COLUMNS`), and one that is not.
META_VALUES = st.sampled_from([1, "Level 3", None, [1, {"a": "b"}], "é"])


@st.composite
def rows(
    draw: st.DrawFn, prompts: st.SearchStrategy[Any] = PROMPTS, calm: int = 1, plain: dict[str, st.SearchStrategy[Any]] | None = None,
) -> list[dict[str, Any]]:
    """A file's rows; `prompts` draws the `question` values (a row may also lack one), `plain`
    replaces some columns' usual items. With `calm` > 1 a column is that many times less often
    missing or attacked (more good rows; the rare draw is then not 0, the value hypothesis
    tries most often)."""
    columns = {**PLAIN_ITEMS, **(plain or {})}
    n_rows = draw(st.integers(1, 7))
    bare_scores = draw(st.booleans())  # a file writes its scores as [[x], ...] or as [x, ...]
    # now and then a column that only some rows hold (fewer than half: not the file's column)
    sparse = draw(st.sampled_from([None, None, None, *PLAIN_ITEMS]))
    out = []
    for i in range(n_rows):
        width = draw(st.sampled_from([1, 2, 3, 4, 0]))  # now and then a row without candidates
        row: dict[str, Any] = {"gt": draw(st.sampled_from(["1", None, 2.5, [1]]))}
        if draw(st.integers(0, 9)):
            question = draw(prompts)
            row["question"] = f"{question}{i}" if isinstance(question, str) else question
        for name in ("level", "idx", "other"):
            if draw(st.integers(0, 3)) == 0:
                row[name] = draw(META_VALUES)
        for name, items in columns.items():
            if draw(st.integers(0, 10 * calm - 1)) == 10 * (calm - 1):  # now and then a column is missing
                continue
            if name == sparse and draw(st.integers(0, 2)) != 1:
                continue
            item = PLAIN_SCORES if name == "pred_score" and bare_scores else items
            values = draw(st.lists(item, min_size=width, max_size=width))
            attack = draw(st.integers(0, 13 * calm - 1)) - 13 * (calm - 1)
            if attack == 0 and width:  # a hostile item somewhere in the list
                values[draw(st.integers(0, width - 1))] = draw(st.sampled_from(HOSTILE_ITEMS))
            elif attack == 1:  # no list at all, or an empty one
                values = draw(st.sampled_from(HOSTILE_LISTS))
            elif attack == 2:  # one item too many or too few
                values = values[1:] if draw(st.booleans()) else [*values, draw(item)]
            elif attack == 3 and width:  # a good item of an unusual kind
                values[draw(st.integers(0, width - 1))] = draw(st.sampled_from(UNUSUAL_ITEMS[name]))
            row[name] = values
        out.append(row)
    return out


@st.composite
def jsonl_lines(draw: st.DrawFn, calm: int = 4) -> list[str]:
    """A JSONL file's lines: `rows` (NaN and infinities as JSON's NaN/Infinity literals, big
    integers in full), now and then a line cut in half, one that is not an object, a blank one."""
    lines = []
    for row in draw(rows(calm=calm)):
        line = json.dumps(row)
        hostile = draw(st.integers(0, 14))  # the usual line first: hypothesis draws 0 more often
        if hostile == 14:
            line = line[: len(line) // 2]  # cut off mid-row
        elif hostile == 13:
            line = draw(st.sampled_from(["[1]", "3", '"row"', "null"]))
        elif hostile == 12:
            lines.append("   ")  # a blank line is no row, but still counts as a line
        lines.append(line)
    return lines


@contextmanager
def item_by_item() -> Iterator[None]:
    """`parse_candidate_row` with its whole-list shortcuts declining every list, so that every
    item goes through the item-by-item check: the reference the column checks are held to."""
    with pytest.MonkeyPatch.context() as patch:
        for field in candidate_rows._AT_ONCE:
            patch.setitem(candidate_rows._AT_ONCE, field, lambda values: None)
        yield


def same_items(got: list[Any] | None, want: list[Any] | None) -> bool:
    """Equal lists, item types included (True is not 1.0), NaN equal to NaN, -0.0 not 0.0."""
    if got is None or want is None:
        return got is None and want is None
    if [type(v) for v in got] != [type(v) for v in want] or len(got) != len(want):
        return False
    for a, b in zip(got, want, strict=True):
        if isinstance(a, float):
            if not (a == b or (math.isnan(a) and math.isnan(b))) or math.copysign(1, a) != math.copysign(1, b):
                return False
        elif a != b:
            return False
    return True
