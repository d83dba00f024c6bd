"""The candidate-file format and its one row check: what a valid candidate row is.

A candidate file has one row per problem with a list per candidate, like the Qwen2.5-Math
`eval_rm_maj_example` files: `question`, `gt`, `code` (the responses), `pred` (each response's
extracted answer), `score` (grader labels) and `pred_score` (reward-model scores as
one-element lists). Column names are options (`CandidateColumns`), so other files load the
same way. Every reader builds on `parse_candidate_row`, through `runner.candidate_batch`
(which checks a whole file a column at a time and hands it every row it does not take
plainly): `evaluate.datasets.read_candidates` (one `Sample` per candidate),
`select.candidates.load_candidates` (padded arrays) and `models.data.graded_pairs`
(preference pairs of right and wrong responses).

The rules, one place for all:

- A named list column is the file's when at least half its rows hold it; a row lacking a
  column of the file is a bad row, and so is a row holding a column fewer than half the rows
  hold (its values would otherwise be dropped without a word). One stray row thus neither adds
  a column to the file nor takes one away.
- Every list column of a row is a list with one item per candidate (the responses list, else
  the answers, else the scores, sets the count; it must not be empty).
- responses: strings. answers: strings or numbers (null: no answer). scores: numbers, or
  one-element lists of a number (Qwen's `pred_score`). labels: true/false or 1/0. tokens:
  counts >= 0. For scores, labels and tokens, null or NaN is "no value" (a candidate without
  a score is never picked, one without a label is not counted as right); an infinite value, a
  string or a boolean where a number belongs makes the row bad.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any

from rewardlab.core.numbers import json_float
from rewardlab.errors import InputError

__all__ = ["CandidateColumns", "CandidateRow", "FileColumns", "columns_held", "file_columns", "parse_candidate_row", "row_meta"]

_UNSET: Any = object()

#: The list fields in the order a row's lists are checked (the first the file has sets the count).
LIST_FIELDS = ("responses", "answers", "scores", "labels", "tokens")

#: Row columns kept in each candidate row's `meta` (MATH's level/type, a subject, an index).
META_COLUMNS = ("level", "type", "subject", "idx")


@dataclass(frozen=True)
class CandidateColumns:
    """Column names of a candidate file (defaults: the Qwen2.5-Math eval files'); None (``''``
    on the command line) turns a column off.

    Attributes:
        prompt: column of the problem text.
        responses: column of the per-candidate responses (token counts fall back to their words).
        reference: column of the gold answer.
        labels: column of the per-candidate correctness labels (true/false or 1/0).
        scores: column of per-candidate scores shipped in the file (a reward model's).
        answers: column of the per-candidate extracted answers (for votes).
        tokens: column of the per-candidate generated-token counts.
    """

    prompt: str | None = "question"
    responses: str | None = "code"
    reference: str | None = "gt"
    labels: str | None = "score"
    scores: str | None = "pred_score"
    answers: str | None = "pred"
    tokens: str | None = None

    def __init__(
        self, prompt: str | None = "question", responses: str | None = "code", reference: str | None = "gt",
        labels: str | None = "score", scores: str | None = "pred_score", answers: str | None = "pred",
        tokens: str | None = None, *, correct: str | None = _UNSET,
    ) -> None:
        if correct is not _UNSET:  # the name `select.CandidateColumns` had for `labels`
            warnings.warn("CandidateColumns(correct=...) is deprecated; use labels=...", DeprecationWarning, stacklevel=2)
            labels = correct
        for name, value in (("prompt", prompt), ("responses", responses), ("reference", reference), ("labels", labels),
                            ("scores", scores), ("answers", answers), ("tokens", tokens)):  # fmt: skip
            object.__setattr__(self, name, value)

    @property
    def correct(self) -> str | None:
        """Deprecated name of `labels`."""
        warnings.warn("CandidateColumns.correct is deprecated; use .labels", DeprecationWarning, stacklevel=2)
        return self.labels

    def lists(self) -> dict[str, str]:
        """Field -> column name of the list columns that are named (not None)."""
        names = {"responses": self.responses, "answers": self.answers, "scores": self.scores,
                 "labels": self.labels, "tokens": self.tokens}  # fmt: skip
        return {field: name for field, name in names.items() if name}


@dataclass(frozen=True)
class CandidateRow:
    """One problem's candidates, read and checked. A list is None when the file lacks its column.

    Attributes:
        line: the row's line (row number) in the file.
        count: how many candidates the row has.
        prompt: the problem text ("" without one).
        reference: the gold answer, any JSON value (None without one).
        responses: the response texts.
        answers: the extracted answers (None: no answer).
        scores: the scores (NaN: no score).
        labels: whether each candidate is correct (None: unknown).
        tokens: generated tokens per candidate (NaN: unknown).
        meta: the row's `level`, `type`, `subject` and `idx`, where it has them, and `line`.
    """

    line: int
    count: int
    prompt: str
    reference: Any
    responses: list[str] | None
    answers: list[str | None] | None
    scores: list[float] | None
    labels: list[bool | None] | None
    tokens: list[float] | None
    meta: dict[str, Any]


@dataclass(frozen=True)
class FileColumns:
    """Which named list columns a file has: field -> (column, rows holding it, rows)."""

    held: dict[str, tuple[str, int, int]]
    has: frozenset[str]


def file_columns(
    rows: Sequence[tuple[int, Mapping[str, Any]]], columns: CandidateColumns, source: str, *, required: Sequence[str] = ()
) -> FileColumns:
    """The list columns of a file: those at least half its rows hold, and the `required` fields
    (e.g. the responses, which an evaluation scores) whatever the rows hold.

    Raises:
        InputError: naming the file when a required column is in no row, or when the file has
            none of the list columns that give the candidates (responses, answers, scores).
    """
    dicts = list(map(itemgetter(1), rows))
    counts = {name: sum(map(operator.contains, dicts, repeat(name))) for name in columns.lists().values()}
    return columns_held(counts, len(rows), columns, source, required=required)


def columns_held(
    counts: Mapping[str, int], rows: int, columns: CandidateColumns, source: str, *, required: Sequence[str] = ()
) -> FileColumns:
    """`file_columns` from how many of the file's `rows` rows hold each named list column
    (`counts`, by column name), for a reader that has counted them already.

    Raises:
        InputError: as `file_columns`.
    """
    held = {field: (name, counts[name], rows) for field, name in columns.lists().items()}
    for field in required:
        if field not in held or held[field][1] == 0:
            name = getattr(columns, field)
            raise InputError(f"no row has the {field} column {name!r}; name it (--{field}) or pass the right file", source=source)
    has = frozenset(f for f, (_, k, n) in held.items() if 2 * k >= n or f in required)
    if not has & {"responses", "answers", "scores"}:
        named = ", ".join(repr(getattr(columns, f)) for f in ("responses", "answers", "scores") if getattr(columns, f))
        raise InputError(f"no candidate lists: none of the columns {named or '(none named)'} is in most rows; "
                         "name the file's responses, answers or scores columns", source=source)  # fmt: skip
    return FileColumns(held, has)


def _score(value: Any, name: str) -> float:
    if isinstance(value, list) and len(value) == 1:  # pred_score: a one-element list per response
        value = value[0]
    return _number(value, name)


def _number(value: Any, name: str) -> float:
    if value is None:
        return math.nan
    number = json_float(value)  # an int beyond float's range is inf here, not an OverflowError
    if number is None:
        raise InputError(f"column {name!r} holds {value!r:.60}; expected a number")
    if math.isinf(number):  # NaN is "no value"; an infinite score or count is a broken row
        raise InputError(f"column {name!r} holds {value!r:.60}; expected a finite number (null or NaN for none)")
    return number


def _count(value: Any, name: str) -> float:
    count = _number(value, name)
    if count < 0:
        raise InputError(f"column {name!r} holds {value!r}; expected a token count >= 0 (null or NaN for none)")
    return count


def _label(value: Any, name: str) -> bool | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    raise InputError(f"column {name!r} holds {value!r}; expected true/false or 1/0 (null or NaN for unknown)")


def _answer(value: Any, name: str) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"column {name!r} holds {value!r}; expected an answer string (or null for none)")


def _response(value: Any, name: str) -> str:
    if isinstance(value, str):
        return value
    raise InputError(f"column {name!r} holds {value!r}; expected a response string")


_VALUES: dict[str, Callable[[Any, str], Any]] = {
    "responses": _response, "answers": _answer, "scores": _score, "labels": _label, "tokens": _count,
}

# Whole-list shortcuts for the common, well-formed rows: checking a list's set of item types
# runs in C, where the checks above cost a Python call per item (most of the time of reading a
# large file). Each accepts only lists that the item-by-item check accepts, with the same
# values, and returns None for anything else, which then goes through that check (and gets its
# message). `bool` is its own type, so a set of types within {int, float} holds no booleans.
_NUMBERS = frozenset({int, float})


def _floats(values: list[Any], types: set[type]) -> list[float] | None:
    """Numbers (`types`: the set of their types, within {int, float}) as floats when all are
    finite or NaN (an int beyond float range, an infinity: None)."""
    try:  # float() of a float is that float: a list of floats is already its answer
        floats = list(values) if types == {float} else list(map(float, values))
    except OverflowError:
        return None
    if math.isfinite(sum(floats)):  # then no item is infinite (or NaN); else look at each
        return floats
    return None if any(map(math.isinf, floats)) else floats


def _scores_at_once(values: list[Any]) -> list[float] | None:
    if type(values[0]) is list:  # Qwen's pred_score: [[3.5], [3.4], ...]
        if set(map(type, values)) != {list}:  # unpacking would take any one-item iterable ("5", b"5")
            return None
        try:
            values = [v for (v,) in values]  # each list must hold exactly one value
        except ValueError:
            return None
    types = set(map(type, values))
    return _floats(values, types) if types <= _NUMBERS else None


def _labels_at_once(values: list[Any]) -> list[bool | None] | None:
    types = set(map(type, values))
    if types == {bool}:
        return list(values)
    return list(map(bool, values)) if types <= {bool, int} and set(values) <= {0, 1} else None


def _tokens_at_once(values: list[Any]) -> list[float] | None:
    types = set(map(type, values))
    floats = _floats(values, types) if types <= _NUMBERS else None
    return None if floats is None or any(map(operator.lt, floats, repeat(0.0))) else floats


def _answers_at_once(values: list[Any]) -> list[str | None] | None:
    return list(values) if set(map(type, values)) <= {str, type(None)} else None


def _responses_at_once(values: list[Any]) -> list[str] | None:
    return list(values) if set(map(type, values)) == {str} else None


_AT_ONCE: dict[str, Callable[[list[Any]], list[Any] | None]] = {
    "responses": _responses_at_once, "answers": _answers_at_once, "scores": _scores_at_once,
    "labels": _labels_at_once, "tokens": _tokens_at_once,
}


def _checked(field: str, values: list[Any], name: str) -> list[Any]:
    """A list column's items, checked: all at once when they are plainly fine, else one by one."""
    at_once = _AT_ONCE[field](values)
    return at_once if at_once is not None else [_VALUES[field](v, name) for v in values]


def _lists(row: Mapping[str, Any], cols: FileColumns) -> tuple[int, dict[str, list[Any]]]:
    """The candidate count and each of the file's list columns, checked item by item."""
    for field, (name, k, n) in cols.held.items():
        if field in cols.has and name not in row:
            raise InputError(f"column {name!r} is missing here but present in other rows")
        if field not in cols.has and name in row:
            raise InputError(f"column {name!r} is here but only {k} of {n} rows hold it: put it in every row or turn it off")
    fields = [f for f in LIST_FIELDS if f in cols.has]
    anchor = cols.held[fields[0]][0]  # the responses, else the answers, else the scores set the count
    first = row[anchor]
    if not isinstance(first, list) or not first:
        got = "an empty list" if isinstance(first, list) else type(first).__name__
        raise InputError(f"column {anchor!r} must be a list with one item per candidate, got {got}")
    n, out = len(first), dict[str, list[Any]]()
    for field in fields:
        name = cols.held[field][0]
        values = row[name]
        if not isinstance(values, list) or len(values) != n:
            got = f"{len(values)} items for {n} candidates" if isinstance(values, list) else type(values).__name__
            raise InputError(f"column {name!r} must be a list of {n} items (one per response), got {got}")
        out[field] = _checked(field, values, name)
    return n, out


def row_meta(line: int, row: Mapping[str, Any]) -> dict[str, Any]:
    """What a candidate row keeps of its other columns (`CandidateRow.meta`): its line, and its
    `META_COLUMNS` where it has them."""
    return {"line": line, **{k: row[k] for k in META_COLUMNS if k in row}}


def parse_candidate_row(line: int, row: Mapping[str, Any], columns: CandidateColumns, present: FileColumns, source: str) -> CandidateRow:
    """Check one row of a candidate file against the file's columns (`file_columns`).

    Raises:
        InputError: naming the file, the line and the column of the first value that breaks
            the rules of the module docstring.
    """
    try:
        n, lists = _lists(row, present)
    except InputError as exc:  # the checks give the reason; the file and line are added here
        raise InputError(exc.reason, source=source, line=line) from None
    meta = row_meta(line, row)
    prompt = row.get(columns.prompt) if columns.prompt else None
    return CandidateRow(line=line, count=n, prompt="" if prompt is None else str(prompt), reference=row.get(columns.reference) if columns.reference else None,
                        responses=lists.get("responses"), answers=lists.get("answers"), scores=lists.get("scores"),
                        labels=lists.get("labels"), tokens=lists.get("tokens"), meta=meta)  # fmt: skip
