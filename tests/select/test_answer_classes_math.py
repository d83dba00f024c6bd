"""`answer_classes(..., equivalence="math")`: the two passes (fast paths first, sympy for the rows
put aside) give the classes of the one-pass definition, and sympy's start overlaps the first
pass instead of stalling it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewardlab.verify.math as math_package
from rewardlab.errors import ConfigTypeError
from rewardlab.select import answer_classes
from rewardlab.verify.math import CheckOptions, check, worker


def one_pass_classes(answers: Sequence[Sequence[str | None]]) -> list[list[int]]:
    """The definition, one row at a time: each distinct answer, in order of first appearance,
    joins the first class whose first-seen answer (the reference) `check` finds it equal to."""
    width = max(map(len, answers), default=0)
    out = []
    for row in answers:
        reps: list[str] = []
        by_text: dict[str, int] = {}
        ids = []
        for answer in row:
            if answer is None:
                ids.append(-1)
                continue
            if answer not in by_text:
                target = next((j for j, rep in enumerate(reps) if check(rep, answer).equivalent), None)
                if target is None:
                    reps.append(answer)
                    target = len(reps) - 1
                by_text[answer] = target
            ids.append(by_text[answer])
        out.append(ids + [-1] * (width - len(ids)))
    return out


# fast-path answers (numbers, text, tuples) and answers only sympy decides (expressions)
ANSWERS = ["42", "42.0", "\\frac{1}{2}", "0.5", "-3", "Paris", "(1, 2)", "x + 1", "1 + x", "\\sqrt{2}",
           "2^{1/2}", "1.414", "2\\sqrt{2}", "\\sqrt{8}", "x^2 - 1", "(x-1)(x+1)", None]  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(ANSWERS), min_size=1, max_size=6), min_size=1, max_size=8))
def test_math_classes_equal_the_one_pass_definition(answers):
    assert answer_classes(answers, equivalence="math").tolist() == one_pass_classes(answers)


@pytest.fixture
def calls(monkeypatch) -> Iterator[list[tuple[str, str, bool, int]]]:
    """A fresh process-wide sympy pool, and every `check` call answer_classes makes:
    (reference, candidate, allow_symbolic, workers launched so far)."""
    monkeypatch.setattr(worker, "_DEFAULT", None)
    seen: list[tuple[str, str, bool, int]] = []

    def recording_check(reference, candidate, options=None, **kwargs):
        seen.append((reference, candidate, options.allow_symbolic, worker.default_pool().launched))
        return check(reference, candidate, options, **kwargs)

    monkeypatch.setattr(math_package, "check", recording_check)
    yield seen
    worker.default_pool().close()


def test_rows_the_fast_paths_decide_are_merged_while_sympy_starts(calls, monkeypatch):
    # the worker counts as still starting throughout the first pass, however fast this machine
    # is (it does start, and serves the second pass)
    monkeypatch.setattr(worker.SympyPool, "has_ready_worker", lambda self: False)
    answers = [["\\sqrt{8}", "2\\sqrt{2}"], ["1", "1.0"], ["\\frac{1}{2}", "0.5"], ["Paris", "\\text{Paris}"]]
    assert answer_classes(answers, equivalence="math").tolist() == [[0, 0]] * 4
    first_with_sympy = next(i for i, call in enumerate(calls) if call[2])
    # row 0 needs sympy: the worker is launched there and row 0 is put aside; rows 1-3 are
    # checked (with the worker starting) before sympy is asked anything
    assert calls[0] == ("\\sqrt{8}", "2\\sqrt{2}", False, 0)
    assert [c[:2] for c in calls[1:4]] == [("1", "1.0"), ("\\frac{1}{2}", "0.5"), ("Paris", "\\text{Paris}")]
    assert first_with_sympy > 3
    assert all(launched == 1 for *_, launched in calls[1:])
    assert calls[first_with_sympy] == ("\\sqrt{8}", "2\\sqrt{2}", True, 1)
    assert worker.default_pool().launched == 1


def test_with_a_worker_ready_no_row_is_put_aside(calls):
    worker.default_pool().warm_up()
    answers = [["\\sqrt{8}", "2\\sqrt{2}"], ["1", "1.0"]]
    assert answer_classes(answers, equivalence="math").tolist() == [[0, 0], [0, 0]]
    assert [call[:3] for call in calls] == [("\\sqrt{8}", "2\\sqrt{2}", False), ("\\sqrt{8}", "2\\sqrt{2}", True), ("1", "1.0", False)]


def test_no_sympy_worker_when_the_fast_paths_decide_every_pair(calls):
    answers = [["1", "1.0", "2"], ["\\frac{1}{2}", "0.5", "-3"], ["(1,2)", "(1, 2)"], ["Paris", "\\text{paris}"]]
    assert answer_classes(answers, equivalence="math").tolist() == [[0, 0, 1], [0, 0, 1], [0, 0, -1], [0, 0, -1]]
    assert not any(allow for _, _, allow, _ in calls)
    assert worker.default_pool().launched == 0


def test_options_without_sympy_leave_undecided_pairs_apart_and_launch_nothing(calls):
    classes = answer_classes([["\\sqrt{8}", "2\\sqrt{2}", "8^{1/2}"]], equivalence="math", options=CheckOptions(allow_symbolic=False))
    assert classes.tolist() == [[0, 1, 2]]
    assert worker.default_pool().launched == 0


def test_options_of_the_wrong_type_are_a_type_error_naming_it():
    with pytest.raises(ConfigTypeError, match="CheckOptions, got dict"):
        answer_classes([["1", "2"]], equivalence="math", options={"timeout": 1})
