"""`answer_classes` on answer strings: adversarial inputs, one per test, and an equivalence
property against a per-row dict reference."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardlab.select import answer_classes
from rewardlab.select.answers import _COLUMN_SCAN_MAX_WIDTH, _many_distinct, renumber_classes
from rewardlab.verify.text import normalize_text


def reference_classes(answers: Sequence[Sequence[object]], equivalence: str) -> list[list[int]]:
    """The definition, one row at a time: ids by first appearance of `str(answer)` (normalised
    for "normalized"), -1 for None and for padding to the widest row."""
    width = max(map(len, answers), default=0)
    out = []
    for row in answers:
        seen: dict[str, int] = {}
        ids = []
        for answer in row:
            if answer is None:
                ids.append(-1)
                continue
            key = str(answer) if equivalence == "exact" else normalize_text(str(answer))
            ids.append(seen.setdefault(key, len(seen)))
        out.append(ids + [-1] * (width - len(ids)))
    return out


TRICKY = [
    "", " ", "a", "A", "a ", "\x00", "a\x00", "a\x00b", "\ud800", "\udfff", "\ud800\udc00", "\U0001f600",
    "é", "e\u0301", "ß", "SS", "ﬁ", "fi", "1", "1.0", "True", "None", "b'a'", "\\frac{1}{2}",
]  # fmt: skip
answers_strategy = st.one_of(
    st.sampled_from(TRICKY),
    st.text(alphabet=st.characters(exclude_categories=()), max_size=4),  # surrogates included
    st.none(),
    st.sampled_from([1, 1.0, True, b"a", 0.5]),
)


@settings(max_examples=200, deadline=None)
@given(answers=st.lists(st.lists(answers_strategy, max_size=12), max_size=8), equivalence=st.sampled_from(["exact", "normalized"]))
def test_answer_classes_equal_the_per_row_reference_on_random_ragged_input(answers, equivalence):
    got = answer_classes(answers, equivalence=equivalence)
    assert got.dtype == np.int64
    assert got.shape == (len(answers), max(map(len, answers), default=0))
    assert got.tolist() == reference_classes(answers, equivalence)


@pytest.mark.parametrize("width", [_COLUMN_SCAN_MAX_WIDTH - 1, _COLUMN_SCAN_MAX_WIDTH, _COLUMN_SCAN_MAX_WIDTH + 1, 300])
@pytest.mark.parametrize("distinct", [3, 1000])
def test_rows_on_both_sides_of_the_column_scan_limit_match_the_reference(width, distinct):
    rng = np.random.default_rng(width * distinct)
    pool = [f"answer {i}" for i in range(distinct)] + [None]
    answers = [[pool[i] for i in rng.integers(0, len(pool), size=rng.integers(0, width + 1))] for _ in range(40)]
    answers[0] = [pool[i] for i in rng.integers(0, len(pool), size=width)]  # at least one full row
    assert answer_classes(answers, equivalence="exact").tolist() == reference_classes(answers, "exact")


def test_lone_surrogates_are_answers_like_any_other():
    # not encodable as UTF-8 (an Arrow string array refuses them), still valid Python strings
    assert answer_classes([["\ud800", "\udfff", "\ud800", "\ud800\udc00"]], equivalence="exact").tolist() == [[0, 1, 0, 2]]


def test_nul_characters_are_part_of_the_answer():
    assert answer_classes([["a\x00", "a", "a\x00b", "a\x00", "\x00"]], equivalence="exact").tolist() == [[0, 1, 2, 0, 3]]


def test_empty_string_is_an_answer_not_a_missing_one():
    assert answer_classes([["", None, "", " "]], equivalence="exact").tolist() == [[0, -1, 0, 1]]


def test_exact_unicode_compares_code_points_and_normalized_compares_nfkc():
    composed, decomposed = "\u00e9", "e\u0301"
    assert answer_classes([[composed, decomposed]], equivalence="exact").tolist() == [[0, 1]]
    assert answer_classes([[composed, decomposed]], equivalence="normalized").tolist() == [[0, 0]]


def test_none_shares_no_class_with_the_string_none():
    assert answer_classes([[None, "None", None]], equivalence="exact").tolist() == [[-1, 0, -1]]
    assert answer_classes([[None, "None"]], equivalence="normalized").tolist() == [[-1, 0]]


def test_rows_of_only_missing_answers_and_empty_rows():
    got = answer_classes([[None, None], [], ["x"]], equivalence="exact")
    assert got.tolist() == [[-1, -1], [-1, -1], [0, -1]]


def test_no_problems_and_no_candidates_give_empty_arrays():
    assert answer_classes([], equivalence="exact").shape == (0, 0)
    assert answer_classes([[], []], equivalence="normalized").shape == (2, 0)


def test_not_a_number_answers_are_one_class_by_their_string():
    # two NaN objects are different dict keys (NaN != NaN) but the same string "nan"
    assert answer_classes([[float("nan"), float("nan"), "nan"]], equivalence="exact").tolist() == [[0, 0, 0]]


def test_bytes_answer_compares_by_its_repr_string():
    assert answer_classes([[b"a", "a", "b'a'"]], equivalence="exact").tolist() == [[0, 1, 0]]


def test_unhashable_answer_compares_by_its_string():
    assert answer_classes([[[1, 2], "[1, 2]", {"k": 1}]], equivalence="exact").tolist() == [[0, 0, 1]]


def test_maths_equivalence_reads_non_string_answers_as_their_strings():
    assert answer_classes([[1, "1", 2.0, "2", None]], equivalence="math").tolist() == [[0, 0, 1, 1, -1]]


def test_object_and_unicode_arrays_give_the_classes_of_their_lists():
    rows = [["a", None, "b", "a"], ["b", "b", "c", None]]
    want = answer_classes(rows, equivalence="exact").tolist()
    assert answer_classes(np.array(rows, dtype=object), equivalence="exact").tolist() == want
    texts = np.array([["a", "b", "a"], ["c", "c", "a"]])  # dtype <U1: no None possible
    assert answer_classes(texts, equivalence="exact").tolist() == [[0, 1, 0], [0, 0, 1]]


def test_non_contiguous_object_array_is_read_in_its_logical_order():
    grid = np.array([["a", "b"], ["b", "b"], ["c", "a"]], dtype=object).T  # a transposed view
    assert answer_classes(grid, equivalence="exact").tolist() == reference_classes(grid.tolist(), "exact")


def test_more_distinct_answers_than_the_surrogate_block_start():
    # the 55,296th distinct answer gets code U+D800, a lone surrogate, in the dict factorisation
    # (Arrow's would take these many distinct answers but refuses the lone surrogate at the end)
    texts = [str(i) for i in range(0xD800 + 3000)] + ["\udc00"]
    rows = [texts[i : i + 8] + texts[i : i + 2] for i in range(0, len(texts), 8)]
    assert answer_classes(rows, equivalence="exact").tolist() == reference_classes(rows, "exact")


@pytest.mark.slow
def test_more_distinct_answers_than_unicode_code_points():
    # past the last code point the dict factorisation can hand out (the lone surrogate at the end
    # keeps Arrow's out)
    texts = [str(i) for i in range(0x110000 + 10)] + ["\udc00"]
    rows = [texts[i : i + 4] + texts[i : i + 1] for i in range(0, len(texts), 4)]
    assert answer_classes(rows, equivalence="exact").tolist() == reference_classes(rows, "exact")


def test_renumber_classes_restarts_ids_by_first_appearance():
    assert renumber_classes(np.array([[5, -1, 5, 2], [-1, -1, 0, 0]])).tolist() == [[0, -1, 0, 1], [-1, -1, 0, 0]]


def test_renumber_classes_on_rows_wider_than_the_column_scan():
    rng = np.random.default_rng(1)
    classes = rng.integers(-1, 7, size=(5, _COLUMN_SCAN_MAX_WIDTH + 20))
    want = reference_classes([[None if c < 0 else c for c in row] for row in classes.tolist()], "exact")
    assert renumber_classes(classes).tolist() == want


def many_distinct_rows(problems: int = 8_000) -> list[list[str | None]]:
    """Enough answers, and enough of them distinct, for the Arrow factorisation: each problem its
    own five answers, ten candidates, one in ten missing."""
    rng = np.random.default_rng(3)
    picks = rng.integers(-1, 5, size=(problems, 10)).tolist()
    rows: list[list[str | None]] = [[None if k < 0 else f"{p}:{k}" for k in row] for p, row in enumerate(picks)]
    assert _many_distinct(rows)  # the path these tests are about
    return rows


def test_many_distinct_answers_match_the_reference():
    rows = many_distinct_rows()
    rows[5] = ["", "\x00", "", "é", "e\u0301", "\U0001f600", None]  # ragged, and not ASCII
    rows[-1] = ["Paris", "paris", " PARIS", "London"]  # one normalised class, in a later block of rows
    for equivalence in ("exact", "normalized"):
        assert answer_classes(rows, equivalence=equivalence).tolist() == reference_classes(rows, equivalence)


def test_many_distinct_answers_with_a_lone_surrogate_past_the_sample():
    rows = many_distinct_rows()
    rows[-1] = ["\ud800", "x", "\ud800"]  # no UTF-8 for it: Arrow refuses the whole input
    assert answer_classes(rows, equivalence="exact").tolist() == reference_classes(rows, "exact")


def test_many_distinct_answers_with_bytes_past_the_sample():
    rows = many_distinct_rows()
    rows[-1] = [b"x", "x", "b'x'"]  # Arrow would read b"x" as the text "x"
    got = answer_classes(rows, equivalence="exact")
    assert got[-1, :3].tolist() == [0, 1, 0]
    assert got.tolist() == reference_classes(rows, "exact")


def test_many_distinct_answers_with_numbers_past_the_sample():
    rows = many_distinct_rows()
    rows[-1] = [1, "1", 1.0, True]
    assert answer_classes(rows, equivalence="exact").tolist() == reference_classes(rows, "exact")


def test_many_distinct_answers_under_maths_equivalence():
    rows: list[list[str | None]] = [[str(p)] * 10 for p in range(8_000)]  # one class a row: few checks
    assert _many_distinct(rows)
    rows[7] = ["\\frac{1}{2}", "0.5", "2", None]
    got = answer_classes(rows, equivalence="math")
    assert got[7].tolist() == [0, 0, 1, -1] + [-1] * 6
    assert got[8].tolist() == [0] * 10


def test_many_distinct_answers_in_an_object_array():
    rows = many_distinct_rows()
    grid = np.array(rows, dtype=object)
    assert answer_classes(grid, equivalence="exact").tolist() == reference_classes(rows, "exact")


def test_answer_votes_count_each_class_most_voted_first_and_missing_answers_do_not_vote():
    from rewardlab.select.answers import answer_votes

    assert answer_votes(["3", "0.5", None, "\\frac{1}{2}", "3", "x"]) == [("3", 2), ("0.5", 2), ("x", 1)]
    assert answer_votes(["A", "a "], equivalence="normalized") == [("A", 2)]
    assert answer_votes(["A", "a "], equivalence="exact") == [("A", 1), ("a ", 1)]
    assert answer_votes([None, None]) == [] and answer_votes([]) == []
