"""`write_picks` builds its rows a column at a time; here it is held to the row-at-a-time
writer it replaced (one row per problem from the arrays, indexed one candidate at a time):
byte-identical files on random candidate sets with unicode and missing answers, NaN scores and
labels, abstentions, unreadable rows between the problems, and columns the file lacks."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardlab._version import __version__
from rewardlab.core.sample import content_hash
from rewardlab.errors import InputError
from rewardlab.runner.io import RowWriter
from rewardlab.select.candidates import Candidates
from rewardlab.select.pick import _error_row, _lines, pick_config, write_picks
from rewardlab.select.selectors import Selection


def write_picks_row_at_a_time(candidates: Candidates, selection: Selection, method: str, output: Path,
                              *, unreadable: list[InputError] = (), **options: object) -> Path:  # fmt: skip
    """The writer `write_picks` replaced, row by row: the reference it is held to."""
    stamps = {"rewardlab_version": __version__, "spec_hash": content_hash(pick_config(method, **options))}
    credit = selection.credit(candidates.correct) if candidates.correct is not None else None
    rows = []
    for p, line in enumerate(_lines(candidates)):
        j = int(selection.chosen[p])
        row: dict[str, object] = {"problem": p, "line": line, "method": method, "status": "ok", "chosen": None if j < 0 else j}
        if candidates.answers is not None:
            row["answer"] = None if j < 0 else candidates.answers[p, j]
        if candidates.scores is not None:
            row["score"] = None if j < 0 or np.isnan(candidates.scores[p, j]) else float(candidates.scores[p, j])
        if credit is not None:
            row["credit"] = float(credit[p])
        rows.append((line, row))
    rows += [(exc.line or 0, _error_row(exc, method)) for exc in unreadable]
    with RowWriter(output) as writer:
        for _, row in sorted(rows, key=lambda pair: pair[0]):
            writer.write({**row, **stamps})
    return output


TEXT = st.text(st.characters(codec="utf-8"), max_size=5) | st.sampled_from(["é", "数学", "🙂", "\u2028", '"\\'])
FLOATS = st.floats(allow_infinity=False) | st.sampled_from([math.nan, -0.0, 1e300, 5e-324])


@st.composite
def picks(draw: st.DrawFn) -> tuple[Candidates, Selection, list[InputError]]:
    problems, width = draw(st.integers(0, 6)), draw(st.integers(1, 4))
    counts = draw(st.lists(st.integers(1, width), min_size=problems, max_size=problems))
    mask = np.arange(width)[None, :] < np.asarray(counts, dtype=np.int64).reshape(-1, 1)
    shape = (problems, width)

    def grid(items: st.SearchStrategy[Any], dtype: Any) -> np.ndarray | None:
        if not draw(st.booleans()) and draw(st.booleans()):  # a quarter of the files lack the column
            return None
        return np.array(draw(st.lists(items, min_size=problems * width, max_size=problems * width)), dtype=dtype).reshape(shape)

    answers = grid(TEXT | st.none(), object)
    scores = grid(FLOATS, np.float64)
    correct = grid(st.sampled_from([0.0, 1.0, math.nan]), np.float64)
    chosen = np.array([draw(st.integers(-1, c - 1)) for c in counts], dtype=np.int64)  # -1: abstained
    weight = np.zeros(shape)
    weight[np.flatnonzero(chosen >= 0), chosen[chosen >= 0]] = 1.0
    gaps = draw(st.lists(st.integers(1, 3), min_size=problems, max_size=problems))
    lines = np.cumsum(gaps).tolist() if draw(st.booleans()) else None
    taken = set(lines or range(1, problems + 1))
    free = [line for line in range(1, 3 * problems + 3) if line not in taken]
    bad = draw(st.lists(st.sampled_from(free), unique=True, max_size=3)) if free else []
    unreadable = [InputError(draw(TEXT) or "bad row", source="c.jsonl", line=line) for line in bad]
    if draw(st.booleans()):
        unreadable.append(InputError("no line", source="c.jsonl"))
    cands = Candidates(answers=answers, mask=mask, scores=scores, correct=correct, file_tokens=None, token_unit="none",
                       references=[None] * problems, source="c.jsonl", lines=lines)  # fmt: skip
    return cands, Selection(chosen, weight), unreadable


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(picks(), st.sampled_from(["best_of_n", "majority"]), st.dictionaries(st.sampled_from(["keep", "weights"]), TEXT),
       st.sampled_from([".jsonl", ".parquet"]))  # fmt: skip
def test_write_picks_writes_the_bytes_of_the_row_at_a_time_writer(tmp_path_factory, case, method, options, suffix):
    cands, selection, unreadable = case
    folder = tmp_path_factory.mktemp("picks")
    got = write_picks(cands, selection, method, folder / f"got{suffix}", unreadable=unreadable, **options)
    want = write_picks_row_at_a_time(cands, selection, method, folder / f"want{suffix}", unreadable=unreadable, **options)
    assert got.read_bytes() == want.read_bytes()


def test_a_parquet_output_holds_the_same_table(tmp_path):
    answers = np.array([["é", None], ["数学", "x"], [None, "🙂"]], dtype=object)
    scores = np.array([[0.5, math.nan], [math.nan, math.nan], [1.0, 2.0]])
    correct = np.array([[1.0, math.nan], [0.0, 1.0], [math.nan, 0.0]])
    cands = Candidates(answers=answers, mask=np.ones((3, 2), dtype=bool), scores=scores, correct=correct, file_tokens=None,
                       token_unit="none", references=[None] * 3, source="c.jsonl", lines=[1, 3, 4])  # fmt: skip
    selection = Selection(np.array([1, -1, 1]), np.array([[0.0, 1.0], [0.0, 0.0], [0.0, 1.0]]))  # a NaN score, an abstention
    bad = [InputError("line cut short ✂", source="c.jsonl", line=2)]
    got_path = write_picks(cands, selection, "best_of_n", tmp_path / "got.parquet", unreadable=bad)
    want_path = write_picks_row_at_a_time(cands, selection, "best_of_n", tmp_path / "want.parquet", unreadable=bad)
    assert got_path.read_bytes() == want_path.read_bytes()
    got = pq.read_table(got_path)
    assert got.column("line").to_pylist() == [1, 2, 3, 4]
    assert got.column("answer").to_pylist() == [None, None, None, "🙂"] and got.column("status").to_pylist()[1] == "error"
    assert got.column("score").to_pylist() == [None, None, None, 2.0]


@pytest.mark.parametrize("column", ["answers", "scores", "correct"])
def test_a_file_without_a_column_writes_no_such_field(tmp_path, column):
    fields = {"answers": np.array([["1"]], dtype=object), "scores": np.array([[0.5]]), "correct": np.array([[1.0]]),
              column: None}  # fmt: skip
    cands = Candidates(mask=np.ones((1, 1), dtype=bool), file_tokens=None, token_unit="none", references=[None],
                       source="c.jsonl", **fields)  # fmt: skip
    got = write_picks(cands, Selection(np.array([0]), np.ones((1, 1))), "best_of_n", tmp_path / "p.jsonl").read_text()
    field = {"answers": "answer", "scores": "score", "correct": "credit"}[column]
    assert f'"{field}"' not in got and '"chosen":0' in got
