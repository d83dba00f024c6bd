"""Evaluation data shapes: candidate sets (N responses per problem) and preference pairs.

Candidate sets are rows with a list of responses per problem, like the Qwen2.5-Math
`eval_rm_maj_example` files: `question`, `gt`, `code` (the 8 responses), `pred` (each
response's extracted answer), `score` (grader labels) and `pred_score` (reward-model scores).
Column names are options, so other files load the same way. Pairs are rows with a prompt, a
chosen and a rejected response, and optionally a subset name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rewardlab.core import JSON, ErrorKind, RewardResult, Sample
from rewardlab.errors import InputError

__all__ = [
    "CandidateColumns",
    "CandidateSet",
    "PairSet",
    "read_candidates",
    "read_pairs",
    "read_rows",
    "read_scored_rollouts",
]


def read_rows(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """`(line, row)` of a JSONL, Parquet or saved-`datasets` file; bad JSON names its line."""
    from rewardlab.runner.io import read_objects

    return read_objects(path)


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
    return float(value)


def read_candidates(path: str | Path, columns: CandidateColumns | None = None) -> CandidateSet:
    """Load a candidate-set file; every response becomes one `Sample` with `group` = problem."""
    cols = columns or CandidateColumns()
    source = str(path)
    samples: list[Sample] = []
    problem: list[int] = []
    labels: list[bool] = []
    scores: list[float] = []
    answers: list[str] = []
    for index, (line, row) in enumerate(read_rows(path)):
        responses = row.get(cols.responses)
        if not isinstance(responses, list) or not responses or not all(isinstance(r, str) for r in responses):
            raise InputError(f"column {cols.responses!r} must be a non-empty list of strings", source=source, line=line)
        n = len(responses)
        meta: dict[str, JSON] = {"line": line, "problem": index}
        for k in ("level", "type", "subject", "idx"):
            if k in row:
                meta[k] = row[k]
        row_labels = None
        if cols.labels and cols.labels in row:
            row_labels = [bool(v) for v in _column(row, cols.labels, n, source, line)]
            labels.extend(row_labels)
        for j, text in enumerate(responses):
            extra = {"candidate": j} if row_labels is None else {"candidate": j, "label": row_labels[j]}
            samples.append(Sample(prompt=str(row.get(cols.prompt, "")), response=text, reference=row.get(cols.reference),
                                  meta={**meta, **extra}, group=str(index)))
            problem.append(index)
        if cols.scores and cols.scores in row:
            scores.extend(_score_value(v, cols.scores, source, line) for v in _column(row, cols.scores, n, source, line))
        if cols.answers and cols.answers in row:
            answers.extend(str(v) for v in _column(row, cols.answers, n, source, line))

    def whole(values: list[Any]) -> list[Any] | None:
        return values if len(values) == len(samples) else None

    return CandidateSet(samples, problem, whole(labels), whole(scores), whole(answers), source)


@dataclass(frozen=True)
class PairSet:
    """Preference pairs: `chosen[i]` should score above `rejected[i]`."""

    chosen: list[Sample]
    rejected: list[Sample]
    subsets: list[str]
    source: str


def read_pairs(path: str | Path, *, prompt: str = "prompt", chosen: str = "chosen", rejected: str = "rejected",
               subset: str = "subset", reference: str | None = None) -> PairSet:
    """Load preference pairs (RewardBench column names by default)."""
    source = str(path)
    out_c, out_r, subsets = [], [], []
    for line, row in read_rows(path):
        for name in (chosen, rejected):
            if not isinstance(row.get(name), str | list):
                raise InputError(f"missing text column {name!r}", source=source, line=line)
        ref = row.get(reference) if reference else None
        meta = {"line": line}
        out_c.append(Sample(prompt=row.get(prompt, ""), response=row[chosen], reference=ref, meta=meta))
        out_r.append(Sample(prompt=row.get(prompt, ""), response=row[rejected], reference=ref, meta=meta))
        subsets.append(str(row.get(subset, "all")))
    return PairSet(out_c, out_r, subsets, source)


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
            return RewardResult.ok(float(score))
        if status == "error":
            return RewardResult.failure(ErrorKind(error["kind"]), str(error.get("message", "")))
        if status == "skipped":
            return RewardResult.skip("skipped when scored")
    except (TypeError, ValueError, KeyError) as exc:
        raise InputError(f"inconsistent reward columns ({exc})", source=source, line=line) from exc
    raise InputError(f"reward_status must be ok, error or skipped, got {status!r}", source=source, line=line)


def read_scored_rollouts(path: str | Path, *, fields: Mapping[str, str] | None = None) -> tuple[list[Sample], list[RewardResult]]:
    """Rollouts and their results from a `rewardlab score` output file (or any file with the
    same `reward`, `reward_status`, `reward_error_kind`, `reward/<component>` columns)."""
    source = str(path)
    samples, results = [], []
    for line, row in read_rows(path):
        if "reward_status" not in row:
            raise InputError("not a scored file: no `reward_status` column (score it with `rewardlab score` first)", source=source, line=line)
        results.append(_scored_result(row, source, line))
        plain = {k: v for k, v in row.items() if k not in _SCORE_COLUMNS and not k.startswith("reward/")}
        samples.append(Sample.from_dict(plain, fields=fields, source=source, line=line))
    return samples, results
