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

from candidate_files import item_by_item, rows
from rewardlab.errors import InputError
from rewardlab.runner.candidate_batch import parse_candidate_batch
from rewardlab.runner.candidate_rows import CandidateColumns, file_columns, parse_candidate_row

COLUMNS = CandidateColumns(tokens="ntok")
SOURCE = "cands.jsonl"


def one_by_one(numbered: list[tuple[int, dict[str, Any]]], present: Any) -> tuple[list[Any], list[tuple[int | None, str]]]:
    """`parse_candidate_row` of each row, item by item: the reference the batch is held to."""
    kept, errors = [], []
    with item_by_item():
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
