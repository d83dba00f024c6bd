"""Evaluation data shapes: candidate sets (N responses per problem) and preference pairs.

Candidate sets are rows with a list of responses per problem, like the Qwen2.5-Math
`eval_rm_maj_example` files; the format, its column names (`CandidateColumns`) and what a
valid row is live in `runner.candidate_rows`, shared with `select.load_candidates`. Pairs
are rows with a prompt, a chosen and a rejected response, and optionally a subset name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from itertools import chain, repeat
from pathlib import Path
from typing import Any, TypeVar

from rewardlab.core import ErrorKind, RewardResult, Sample
from rewardlab.core.numbers import json_float
from rewardlab.errors import InputError
from rewardlab.runner.candidate_batch import CandidateBatch, parse_candidate_batch
from rewardlab.runner.candidate_rows import (
    CandidateColumns,
    CandidateRow,
    file_columns,
    parse_candidate_row,
)

__all__ = [
    "CandidateSet",
    "OnError",
    "PairSet",
    "collecting",
    "parse_rows",
    "read_candidate_batch",
    "read_candidate_rows",
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
    from rewardlab.runner.io import parse_each

    out, bad = parse_each(rows, parse, on_error)
    if not out:
        raise _none_read(bad + unread, source)
    return out


def _none_read(bad: int, source: str) -> InputError:
    return InputError(f"no row could be read ({bad} rows could not be read)", source=source)


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
class CandidateSet:
    """N candidate responses per problem, flattened into `samples` (group = problem index).

    Attributes:
        samples: one per candidate; `meta` holds `problem`, `candidate`, `line`, the `label`
            when the file has labels, and the row's `level`/`type`/`subject`/`idx`.
        problem: the problem index of each sample (problems are numbered over the rows read).
        labels: per candidate, whether it is correct (None: unknown), or None without labels.
        scores: per candidate, the file's score (NaN: none), or None without scores.
        answers: per candidate, the extracted answer (None: none), or None without answers.
        source: the file.
    """

    samples: list[Sample]
    problem: list[int]
    labels: list[bool | None] | None
    scores: list[float] | None
    answers: list[str | None] | None
    source: str

    @property
    def n_problems(self) -> int:
        return len(set(self.problem))


def read_candidate_rows(
    path: str | Path, columns: CandidateColumns | None = None, *, on_error: OnError | None = None,
    required: tuple[str, ...] = (),
) -> list[CandidateRow]:
    """The checked rows of a candidate file, by the rules of `runner.candidate_rows`.

    Args:
        path: the file (JSONL, Parquet or a saved `datasets` directory).
        columns: its column names (default: the Qwen2.5-Math evaluation files').
        on_error: called with the `InputError` of each row that cannot be read; that row is
            left out and the others are read. Without it the first bad row raises.
        required: `CandidateColumns` fields the caller needs in every row (e.g. "responses").

    Raises:
        InputError: naming the file, line and column of the first bad row (without
            `on_error`), or the file when no row can be read or it lacks a required column.
    """
    cols = columns or CandidateColumns()
    source = str(path)
    note, unread = collecting(on_error)
    raw = read_rows(path, on_error=note)
    present = file_columns(raw, cols, source, required=required)
    return parse_rows(raw, lambda line, row: parse_candidate_row(line, row, cols, present, source), source,
                      on_error=on_error, unread=len(unread))  # fmt: skip


def read_candidate_batch(
    path: str | Path, columns: CandidateColumns | None = None, *, on_error: OnError | None = None,
    required: tuple[str, ...] = (), meta: bool = False,
) -> CandidateBatch:
    """`read_candidate_rows` as columns (`runner.candidate_batch`): the same rows kept, the same
    errors, checked a column at a time; what `select.load_candidates` pads into arrays. With
    `meta`, each row's `CandidateRow.meta` is kept too.

    Raises:
        InputError: as `read_candidate_rows`.
    """
    cols = columns or CandidateColumns()
    source = str(path)
    note, unread = collecting(on_error)
    raw = read_rows(path, on_error=note)
    batch, bad = parse_candidate_batch(raw, cols, source, on_error=on_error, required=required, meta=meta)
    if not batch.lines:
        raise _none_read(bad + len(unread), source)
    return batch


def read_candidates(path: str | Path, columns: CandidateColumns | None = None, *, on_error: OnError | None = None) -> CandidateSet:
    """Load a candidate-set file; every response becomes one `Sample` with `group` = problem.

    Args:
        path: the file (JSONL, Parquet or a saved `datasets` directory).
        columns: its column names (default: the Qwen2.5-Math evaluation files'); the responses
            column is required.
        on_error: called with the `InputError` of each row that cannot be read (bad JSON, and
            every rule of `runner.candidate_rows`: responses that are not a list of strings,
            a list of another length, a label that is not true/false or 1/0, a score that is
            not a number or is infinite, a column most rows have but this one lacks); that row
            is left out and the others are loaded. Without it the first bad row raises.

    Raises:
        InputError: naming the file and line of the first bad row (without `on_error`), or
            when no row can be read.
    """
    from rewardlab.runner.io import gc_paused

    cols = columns or CandidateColumns()
    if not cols.responses:
        raise InputError("candidate sets are scored by their responses: name the responses column", source=str(path))
    # The GC stays paused until the samples are built: the parsed rows are freed before it runs
    # again, and the samples hold no reference cycles (as in `select.load_candidates`).
    with gc_paused():
        batch = read_candidate_batch(path, cols, on_error=on_error, required=("responses",), meta=True)
        return _candidate_set(batch, str(path))


def _candidate_set(batch: CandidateBatch, source: str) -> CandidateSet:
    """A checked batch as one `Sample` per candidate; problems are numbered over the rows read."""
    counts = batch.counts.tolist()
    problem = list(chain.from_iterable(map(repeat, range(len(counts)), counts)))
    candidate = list(chain.from_iterable(map(range, counts)))
    labels = None if batch.labels is None else list(map(_LABELS.get, batch.labels.tolist()))  # NaN: unknown
    base = [{**meta, "problem": p} for p, meta in enumerate(batch.meta or ())]
    responses = [] if batch.responses is None else batch.responses.tolist()
    prompts, references, groups = batch.prompts, batch.references, list(map(str, range(len(counts))))
    if labels is None:
        metas = [{**base[p], "candidate": j} for p, j in zip(problem, candidate, strict=True)]
    else:
        metas = [{**base[p], "candidate": j, "label": label} for p, j, label in zip(problem, candidate, labels, strict=True)]
    samples = [Sample(prompt=prompts[p], response=text, reference=references[p], meta=meta, group=groups[p])
               for p, text, meta in zip(problem, responses, metas, strict=True)]  # fmt: skip
    return CandidateSet(samples, problem, labels, None if batch.scores is None else batch.scores.tolist(),
                        None if batch.answers is None else batch.answers.tolist(), source=source)  # fmt: skip


_LABELS = {1.0: True, 0.0: False}  # a batch's labels (1.0, 0.0, NaN) as `CandidateRow.labels`


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
            number = json_float(score)
            if number is None or not math.isfinite(number):
                raise InputError(f"an ok reward must be a finite number, got {score!r:.60}", source=source, line=line)
            return RewardResult.ok(number)
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
