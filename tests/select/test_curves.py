"""Curves and candidate files on small synthetic files: budgets, random subsets, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rewardlab.errors import InputError
from rewardlab.runner.candidate_rows import CandidateColumns
from rewardlab.select.candidates import load_candidates
from rewardlab.select.curves import selection_curves
from rewardlab.select.report import write_curves


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _rows(problems=30, n=6, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(problems):
        answers = rng.choice(["1", "2", "3"], size=n, p=[0.5, 0.3, 0.2]).tolist()
        correct = [a == "1" for a in answers]
        scores = [float(c) + rng.normal(0, 0.8) for c in correct]
        rows.append({"pred": answers, "pred_score": scores, "score": correct, "code": ["a b c"] * n, "gt": "1"})
    return rows


def test_random_subsets_are_seeded_and_every_method_sees_the_same_draws(tmp_path):
    cands = load_candidates(_write(tmp_path / "c.jsonl", _rows()))
    a = selection_curves(cands, ns=[3], max_subsets=5, seed=1, equivalence="exact")
    b = selection_curves(cands, ns=[3], max_subsets=5, seed=1, equivalence="exact")
    c = selection_curves(cands, ns=[3], max_subsets=5, seed=2, equivalence="exact")
    assert a.accuracy("weighted", 3) == b.accuracy("weighted", 3)
    assert any(a.accuracy(m, 3) != c.accuracy(m, 3) for m in a.points)


def test_tokens_axis_is_n_times_mean_tokens(tmp_path):
    cands = load_candidates(_write(tmp_path / "c.jsonl", _rows()))
    curves = selection_curves(cands, methods=["oracle"], ns=[1, 4], equivalence="exact")
    assert [p.tokens for p in curves.points["oracle"]] == [3.0, 12.0]
    assert curves.token_unit == "words"


def test_budget_beyond_the_smallest_problem_is_refused(tmp_path):
    rows = _rows(problems=3)
    rows[1] = {k: (v[:2] if isinstance(v, list) else v) for k, v in rows[1].items()}
    cands = load_candidates(_write(tmp_path / "c.jsonl", rows))
    with pytest.raises(InputError, match=r"1\.\.2 \(the smallest candidate count of a problem: line 2 has 2\)"):
        selection_curves(cands, ns=[3])


def test_curves_without_labels_say_which_column_is_missing(tmp_path):
    rows = [{k: v for k, v in r.items() if k != "score"} for r in _rows(problems=2)]
    cands = load_candidates(_write(tmp_path / "c.jsonl", rows))
    with pytest.raises(InputError, match="correct"):
        selection_curves(cands)


def test_unlabelled_candidates_count_as_not_right_and_are_counted(tmp_path):
    rows = _rows(problems=12)
    unknown = [{**r, "score": [None if j % 3 == 0 else v for j, v in enumerate(r["score"])]} for r in rows]
    wrong = [{**r, "score": [False if j % 3 == 0 else v for j, v in enumerate(r["score"])]} for r in rows]
    a = selection_curves(load_candidates(_write(tmp_path / "u.jsonl", unknown)), ns=[1, 3], equivalence="exact", n_resamples=200)
    b = selection_curves(load_candidates(_write(tmp_path / "w.jsonl", wrong)), ns=[1, 3], equivalence="exact", n_resamples=200)
    assert a.unlabelled == 12 * 2 and b.unlabelled == 0
    assert {m: [p.accuracy.estimate for p in pts] for m, pts in a.points.items()} == \
        {m: [p.accuracy.estimate for p in pts] for m, pts in b.points.items()}  # fmt: skip
    html, json_path = write_curves(a, tmp_path / "out")
    assert json.loads(json_path.read_text())["unlabelled"] == 24
    assert "candidates without a label" in html.read_text() and "lower bounds" in html.read_text()


def test_curves_refuse_a_file_where_no_candidate_has_a_label(tmp_path):
    rows = [{**r, "score": [None] * len(r["score"])} for r in _rows(problems=3)]
    with pytest.raises(InputError, match="no candidate has one"):
        selection_curves(load_candidates(_write(tmp_path / "c.jsonl", rows)))


def test_unknown_method_is_refused(tmp_path):
    cands = load_candidates(_write(tmp_path / "c.jsonl", _rows(problems=2)))
    with pytest.raises(InputError, match="unknown method"):
        selection_curves(cands, methods=["psychic"])


def test_row_with_lists_of_different_lengths_names_its_line(tmp_path):
    rows = _rows(problems=3)
    rows[2]["pred_score"] = rows[2]["pred_score"][:-1]
    with pytest.raises(InputError) as info:
        load_candidates(_write(tmp_path / "c.jsonl", rows))
    assert "c.jsonl:3:" in str(info.value) and "pred_score" in str(info.value)


def test_non_numeric_score_is_refused(tmp_path):
    rows = _rows(problems=1)
    rows[0]["pred_score"][0] = "high"
    with pytest.raises(InputError, match="expected a number"):
        load_candidates(_write(tmp_path / "c.jsonl", rows))


def test_unreadable_rows_are_reported_and_the_others_loaded_with_their_lines(tmp_path):
    rows = _rows(problems=5)
    rows[1]["pred_score"][0] = "high"
    rows[3]["pred"] = rows[3]["pred"][:-1]
    path = _write(tmp_path / "c.jsonl", rows)
    path.write_text(path.read_text() + "not json at all\n")
    errors: list[InputError] = []
    cands = load_candidates(path, on_error=errors.append)
    assert [e.line for e in errors] == [6, 2, 4]  # the file's reader reports first, then each row's checks
    assert cands.n_problems == 3 and cands.lines == [1, 3, 5]
    np.testing.assert_allclose(cands.scores[1, :6], rows[2]["pred_score"])  # the rows kept are the right ones
    with pytest.raises(InputError, match=r"c\.jsonl:6: malformed JSON"):  # without on_error the reader stops at its first bad line
        load_candidates(path)


def test_infinite_score_is_a_broken_row_and_nan_is_none(tmp_path):
    rows = _rows(problems=2)
    rows[0]["pred_score"][0] = float("inf")  # JSON's Infinity
    rows[1]["pred_score"][0] = float("nan")
    errors: list[InputError] = []
    cands = load_candidates(_write(tmp_path / "c.jsonl", rows), on_error=errors.append)
    assert [e.line for e in errors] == [1] and "expected a finite number" in str(errors[0])
    assert cands.lines == [2] and np.isnan(cands.scores[0, 0])


def test_every_row_unreadable_is_an_error_that_counts_them(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("[1]\n{x\n")
    with pytest.raises(InputError, match="2 could not be read"):
        load_candidates(path, on_error=lambda exc: None)


def test_null_score_is_missing_not_zero(tmp_path):
    rows = _rows(problems=1)
    rows[0]["pred_score"][0] = None
    cands = load_candidates(_write(tmp_path / "c.jsonl", rows))
    assert np.isnan(cands.scores[0, 0])


def test_token_column_wins_over_word_counts(tmp_path):
    rows = _rows(problems=2)
    for r in rows:
        r["ntok"] = [10] * 6
    cands = load_candidates(_write(tmp_path / "c.jsonl", rows), CandidateColumns(tokens="ntok"))
    assert cands.token_unit == "tokens" and float(cands.tokens.mean()) == 10.0


def test_write_curves_makes_stamped_json_and_a_page_with_plots(tmp_path):
    cands = load_candidates(_write(tmp_path / "c.jsonl", _rows()))
    html, js = write_curves(selection_curves(cands, equivalence="exact"), tmp_path / "out")
    payload = json.loads(js.read_text())
    assert payload["stamps"]["spec_hash"] and payload["stamps"]["rewardlab_version"]
    assert set(payload["curves"]) == {"oracle", "best_of_n", "majority", "weighted", "hybrid", "filtered"}
    assert html.read_text().count("data:image/png;base64,") == 2


def test_progress_counts_every_problem_at_every_budget_up_to_the_total(tmp_path):
    cands = load_candidates(_write(tmp_path / "c.jsonl", _rows(problems=40)))
    totals, done = [], []
    selection_curves(cands, ns=[1, 3, 6], max_subsets=5, equivalence="exact", progress=done.append, on_total=totals.append)
    assert totals == [40 * 3] and sum(done) == 40 * 3 and all(d > 0 for d in done)


def test_listing_a_chunk_at_a_time_gives_the_numbers_of_one_chunk(tmp_path, monkeypatch):
    from rewardlab.select import curves as module

    cands = load_candidates(_write(tmp_path / "c.jsonl", _rows(problems=25)))
    whole = selection_curves(cands, ns=[2, 4], equivalence="exact")
    monkeypatch.setattr(module, "_CHUNK_CANDIDATES", 7)  # one problem a chunk at both budgets
    chunked = selection_curves(cands, ns=[2, 4], equivalence="exact")
    for m in whole.points:
        for n in (2, 4):
            np.testing.assert_array_equal(whole.per_problem[m][n], chunked.per_problem[m][n])


def test_oracle_and_best_of_n_are_exact_even_where_the_votes_sample_subsets(tmp_path):
    from rewardlab.evaluate.expected import expected_best_of_n, expected_oracle

    cands = load_candidates(_write(tmp_path / "c.jsonl", _rows(problems=20, n=8)))
    curves = selection_curves(cands, ns=[4], max_subsets=3, equivalence="exact")  # C(8, 4) = 70 > 3
    y = np.nan_to_num(cands.correct)
    assert curves.accuracy("best_of_n", 4) == pytest.approx(expected_best_of_n(cands.scores, y, cands.mask, 4).mean())
    assert curves.accuracy("oracle", 4) == pytest.approx(expected_oracle(y, cands.mask, 4).mean())


def test_default_budgets_are_every_n_up_to_16_then_powers_of_two(tmp_path):
    from rewardlab.select.curves import _default_budgets

    assert _default_budgets(8) == list(range(1, 9))
    assert _default_budgets(64) == [1, 2, 4, 8, 16, 32, 64]
    assert _default_budgets(20) == [1, 2, 4, 8, 16, 20]
    cands = load_candidates(_write(tmp_path / "c.jsonl", _rows(problems=4, n=24)))
    curves = selection_curves(cands, methods=["oracle", "best_of_n"])
    assert [p.n for p in curves.points["oracle"]] == [1, 2, 4, 8, 16, 24]


def _own_subsets_credit(cands, classes, method, n, p):
    """Method `method`'s mean credit over every n-subset of problem p's own candidates (no padding)."""
    import itertools

    from rewardlab.select import hybrid_vote, majority_vote, to_weights, weighted_vote
    from rewardlab.select.answers import renumber_classes
    from rewardlab.select.selectors import best_of_n, filtered_vote

    k = int(cands.mask[p].sum())
    idx = np.array(list(itertools.combinations(range(k), n)))
    s, y, c = cands.scores[p][idx], np.nan_to_num(cands.correct[p])[idx], renumber_classes(classes[p][idx])
    pick = {"oracle": None, "best_of_n": lambda: best_of_n(s), "majority": lambda: majority_vote(c),
            "weighted": lambda: weighted_vote(c, to_weights(s, "sigmoid")), "hybrid": lambda: hybrid_vote(c, s),
            "filtered": lambda: filtered_vote(c, s, keep=0.5)}[method]  # fmt: skip
    return (y == 1).any(axis=1).mean() if pick is None else pick().credit(y).mean()


def test_a_ragged_files_subsets_are_drawn_from_each_problems_own_candidates(tmp_path):
    # Padding is not a candidate: a problem with 3 candidates in a file padded to 6 is credited
    # as if it were alone, at every budget and for every method (listed and closed form).
    from rewardlab.select.answers import answer_classes

    rows = _rows(problems=12, n=6, seed=3)
    for i, keep in enumerate([3, 6, 4, 3, 5, 6, 4, 3, 6, 5, 3, 4]):
        rows[i] = {k: (v[:keep] if isinstance(v, list) else v) for k, v in rows[i].items()}
    cands = load_candidates(_write(tmp_path / "c.jsonl", rows))
    curves = selection_curves(cands, ns=[1, 2, 3], equivalence="exact")
    classes = answer_classes(cands.answers, equivalence="exact")
    for m in curves.per_problem:
        for n in (1, 2, 3):
            want = [_own_subsets_credit(cands, classes, m, n, p) for p in range(cands.n_problems)]
            np.testing.assert_allclose(curves.per_problem[m][n], want, atol=1e-12, err_msg=f"{m} at n={n}")


def test_candidates_anywhere_in_the_row_are_moved_to_its_front_in_order():
    from rewardlab.select.curves import _candidates_first

    mask = np.array([[False, True, False, True], [True, True, True, False]])
    x = np.array([[9, 1, 9, 2], [3, 4, 5, 9]])
    out = _candidates_first({"mask": mask, "x": x, "none": None})
    assert out["x"][:, :2].tolist() == [[1, 2], [3, 4]] and out["x"][1, 2] == 5 and out["none"] is None
    assert out["mask"].tolist() == [[True, True, False, False], [True, True, True, False]]


def test_the_hybrid_curve_is_the_same_with_or_without_the_majority_vote_it_reuses(tmp_path):
    # With the majority vote listed too, the hybrid (top_k=1) is read off its weights; alone,
    # hybrid_vote runs: bit for bit the same credits, in either order of the methods.
    rows = _rows(problems=40, n=6, seed=5)
    for i in range(0, 40, 3):  # ragged, and candidates without an answer (class -1)
        rows[i] = {k: (v[:4] if isinstance(v, list) else v) for k, v in rows[i].items()}
        rows[i]["pred"][1] = None
    cands = load_candidates(_write(tmp_path / "c.jsonl", rows))
    alone = selection_curves(cands, methods=["hybrid"], equivalence="exact", max_subsets=5)
    after = selection_curves(cands, methods=["hybrid", "majority"], equivalence="exact", max_subsets=5)
    for n, credit in alone.per_problem["hybrid"].items():
        np.testing.assert_array_equal(after.per_problem["hybrid"][n], credit, err_msg=f"n={n}")
