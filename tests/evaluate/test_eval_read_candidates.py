"""`read_candidates` (the reader of `rewardlab eval`), which checks a file a column at a time
(`runner.candidate_batch`), against the row-at-a-time reading it stands for: every row through
`parse_candidate_row` item by item, one `Sample` per candidate. On random hostile JSONL files
both keep the same samples, report the same errors (line, message) in the same order, and
strict reading raises the same first error."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from candidate_files import item_by_item, jsonl_lines, same_items
from rewardlab.core import Sample
from rewardlab.errors import InputError
from rewardlab.evaluate.datasets import CandidateSet, read_candidate_rows, read_candidates
from rewardlab.runner.candidate_rows import CandidateColumns

COLUMNS = CandidateColumns(tokens="ntok")


def row_at_a_time(path: Path, on_error: Any) -> CandidateSet:
    """The reading `read_candidates` stands for: checked rows, then a sample per candidate."""
    with item_by_item():
        rows = read_candidate_rows(path, COLUMNS, on_error=on_error, required=("responses",))
    samples, problem = [], []
    for index, row in enumerate(rows):
        for j, text in enumerate(row.responses or ()):
            label = {} if row.labels is None else {"label": row.labels[j]}
            samples.append(Sample(prompt=row.prompt, response=text, reference=row.reference,
                                  meta={**row.meta, "problem": index, "candidate": j, **label}, group=str(index)))  # fmt: skip
            problem.append(index)

    def joined(values: list[Any]) -> list[Any] | None:
        return None if values[0] is None else [v for part in values for v in part]

    return CandidateSet(samples, problem, joined([r.labels for r in rows]), joined([r.scores for r in rows]),
                        joined([r.answers for r in rows]), source=str(path))  # fmt: skip


def outcome(read: Any, path: Path) -> tuple[Any, list[tuple[int | None, str]]]:
    """What a reader gives with `on_error` (its set, or the error it still raises) and the
    errors it reported, in order."""
    errors: list[InputError] = []
    try:
        return read(path, errors.append), [(e.line, str(e)) for e in errors]
    except InputError as exc:
        return str(exc), [(e.line, str(e)) for e in errors]


def fields(sample: Sample) -> tuple[Any, ...]:
    return (type(sample.response), sample.prompt, sample.response, sample.reference, sample.meta, sample.group,
            [type(v) for v in sample.meta.values()])  # fmt: skip


def assert_same_set(got: CandidateSet, want: CandidateSet) -> None:
    assert [fields(s) for s in got.samples] == [fields(s) for s in want.samples]
    assert got.problem == want.problem and got.source == want.source
    for name in ("labels", "scores", "answers"):
        assert same_items(getattr(got, name), getattr(want, name)), name


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jsonl_lines())
def test_read_candidates_agrees_with_the_row_at_a_time_reading(lines):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cands.jsonl"
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        got, got_errors = outcome(lambda p, note: read_candidates(p, COLUMNS, on_error=note), path)
        want, want_errors = outcome(row_at_a_time, path)
        assert got_errors == want_errors
        if isinstance(want, str):  # no row left, or a file without the columns: the same refusal
            assert got == want
        else:
            assert_same_set(got, want)
        strict_got, _ = outcome(lambda p, note: read_candidates(p, COLUMNS), path)
        strict_want, _ = outcome(lambda p, note: row_at_a_time(p, None), path)
        if isinstance(strict_want, str):  # strict: the first error, as the row-at-a-time reading raises it
            assert strict_got == strict_want
        else:
            assert_same_set(strict_got, strict_want)


def test_a_unicode_prompt_and_its_meta_reach_every_sample(tmp_path):
    path = tmp_path / "cands.jsonl"
    path.write_text('{"question": "combien font 1+1 ? é", "gt": "2", "code": ["2", "3"], "score": [1, 0], "level": "Niveau 2", "idx": 7}\n',
                    encoding="utf-8")  # fmt: skip
    cands = read_candidates(path, COLUMNS)
    assert [s.prompt for s in cands.samples] == ["combien font 1+1 ? é"] * 2
    assert [dict(s.meta) for s in cands.samples] == [
        {"line": 1, "level": "Niveau 2", "idx": 7, "problem": 0, "candidate": 0, "label": True},
        {"line": 1, "level": "Niveau 2", "idx": 7, "problem": 0, "candidate": 1, "label": False},
    ]
    assert cands.labels == [True, False] and cands.scores is None
