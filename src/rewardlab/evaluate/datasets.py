"""Evaluation data shapes: candidate sets (N responses per problem) and preference pairs.

Candidate sets are rows with a list of responses per problem, like the Qwen2.5-Math
`eval_rm_maj_example` files: `question`, `gt`, `code` (the 8 responses), `pred` (each
response's extracted answer), `score` (grader labels) and `pred_score` (reward-model scores).
Column names are options, so other files load the same way. Pairs are rows with a prompt, a
chosen and a rejected response, and optionally a subset name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from rewardlab.core import JSON, ErrorKind, RewardResult, Sample
from rewardlab.errors import InputError

__all__ = [
    "CandidateColumns",
    "CandidateSet",
    "OnError",
    "PairSet",
    "collecting",
    "parse_rows",
    "read_candidates",
    "read_pairs",
    "read_parsed",
    "read_rows",
    "read_scored_rollouts",
]

#: Called with the `InputError` of a row that cannot be read; the row is then left out.
OnError = Callable[[InputError], None]
T = TypeVar("T")


def read_rows(path: str | Path, *, on_error: OnError | None = None) -> list[tuple[int, dict[str, Any]]]:
    """`(line, row)` of a JSONL, Parquet or saved-`datasets` file; bad JSON names its line.

    With `on_error`, a line that is not a JSON object is handed to it and left out.
    """
    from rewardlab.runner.io import read_objects

    return read_objects(path, on_error)


def parse_rows(
    rows: list[tuple[int, dict[str, Any]]], parse: Callable[[int, dict[str, Any]], T], source: str,
    *, on_error: OnError | None = None, unread: int = 0,
) -> list[T]:
    """`parse(line, row)` of every row; a row whose `parse` raises `InputError` is handed to
    `on_error` and left out (without `on_error` the error is raised).

    Args:
        rows: `(line, row)` as `read_rows` gives them.
        parse: checks one row and returns what the caller keeps of it.
        source: the file, named when no row is left.
        on_error: see `read_rows`.
        unread: rows `read_rows` already left out (counted in the error when none is left).

    Raises:
        InputError: without `on_error`, the first bad row's; with it, when no row is left,
            saying how many could not be read.
    """
    out, bad = [], unread
    for line, row in rows:
        try:
            out.append(parse(line, row))
        except InputError as exc:
            if on_error is None:
                raise
            on_error(exc)
            bad += 1
    if not out:
        raise InputError(f"no row could be read ({bad} rows could not be read)", source=source)
    return out


def read_parsed(path: str | Path, parse: Callable[[int, dict[str, Any]], T], *, on_error: OnError | None = None) -> list[T]:
    """`parse_rows` over `read_rows(path)`: the checked rows of a file, bad ones to `on_error`."""
    note, unread = collecting(on_error)
    rows = read_rows(path, on_error=note)
    return parse_rows(rows, parse, str(path), on_error=on_error, unread=len(unread))


def collecting(on_error: OnError | None) -> tuple[OnError | None, list[InputError]]:
    """`on_error` wrapped so that it also keeps what it is handed, and the list it keeps them in
    (for a report of the rows left out); None stays None (strict)."""
    kept: list[InputError] = []
    if on_error is None:
        return None, kept

    def note(exc: InputError) -> None:
        kept.append(exc)
        on_error(exc)

    return note, kept


@dataclass(frozen=True)
class CandidateColumns:
    """Column names of a candidate-set file (defaults: Qwen2.5-Math eval files).

    Attributes:
        prompt: column of the problem.
        responses: column of the list of responses.
        reference: column of the gold answer.
        labels: column of the per-response correctness labels, if the file has them.
        scores: column of per-response scores shipped in the file (a reward model's), if any.
        answers: column of per-response extracted answers (for votes), if any.
    """

    prompt: str = "question"
    responses: str = "code"
    reference: str = "gt"
    labels: str | None = "score"
    scores: str | None = "pred_score"
    answers: str | None = "pred"


@dataclass(frozen=True)
class CandidateSet:
    """N candidate responses per problem, flattened into `samples` (group = problem index)."""

    samples: list[Sample]
    problem: list[int]  # problem index of each sample
    labels: list[bool] | None
    scores: list[float] | None
    answers: list[str] | None
    source: str

    @property
    def n_problems(self) -> int:
        return len(set(self.problem))


def _column(row: dict[str, Any], name: str, n: int, source: str, line: int) -> list[Any]:
    value = row.get(name)
    if not isinstance(value, list) or len(value) != n:
        got = f"{len(value)} items" if isinstance(value, list) else type(value).__name__
        raise InputError(f"column {name!r} must be a list of {n} items (one per response), got {got}", source=source, line=line)
    return value


def _score_value(value: Any, column: str, source: str, line: int) -> float:
    # pred_score in the Qwen files is a one-element list per response
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"column {column!r} holds {value!r}; expected a number", source=source, line=line)
    if not math.isfinite(value):  # a NaN or infinite score would poison every mean and rank
        raise InputError(f"column {column!r} holds {value}; expected a finite number", source=source, line=line)
    return float(value)


def _label_value(value: Any, column: str, source: str, line: int) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    raise InputError(f"column {column!r} holds {value!r}; expected true/false (or 1/0)", source=source, line=line)


@dataclass(frozen=True)
class _CandidateRow:
    """One problem's candidates, read and checked."""

    prompt: str
    responses: list[str]
    reference: Any
    meta: dict[str, JSON]
    labels: list[bool] | None
    scores: list[float] | None
    answers: list[str] | None


def _present(rows: list[tuple[int, dict[str, Any]]], name: str | None) -> bool:
    """Whether the file has the optional column `name`: at least half its rows hold it (so one
    stray row neither adds a column to the file nor takes it away)."""
    return bool(name) and 2 * sum(name in row for _, row in rows) >= len(rows)


def _candidate_row(line: int, row: dict[str, Any], cols: CandidateColumns, present: dict[str, bool], source: str) -> _CandidateRow:
    responses = row.get(cols.responses)
    if not isinstance(responses, list) or not responses or not all(isinstance(r, str) for r in responses):
        raise InputError(f"column {cols.responses!r} must be a non-empty list of strings", source=source, line=line)
    n = len(responses)

    def column(name: str | None) -> list[Any] | None:
        if name is None or not present[name]:
            return None
        if name not in row:
            raise InputError(f"column {name!r} is missing here but present in other rows", source=source, line=line)
        return _column(row, name, n, source, line)

    labels, scores, answers = column(cols.labels), column(cols.scores), column(cols.answers)
    meta: dict[str, JSON] = {"line": line}
    for k in ("level", "type", "subject", "idx"):
        if k in row:
            meta[k] = row[k]
    return _CandidateRow(
        prompt=str(row.get(cols.prompt, "")), responses=responses, reference=row.get(cols.reference), meta=meta,
        labels=None if labels is None else [_label_value(v, str(cols.labels), source, line) for v in labels],
        scores=None if scores is None else [_score_value(v, str(cols.scores), source, line) for v in scores],
        answers=None if answers is None else [str(v) for v in answers],
    )


def read_candidates(path: str | Path, columns: CandidateColumns | None = None, *, on_error: OnError | None = None) -> CandidateSet:
    """Load a candidate-set file; every response becomes one `Sample` with `group` = problem.

    Args:
        path: the file (JSONL, Parquet or a saved `datasets` directory).
        columns: its column names (default: the Qwen2.5-Math evaluation files').
        on_error: called with the `InputError` of each row that cannot be read (bad JSON,
            responses that are not a list of strings, a labels/scores/answers list of another
            length, a label that is not true/false, a score that is not a finite number, an
            optional column most rows have but this one lacks); that row is left out and the
            others are loaded. Without it the first bad row raises.

    Raises:
        InputError: naming the file and line of the first bad row (without `on_error`), or
            when no row can be read.
    """
    cols = columns or CandidateColumns()
    source = str(path)
    note, unread = collecting(on_error)
    raw = read_rows(path, on_error=note)
    present = {name: _present(raw, name) for name in (cols.labels, cols.scores, cols.answers) if name}
    rows = parse_rows(raw, lambda line, row: _candidate_row(line, row, cols, present, source), source,
                      on_error=on_error, unread=len(unread))  # fmt: skip
    samples: list[Sample] = []
    problem: list[int] = []
    for index, row in enumerate(rows):  # problems are numbered over the rows read
        for j, text in enumerate(row.responses):
            label = {} if row.labels is None else {"label": row.labels[j]}
            samples.append(Sample(prompt=row.prompt, response=text, reference=row.reference,
                                  meta={**row.meta, "problem": index, "candidate": j, **label}, group=str(index)))  # fmt: skip
            problem.append(index)

    def joined(values: list[list[Any] | None]) -> list[Any] | None:
        return None if values[0] is None else [v for part in values for v in part or ()]

    return CandidateSet(samples, problem, joined([r.labels for r in rows]), joined([r.scores for r in rows]),
                        joined([r.answers for r in rows]), source)  # fmt: skip


@dataclass(frozen=True)
class PairSet:
    """Preference pairs: `chosen[i]` should score above `rejected[i]`."""

    chosen: list[Sample]
    rejected: list[Sample]
    subsets: list[str]
    source: str


def _text(row: dict[str, Any], name: str, source: str, line: int) -> str | list[Any]:
    """A response column: a string, or chat messages (a non-empty list of objects)."""
    value = row.get(name)
    if isinstance(value, str) or (isinstance(value, list) and value and all(isinstance(m, dict) for m in value)):
        return value
    got = "missing" if name not in row else f"a {type(value).__name__}"
    raise InputError(f"text column {name!r} must be a string or a list of chat messages, got {got}", source=source, line=line)


def read_pairs(path: str | Path, *, prompt: str = "prompt", chosen: str = "chosen", rejected: str = "rejected",
               subset: str = "subset", reference: str | None = None, on_error: OnError | None = None) -> PairSet:
    """Load preference pairs (RewardBench column names by default).

    With `on_error`, a row that cannot be read (bad JSON, a chosen or rejected response that is
    missing or neither a string nor chat messages) is handed to it and left out.
    """
    source = str(path)

    def pair(line: int, row: dict[str, Any]) -> tuple[Sample, Sample, str]:
        good, bad = _text(row, chosen, source, line), _text(row, rejected, source, line)
        ref = row.get(reference) if reference else None
        meta = {"line": line}
        return (Sample(prompt=row.get(prompt, ""), response=good, reference=ref, meta=meta),
                Sample(prompt=row.get(prompt, ""), response=bad, reference=ref, meta=meta), str(row.get(subset, "all")))

    pairs = read_parsed(path, pair, on_error=on_error)
    return PairSet([c for c, _, _ in pairs], [r for _, r, _ in pairs], [s for _, _, s in pairs], source)


_SCORE_COLUMNS = ("reward", "reward_status", "reward_error_kind", "reward_error", "reward_info",
                  "source_line", "rewardlab_version", "spec_hash")


def _scored_result(row: dict[str, Any], source: str, line: int) -> RewardResult:
    """The `RewardResult` a `rewardlab score` output row was flattened from."""
    raw_info = row.get("reward_info")
    info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
    components = {}
    for key, value in row.items():
        if not key.startswith("reward/"):
            continue
        name = key[len("reward/"):]
        raw_entry = info.get(name)
        entry: dict[str, Any] = raw_entry if isinstance(raw_entry, dict) else {}
        components[name] = _result(value, entry.get("status", "ok" if value is not None else "skipped"), entry.get("error"), source, line)
    error = {"kind": row.get("reward_error_kind"), "message": row.get("reward_error") or ""}
    top = _result(row.get("reward"), row.get("reward_status"), error if error["kind"] else None, source, line)
    return replace(top, components=components)


def _result(score: Any, status: Any, error: Any, source: str, line: int) -> RewardResult:
    try:
        if status == "ok":
            if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
                raise InputError(f"an ok reward must be a finite number, got {score!r}", source=source, line=line)
            return RewardResult.ok(float(score))
        if status == "error":
            return RewardResult.failure(ErrorKind(error["kind"]), str(error.get("message", "")))
        if status == "skipped":
            return RewardResult.skip("skipped when scored")
    except (TypeError, ValueError, KeyError) as exc:
        raise InputError(f"inconsistent reward columns ({exc})", source=source, line=line) from exc
    raise InputError(f"reward_status must be ok, error or skipped, got {status!r}", source=source, line=line)


def read_scored_rollouts(
    path: str | Path, *, fields: Mapping[str, str] | None = None, on_error: OnError | None = None
) -> tuple[list[Sample], list[RewardResult]]:
    """Rollouts and their results from a `rewardlab score` output file (or any file with the
    same `reward`, `reward_status`, `reward_error_kind`, `reward/<component>` columns).

    With `on_error`, a row that cannot be read (bad JSON, no `reward_status`, an ok reward that
    is not a finite number, reward columns that disagree, a field `Sample.from_dict` refuses)
    is handed to it and left out.
    """
    source = str(path)

    def rollout(line: int, row: dict[str, Any]) -> tuple[Sample, RewardResult]:
        if "reward_status" not in row:
            raise InputError("not a scored file: no `reward_status` column (score it with `rewardlab score` first)", source=source, line=line)
        result = _scored_result(row, source, line)
        plain = {k: v for k, v in row.items() if k not in _SCORE_COLUMNS and not k.startswith("reward/")}
        return Sample.from_dict(plain, fields=fields, source=source, line=line), result

    rows = read_parsed(path, rollout, on_error=on_error)
    return [s for s, _ in rows], [r for _, r in rows]
