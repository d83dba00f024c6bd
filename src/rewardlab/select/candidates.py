"""Candidate files: one row per problem with a list of candidates, loaded as padded arrays.

The default columns are those of the Qwen2.5-Math `eval_rm_maj_example` files (`pred` = each
response's extracted answer, `pred_score` = reward-model scores as one-element lists, `score` =
grader correctness, `code` = the responses). Any other file loads by naming its columns.
Ragged rows are padded; `mask` marks the candidates that exist.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rewardlab.errors import InputError

__all__ = ["CandidateColumns", "Candidates", "load_candidates"]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class CandidateColumns:
    """Column names of a candidate file; None means the file has no such column.

    Attributes:
        answers: per candidate, the extracted final answer (for votes).
        scores: per candidate, a reward-model score (a number, or a one-element list).
        correct: per candidate, whether it is correct (bool or 0/1), for accuracy.
        responses: per candidate, the response text (token counts fall back to its words).
        tokens: per candidate, the number of generated tokens.
        reference: the gold answer (kept for re-scoring; not needed when `correct` is given).
        prompt: the problem text (for re-scoring with a reward).
    """

    answers: str | None = "pred"
    scores: str | None = "pred_score"
    correct: str | None = "score"
    responses: str | None = "code"
    tokens: str | None = None
    reference: str | None = "gt"
    prompt: str | None = "question"


@dataclass(frozen=True)
class Candidates:
    """`(problems, n_max)` arrays of one candidate file.

    Attributes:
        answers: object array of answers (None: missing or padding), or None without the column.
        mask: which candidates exist.
        scores: float scores, NaN where missing; None without the column.
        correct: float 0/1, NaN where unknown; None without the column.
        tokens: generated tokens per candidate (NaN where unknown); None when not known.
        token_unit: "tokens" from a token column, "words" when counted from responses.
        references: per problem gold answer (None where absent).
        source: where it was read from.
        responses: object array of response texts (None: padding), or None without the column.
        prompts: per problem prompt ("" where absent).
        lines: per problem, the line (row number) of the file it was read from.
    """

    answers: NDArray[np.object_] | None
    mask: NDArray[np.bool_]
    scores: F64 | None
    correct: F64 | None
    tokens: F64 | None
    token_unit: str
    references: list[Any]
    source: str
    responses: NDArray[np.object_] | None = None
    prompts: list[str] | None = None
    lines: list[int] | None = None

    @property
    def n_problems(self) -> int:
        return int(self.mask.shape[0])

    def samples(self) -> list[list[Any]]:
        """Per problem, each candidate as a `Sample` (prompt, response, reference), for
        re-scoring with any reward: `score_candidates(reward, candidates.samples())`."""
        from rewardlab.core import Sample

        if self.responses is None:
            raise InputError("re-scoring needs the responses column", source=self.source)
        prompts = self.prompts or [""] * self.n_problems
        return [[Sample(prompt=prompts[p], response=str(self.responses[p, j]), reference=self.references[p], group=str(p))
                 for j in range(int(self.mask[p].sum()))] for p in range(self.n_problems)]  # fmt: skip

    def with_scores(self, scores: Any) -> Candidates:
        """The same candidates with other scores (e.g. from `score_candidates(reward, ...)`)."""
        s = np.asarray(scores, dtype=np.float64)
        if s.shape != self.mask.shape:
            raise InputError(f"scores of shape {s.shape} for candidates of shape {self.mask.shape}", source=self.source)
        return replace(self, scores=np.where(self.mask, s, np.nan))


def _number(value: Any, column: str, role: str, source: str, line: int) -> float:
    if isinstance(value, list) and len(value) == 1:  # pred_score: a one-element list per response
        value = value[0]
    if value is None:
        return float("nan")
    if isinstance(value, bool) and role != "correct":
        raise InputError(f"column {column!r} holds {value!r}; expected a number", source=source, line=line)
    if not isinstance(value, int | float):
        raise InputError(f"column {column!r} holds {value!r}; expected a number", source=source, line=line)
    if math.isinf(value):  # NaN is "no value"; an infinite score, label or count is a broken row
        raise InputError(f"column {column!r} holds {value}; expected a finite number (null or NaN for none)", source=source, line=line)
    return float(value)


def _list(row: dict[str, Any], name: str, n: int | None, source: str, line: int) -> list[Any]:
    value = row.get(name)
    if not isinstance(value, list):
        raise InputError(f"column {name!r} must be a list (one item per candidate), got {type(value).__name__}", source=source, line=line)
    if n is not None and len(value) != n:
        raise InputError(f"column {name!r} has {len(value)} items for {n} candidates", source=source, line=line)
    return value


@dataclass(frozen=True)
class _Row:
    """One problem's candidates, read and checked."""

    line: int
    count: int
    answers: list[str | None] | None
    responses: list[str] | None
    scores: list[float] | None
    correct: list[float] | None
    tokens: list[float] | None
    reference: Any
    prompt: str


