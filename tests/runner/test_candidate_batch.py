"""The column-at-a-time check of a candidate file (`runner.candidate_batch`) against the one
row check it stands for (`parse_candidate_row`, row by row): on random files, hostile rows
among plain ones, both keep the same rows with the same values and report the same errors
(file, line, message) in the same order, and strict reading raises the same first error."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardlab.errors import InputError
from rewardlab.runner import candidate_rows
from rewardlab.runner.candidate_batch import parse_candidate_batch
from rewardlab.runner.candidate_rows import CandidateColumns, file_columns, parse_candidate_row

COLUMNS = CandidateColumns(tokens="ntok")
SOURCE = "cands.jsonl"

# Every kind of item a JSON list can hold, and numbers at the edges (as in test_candidate_rows).
HOSTILE_ITEMS = [0, 1, 2, -1, 0.5, -0.0, 1.0, 0.0, math.nan, math.inf, -math.inf, True, False, None, "a", "", "1",
                 [0.5], [1], [], [[1]], [True], [None], [math.inf], [0.5, 0.5], ["0.5"], {"x": 1}, 10**400,
                 -(10**400), 2**63, 1.7e308, -1e-300]  # fmt: skip
HOSTILE_LISTS = [None, "abc", 3, 0.5, True, {"x": [1]}, [], "", [[]]]

# The usual items of each column, so that most rows are plain and the column checks take them.
PLAIN_ITEMS = {
    "code": st.text(max_size=6),
    "pred": st.one_of(st.text(max_size=3), st.none()),
    "pred_score": st.floats(allow_infinity=False, allow_nan=False, width=32).map(lambda v: [v]),
    "score": st.booleans(),
    "ntok": st.integers(0, 10**6),
}
PLAIN_SCORES = st.one_of(st.floats(-1e6, 1e6), st.integers(-10**6, 10**6))  # pred_score as bare numbers


@st.composite
def rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    n_rows = draw(st.integers(1, 7))
    bare_scores = draw(st.booleans())  # a file writes its scores as [[x], ...] or as [x, ...]
    out = []
    for i in range(n_rows):
        width = draw(st.sampled_from([1, 2, 3, 4, 0]))  # now and then a row without candidates
        row: dict[str, Any] = {"question": draw(st.sampled_from([f"q{i}", None, 7, ["q"]])), "gt": draw(st.sampled_from(["1", None, 2.5, [1]]))}
        for name, items in PLAIN_ITEMS.items():
            if draw(st.integers(0, 9)) == 0:  # now and then a column is missing
                continue
            item = PLAIN_SCORES if name == "pred_score" and bare_scores else items
            values = draw(st.lists(item, min_size=width, max_size=width))
            attack = draw(st.integers(0, 11))
            if attack == 0 and width:  # a hostile item somewhere in the list
                values[draw(st.integers(0, width - 1))] = draw(st.sampled_from(HOSTILE_ITEMS))
            elif attack == 1:  # no list at all, or an empty one
                values = draw(st.sampled_from(HOSTILE_LISTS))
            elif attack == 2:  # one item too many or too few
                values = values[1:] if draw(st.booleans()) else [*values, draw(item)]
            row[name] = values
        out.append(row)
    return out


def one_by_one(numbered: list[tuple[int, dict[str, Any]]], present: Any) -> tuple[list[Any], list[tuple[int | None, str]]]:
    """`parse_candidate_row` of each row, with its whole-list shortcuts declining every list, so
    that every item goes through the item-by-item check: the reference the batch is held to."""
    kept, errors = [], []
    with pytest.MonkeyPatch.context() as patch:
        for field in candidate_rows._AT_ONCE:
            patch.setitem(candidate_rows._AT_ONCE, field, lambda values: None)
        for line, row in numbered:
            try:
                kept.append(parse_candidate_row(line, row, COLUMNS, present, SOURCE))
            except InputError as exc:
                errors.append((exc.line, str(exc)))
    return kept, errors


def same(got: np.ndarray | None, want: list[Any] | None) -> bool:
    if got is None or want is None:
        return got is None and want is None
    if got.dtype == object:
        return [type(v) for v in got] == [type(v) for v in want] and list(got) == want
    expected = np.array([math.nan if v is None else float(v) for v in want], dtype=np.float64)
    return np.array_equal(got, expected, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(expected))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows())
def test_the_column_checks_agree_with_the_row_check(file_rows):
    numbered = list(enumerate(file_rows, start=1))
    try:
        present = file_columns(numbered, COLUMNS, SOURCE)
    except InputError as exc:  # a file without candidate lists is refused before any row is checked
        with pytest.raises(InputError) as info:
            parse_candidate_batch(numbered, COLUMNS, SOURCE)
        assert str(info.value) == str(exc)
        return
    want_rows, want_errors = one_by_one(numbered, present)
    errors: list[InputError] = []
    batch, bad = parse_candidate_batch(numbered, COLUMNS, SOURCE, on_error=errors.append)
    assert [(e.line, str(e)) for e in errors] == want_errors and bad == len(want_errors)
    assert batch.lines == [r.line for r in want_rows]
    assert batch.counts.tolist() == [r.count for r in want_rows]
    assert batch.prompts == [r.prompt for r in want_rows] and batch.references == [r.reference for r in want_rows]
    for field in ("responses", "answers", "scores", "labels", "tokens"):
        lists = [getattr(r, field) for r in want_rows]
        flat = None if not want_rows or lists[0] is None else [v for part in lists for v in part]
        if not want_rows:
            continue
        assert same(getattr(batch, field), flat), field
    if want_errors:  # strict: the first bad row's error, as the row-by-row reading raises it
        with pytest.raises(InputError) as info:
            parse_candidate_batch(numbered, COLUMNS, SOURCE)
        assert str(info.value) == want_errors[0][1]


def test_plain_rows_never_reach_the_row_check(monkeypatch):
    """The usual file is taken by the column checks alone: the row check is not called."""
    from rewardlab.runner import candidate_batch

    calls = []
    monkeypatch.setattr(candidate_batch, "parse_candidate_row", lambda *a: calls.append(a))
    numbered = [(i, {"question": "q", "gt": "1", "code": ["a", "b"], "pred": ["1", None], "pred_score": [[0.5], [1]],
                     "score": [True, False], "ntok": [3, 4]}) for i in range(1, 4)]  # fmt: skip
    batch, bad = parse_candidate_batch(numbered, COLUMNS, SOURCE)
    assert calls == [] and bad == 0 and batch.lines == [1, 2, 3]
    assert batch.scores is not None and batch.scores.tolist() == [0.5, 1.0] * 3
    assert batch.labels is not None and batch.labels.tolist() == [1.0, 0.0] * 3


def test_an_unusual_good_row_is_kept_in_its_place():
    """A null score declines the column check; the row check keeps the row, between the others."""
    numbered = [(1, {"code": ["a", "b"], "pred_score": [[0.1], [0.2]]}), (2, {"code": ["c"], "pred_score": [None]}),
                (3, {"code": ["d", "e", "f"], "pred_score": [[0.3], [0.4], [0.5]]})]  # fmt: skip
    batch, bad = parse_candidate_batch(numbered, COLUMNS, SOURCE)
    assert bad == 0 and batch.lines == [1, 2, 3] and batch.counts.tolist() == [2, 1, 3]
    assert batch.responses is not None and batch.responses.tolist() == ["a", "b", "c", "d", "e", "f"]
    assert batch.scores is not None and np.array_equal(batch.scores, [0.1, 0.2, math.nan, 0.3, 0.4, 0.5], equal_nan=True)


def test_a_one_character_string_is_not_a_one_element_score_list():
    numbered = [(1, {"code": ["a", "b"], "pred_score": [[0.1], "5"]})]
    with pytest.raises(InputError, match=r"cands\.jsonl:1: column 'pred_score' holds '5'; expected a number"):
        parse_candidate_batch(numbered, COLUMNS, SOURCE)
