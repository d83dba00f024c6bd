"""The one row check of candidate files (`runner.candidate_rows`): one attack per test, each
read by both readers (`read_candidates` for eval, `load_candidates` for select) with the same
verdict and the same message naming the file, the line and the column."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.errors import InputError
from rewardlab.evaluate.datasets import read_candidate_rows, read_candidates
from rewardlab.evaluate.run_eval import run_eval
from rewardlab.runner.candidate_rows import CandidateColumns
from rewardlab.select import CandidateColumns as SelectColumns
from rewardlab.select.candidates import load_candidates


def good(i: int = 0) -> dict:
    return {"question": f"q{i}", "gt": "1", "code": ["a b", "c", "d e f"], "pred": ["1", "2", "1"],
            "pred_score": [[0.5], [0.1], [0.9]], "score": [True, False, True]}


def write(tmp_path, rows: list[dict | str]):
    path = tmp_path / "cands.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def both_refuse(tmp_path, rows: list[dict | str], line: int, reason: str) -> None:
    """Both readers leave out exactly `line`, with the same message, and raise it when strict."""
    path = write(tmp_path, rows)
    seen = []
    for read in (read_candidates, load_candidates):
        errors: list[InputError] = []
        read(path, on_error=errors.append)
        assert [(e.line, e.source) for e in errors] == [(line, str(path))], read
        seen.append(errors[0].reason)
        with pytest.raises(InputError) as info:
            read(path)
        assert str(info.value) == f"{path}:{line}: {errors[0].reason}"
    assert seen[0] == seen[1] and reason in seen[0], seen


def test_select_and_evaluate_share_one_column_class():
    assert SelectColumns is CandidateColumns


def test_label_yes_is_a_bad_row(tmp_path):
    both_refuse(tmp_path, [good(), {**good(1), "score": ["yes", False, True]}, good(2)], 2,
                "column 'score' holds 'yes'; expected true/false or 1/0")


def test_label_half_is_a_bad_row(tmp_path):
    both_refuse(tmp_path, [good(), {**good(1), "score": [0.5, 0, 1]}, good(2)], 2, "column 'score' holds 0.5")


def test_label_infinite_is_a_bad_row(tmp_path):
    both_refuse(tmp_path, [good(), {**good(1), "score": [math.inf, 0, 1]}, good(2)], 2, "column 'score' holds inf")


def test_score_string_is_a_bad_row(tmp_path):
    both_refuse(tmp_path, [good(), {**good(1), "pred_score": [["high"], [0.1], [0.2]]}, good(2)], 2,
                "column 'pred_score' holds 'high'; expected a number")


def test_score_boolean_is_a_bad_row(tmp_path):
    both_refuse(tmp_path, [good(), {**good(1), "pred_score": [True, 0.1, 0.2]}, good(2)], 2, "column 'pred_score' holds True")


def test_score_infinite_is_a_bad_row(tmp_path):
    both_refuse(tmp_path, [good(), {**good(1), "pred_score": [[-math.inf], [0.1], [0.2]]}, good(2)], 2,
                "column 'pred_score' holds -inf; expected a finite number")


def test_ragged_lists_are_a_bad_row_naming_the_short_column(tmp_path):
    both_refuse(tmp_path, [good(), {**good(1), "pred": ["1", "2"]}, good(2)], 2,
                "column 'pred' must be a list of 3 items (one per response), got 2 items for 3 candidates")


def test_a_column_most_rows_have_is_required_in_every_row(tmp_path):
    lacking = {k: v for k, v in good(1).items() if k != "score"}
    both_refuse(tmp_path, [good(), lacking, good(2)], 2, "column 'score' is missing here but present in other rows")


def test_a_column_only_a_few_rows_hold_is_not_dropped_without_a_word(tmp_path):
    plain = {k: v for k, v in good().items() if k != "score"}
    both_refuse(tmp_path, [plain, good(1), plain, plain], 2, "column 'score' is here but only 1 of 4 rows hold it")


def test_a_column_half_the_rows_hold_is_the_files(tmp_path):
    plain = {k: v for k, v in good().items() if k != "pred_score"}
    both_refuse(tmp_path, [good(), plain], 2, "column 'pred_score' is missing here")


def test_negative_token_count_is_a_bad_row(tmp_path):
    rows = [{**good(i), "ntok": [3, 4, 5]} for i in range(3)]
    rows[1]["ntok"] = [3, -4, 5]
    path = write(tmp_path, rows)
    with pytest.raises(InputError, match=r"cands\.jsonl:2: column 'ntok' holds -4; expected a token count >= 0"):
        load_candidates(path, CandidateColumns(tokens="ntok"))


def test_an_answer_that_is_an_object_is_a_bad_row(tmp_path):
    both_refuse(tmp_path, [good(), {**good(1), "pred": [{"x": 1}, "2", "3"]}, good(2)], 2, "column 'pred' holds {'x': 1}")


def test_a_response_that_is_not_text_is_a_bad_row(tmp_path):
    both_refuse(tmp_path, [good(), {**good(1), "code": ["a", 7, "c"]}, good(2)], 2, "column 'code' holds 7; expected a response string")


def test_a_row_without_candidates_is_a_bad_row(tmp_path):
    empty = {**good(1), "code": [], "pred": [], "pred_score": [], "score": []}
    both_refuse(tmp_path, [good(), empty, good(2)], 2, "column 'code' must be a list with one item per candidate, got an empty list")


def test_bad_json_is_a_bad_row_for_both(tmp_path):
    both_refuse(tmp_path, [good(), '{"code": [', good(2)], 2, "malformed JSON")


def test_null_and_nan_are_no_value_for_both_readers(tmp_path):
    row = {**good(), "pred_score": [None, [math.nan], [0.9]], "score": [None, math.nan, True], "pred": [None, "2", "1"]}
    path = write(tmp_path, [row])
    cands = load_candidates(path)
    assert np.isnan(cands.scores[0, :2]).all() and np.isnan(cands.correct[0, :2]).all() and cands.answers[0, 0] is None
    flat = read_candidates(path)
    assert flat.labels == [None, None, True] and flat.answers == [None, "2", "1"]
    assert np.isnan(flat.scores[:2]).all() and flat.scores[2] == 0.9


def test_eval_counts_unknown_labels_and_never_picks_a_missing_score(tmp_path):
    rows = [{**good(0), "pred_score": [None, [0.1], [0.9]], "score": [None, False, True]},
            {**good(1), "pred_score": [[0.9], None, [0.1]], "score": [True, False, None]}]
    numbers = run_eval(None, write(tmp_path, rows)).numbers
    assert numbers["unlabelled"] == 2 and numbers["file_scores_missing"] == 2
    assert numbers["selectors"]["file scores"]["best_of_n"].estimate == 1.0  # 0.9 wins both, no missing score is picked
    assert numbers["selectors"]["file scores"]["calibrated_on_n"] == 3  # the candidates with a label and a score


def test_a_file_without_any_candidate_list_is_one_error_naming_it(tmp_path):
    path = write(tmp_path, [{"question": "q"}, {"question": "r"}])
    with pytest.raises(InputError, match=r"cands\.jsonl: no candidate lists: none of the columns 'code', 'pred', 'pred_score'"):
        load_candidates(path)


def test_eval_needs_the_responses_in_some_row(tmp_path):
    path = write(tmp_path, [{k: v for k, v in good().items() if k != "code"}])
    with pytest.raises(InputError, match=r"cands\.jsonl: no row has the responses column 'code'"):
        read_candidates(path)


def test_select_reads_a_file_without_responses(tmp_path):
    rows = [{k: v for k, v in good(i).items() if k != "code"} for i in range(2)]
    cands = load_candidates(write(tmp_path, rows))
    assert cands.responses is None and cands.token_unit == "none" and cands.n_problems == 2


def test_the_old_correct_keyword_still_names_the_labels_column_with_a_warning(tmp_path):
    with pytest.warns(DeprecationWarning, match="labels"):
        cols = SelectColumns(correct="ok")
    assert cols == CandidateColumns(labels="ok")
    with pytest.warns(DeprecationWarning, match="labels"):
        assert cols.correct == "ok"
    rows = [{**good(i), "ok": good(i)["score"]} for i in range(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        cands = load_candidates(write(tmp_path, rows), SelectColumns(correct="ok"))
    assert cands.correct is not None and cands.correct.tolist() == [[1.0, 0.0, 1.0]] * 2


def test_rows_keep_their_lines_and_meta(tmp_path):
    rows = read_candidate_rows(write(tmp_path, ["[1]", {**good(), "level": "Level 3"}]), on_error=lambda exc: None)
    assert [(r.line, r.count, r.meta) for r in rows] == [(2, 3, {"line": 2, "level": "Level 3"})]


@pytest.mark.parametrize(("column", "values"), [("pred_score", [[0.5], [10**400], [0.9]]), ("pred_score", [0.5, -(10**400), 0.9]),
                                                ("tokens", [1, 10**400, 2])])  # fmt: skip
def test_a_number_beyond_float_range_is_a_bad_row_not_a_crash(tmp_path, column, values):
    rows = [{**good(), "tokens": [1, 2, 3]}, {**good(1), "tokens": [1, 2, 3], column: values}, {**good(2), "tokens": [1, 2, 3]}]
    path = write(tmp_path, rows)
    for read in (lambda p, **kw: read_candidates(p, CandidateColumns(tokens="tokens"), **kw),
                 lambda p, **kw: load_candidates(p, CandidateColumns(tokens="tokens"), **kw)):  # fmt: skip
        errors: list[InputError] = []
        read(path, on_error=errors.append)
        assert [e.line for e in errors] == [2]
        assert f"column {column!r} holds" in errors[0].reason and "expected a finite number" in errors[0].reason
        assert len(errors[0].reason) < 200  # the 400-digit number is cut short


# Every kind of item a JSON list can hold, and a few numbers at the edges.
_ITEMS = [0, 1, 2, -1, 0.5, -0.0, 1.0, 0.0, math.nan, math.inf, -math.inf, True, False, None, "a", "", "1",
          [0.5], [1], [], [[1]], [True], [None], {"x": 1}, 10**400, -(10**400), 2**63, 1.7e308]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_ITEMS), min_size=1, max_size=6), st.sampled_from(["responses", "answers", "scores", "labels", "tokens"]))
def test_the_whole_list_shortcut_agrees_with_the_item_by_item_check(values, field):
    from rewardlab.runner import candidate_rows as rows

    try:
        want: list | None = [rows._VALUES[field](v, "c") for v in values]
    except InputError:
        want = None
    at_once = rows._AT_ONCE[field](values)
    if at_once is None:  # the shortcut declines: the item-by-item check decides
        return
    assert want is not None, f"the shortcut accepted {values!r} that the check refuses"
    assert [type(v) for v in at_once] == [type(v) for v in want]
    assert all(a == b or (a != a and b != b) for a, b in zip(at_once, want, strict=True))  # NaN equals NaN here


def test_the_shortcut_takes_the_usual_rows():
    from rewardlab.runner import candidate_rows as rows

    row = good()
    assert rows._AT_ONCE["scores"](row["pred_score"]) == [0.5, 0.1, 0.9]
    assert rows._AT_ONCE["labels"](row["score"]) == [True, False, True]
    assert rows._AT_ONCE["answers"](row["pred"]) == ["1", "2", "1"]
    assert rows._AT_ONCE["responses"](row["code"]) == row["code"]
    assert rows._AT_ONCE["tokens"]([3, 0, 2.0]) == [3.0, 0.0, 2.0]