def _parse(line: int, row: dict[str, Any], cols: CandidateColumns, present: dict[str, bool], source: str) -> _Row:
    """Check one row against the columns the file has (`present`: in some row; the responses
    column is used only when every row has it)."""
    anchor = cols.answers or cols.responses or cols.scores
    assert anchor is not None
    n = len(_list(row, anchor, None, source, line))

    def numbers(name: str | None, what: str) -> list[float] | None:
        if name is None or not present[name]:
            return None
        if name not in row:
            raise InputError(f"column {name!r} is missing here but present in other rows", source=source, line=line)
        return [_number(v, name, what, source, line) for v in _list(row, name, n, source, line)]

    answers = None
    if cols.answers is not None:
        answers = [None if v is None else str(v) for v in _list(row, cols.answers, n, source, line)]
    responses = None
    if cols.responses is not None and present[cols.responses]:
        responses = [str(t) for t in _list(row, cols.responses, n, source, line)]
    return _Row(line, n, answers, responses, numbers(cols.scores, "scores"), numbers(cols.correct, "correct"),
                numbers(cols.tokens, "tokens"), row.get(cols.reference) if cols.reference else None,
                str(row.get(cols.prompt, "")) if cols.prompt else "")  # fmt: skip


def _padded(rows: list[_Row], field: str, width: int, fill: Any, dtype: Any) -> NDArray[Any] | None:
    if getattr(rows[0], field) is None:
        return None
    out = np.full((len(rows), width), fill, dtype=dtype)
    for i, row in enumerate(rows):
        values = getattr(row, field)
        out[i, : len(values)] = values
    return out


def load_candidates(
    path: str | Path, columns: CandidateColumns | None = None, *, on_error: Callable[[InputError], None] | None = None
) -> Candidates:
    """Read a candidate file (JSONL, Parquet or a saved `datasets` directory).

    Args:
        path: the file.
        columns: its column names (default: the Qwen2.5-Math evaluation files').
        on_error: called with the `InputError` of each row that cannot be read; that row is
            then left out and the others are loaded (`Candidates.lines` keeps each problem's
            line). Without it the first bad row raises.

    Raises:
        InputError: naming the file and line of a row whose lists disagree in length, hold
            non-numbers where numbers belong, or lack a column other rows have.
    """
    from rewardlab.runner.io import read_objects

    cols = columns or CandidateColumns()
    source = str(path)
    if (cols.answers or cols.responses or cols.scores) is None:
        raise InputError("name at least one of the answers, responses or scores columns", source=source)
    raw = read_objects(path, on_error)
    names = [c for c in (cols.scores, cols.correct, cols.tokens) if c is not None]
    present = {name: any(name in row for _, row in raw) for name in names}
    if cols.responses is not None:
        present[cols.responses] = all(cols.responses in row for _, row in raw)
    rows = []
    for line, row in raw:
        try:
            rows.append(_parse(line, row, cols, present, source))
        except InputError as exc:
            if on_error is None:
                raise
            on_error(exc)
    if not rows:
        raise InputError("no row could be read as a candidate set", source=source)
    return _assemble(rows, source)


def _assemble(rows: list[_Row], source: str) -> Candidates:
    counts = np.array([row.count for row in rows])
    width = int(counts.max())
    responses = _padded(rows, "responses", width, None, object)
    tokens, unit = _padded(rows, "tokens", width, np.nan, np.float64), "tokens"
    if tokens is None and responses is not None:  # no token counts: words of the responses
        tokens, unit = np.full((len(rows), width), np.nan), "words"
        for i, row in enumerate(rows):
            tokens[i, : row.count] = [len(t.split()) for t in row.responses or []]
    return Candidates(
        answers=_padded(rows, "answers", width, None, object),
        mask=np.arange(width)[None, :] < counts[:, None],
        scores=_padded(rows, "scores", width, np.nan, np.float64),
        correct=_padded(rows, "correct", width, np.nan, np.float64),
        tokens=tokens,
        token_unit=unit if tokens is not None else "none",
        references=[row.reference for row in rows],
        source=source,
        responses=responses,
        prompts=[row.prompt for row in rows],
        lines=[row.line for row in rows],
    )
